import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describeFailure, type EngramClient, type OutputOf, type Result } from '@engram/contract'
import { Engram } from '@engram/sdk'
import { Command, InvalidArgumentError, Option } from 'commander'
import { appDirectory, entryPoint, progress, runChild } from './child.ts'
import { CliError } from './errors.ts'
import { formationSettingsOf } from './formation-settings.ts'
import { addGraphCommands } from './graph.ts'
import { addMaintenanceCommands } from './maintenance.ts'
import { addRunCommands } from './runs.ts'

interface GlobalOptions {
  url: string
  apiKey?: string
  json?: boolean
}

function positiveInt(value: string): number {
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('must be a whole number')
  return parsed
}

export function buildProgram(): Command {
  const program = new Command()
    .name('engram')
    .description('Engram from a terminal: operator work, quick looks at memory, the servers.')
    .addOption(new Option('--url <url>', 'the Engram API').env('ENGRAM_URL').default('http://localhost:4000'))
    .addOption(
      new Option('--api-key <key>', 'an agent key, or the admin key for operator commands').env(
        'ENGRAM_API_KEY',
      ),
    )
    .option('--json', 'print JSON for scripts')
    .showHelpAfterError()
    // Usage errors come back to main() as exceptions (inherited by every subcommand added below).
    .exitOverride()

  const globals = () => program.opts<GlobalOptions>()
  const client = (): EngramClient => {
    const { url, apiKey } = globals()
    if (!apiKey) throw new CliError('no key: pass --api-key KEY or set ENGRAM_API_KEY')
    return Engram.connect({ url, apiKey })
  }
  /** Runs one call and prints its data (JSON, or the human form), or fails with one line. */
  async function run<T>(call: (engram: EngramClient) => Promise<Result<T>>, human: (data: T) => string) {
    const engram = client()
    try {
      const result = await call(engram)
      if (!result.ok) throw new CliError(describeFailure(result.error))
      process.stdout.write(`${globals().json ? JSON.stringify(result.data, null, 2) : human(result.data)}\n`)
      return result.data
    } finally {
      await engram.close()
    }
  }

  program
    .command('export')
    .description("write an agent's memory (memories, knowledge, conversations, vectors) as one JSON document")
    .option('--agent <id>', 'the agent (with the admin key)')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .option('--snapshots', "include the optimizer's run history")
    .action(async (options: { agent?: string; out?: string; snapshots?: boolean }) => {
      const engram = client()
      const bar = progress('exporting')
      try {
        const result = await engram.exportMemory({
          agentId: options.agent,
          includeSnapshots: options.snapshots,
        })
        bar.done()
        if (!result.ok) throw new CliError(describeFailure(result.error))
        const text = JSON.stringify(result.data.document)
        if (!options.out) return void process.stdout.write(`${text}\n`)
        fs.writeFileSync(options.out, text)
        const { sessions, messages, memories, knowledge, vectors } = result.data
        const summary = { file: options.out, sessions, messages, memories, knowledge, vectors }
        process.stdout.write(
          globals().json
            ? `${JSON.stringify(summary, null, 2)}\n`
            : `exported ${memories} memories, ${messages} messages in ${sessions} conversations, ${knowledge} facts, ${vectors} vectors to ${options.out}\n`,
        )
      } finally {
        bar.done()
        await engram.close()
      }
    })

  program
    .command('import <file>')
    .description('import an exported document into an agent, all of it or nothing')
    .option('--agent <id>', 'the agent (with the admin key)')
    .addOption(
      new Option('--mode <mode>', 'replace clears the agent first; merge adds')
        .choices(['replace', 'merge'])
        .default('replace'),
    )
    .action(async (file: string, options: { agent?: string; mode: 'replace' | 'merge' }) => {
      let document: Record<string, unknown>
      try {
        document = JSON.parse(fs.readFileSync(file, 'utf8'))
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as Error).message}`)
      }
      const bar = progress(`importing ${path.basename(file)}`)
      try {
        await run(
          (engram) =>
            engram.importMemory({
              agentId: options.agent,
              document,
              mode: options.mode.toUpperCase() as 'REPLACE' | 'MERGE',
            }),
          (r) =>
            `imported ${r.memories} memories, ${r.messages} messages in ${r.sessions} conversations, ${r.knowledge} facts, ${r.vectors} vectors${r.reembedded ? ' (re-embedded)' : ''}`,
        )
      } finally {
        bar.done()
      }
    })

  program
    .command('backup')
    .description('a consistent copy of the whole database, taken while it serves (admin); --list shows them')
    .option('--list', 'list the backups instead')
    .action(async (options: { list?: boolean }) => {
      if (options.list)
        return void (await run(
          (engram) => engram.backups(),
          (list) => list.map((b) => `${b.name}\t${b.bytes} bytes\t${b.createdAt}`).join('\n') || 'no backups',
        ))
      await run(
        (engram) => engram.backupDatabase(),
        (b) => `backup ${b.name} (${b.bytes} bytes)`,
      )
    })

  program
    .command('restore <name>')
    .description('replace all data with a backup (admin); API keys are kept')
    .action(async (name: string) => {
      await run(
        (engram) => engram.restoreDatabase({ name }),
        (r) => `restored ${r.name} (${r.tables} tables)`,
      )
    })

  const keys = program.command('keys').description('API keys (admin)')
  keys
    .command('create <agent>')
    .description('a new key for an agent (created if new); the secret is printed this once')
    .option('--label <label>', 'a name to tell keys apart')
    .action(async (agent: string, options: { label?: string }) => {
      await run(
        (engram) => engram.createApiKey({ agentId: agent, label: options.label }),
        (created) => created.key,
      )
    })
  keys
    .command('list')
    .description('keys as stored: prefix, label, agent, revoked or not')
    .option('--agent <id>', 'only this agent')
    .action(async (options: { agent?: string }) => {
      await run(
        (engram) => engram.apiKeys({ agentId: options.agent }),
        (list) =>
          list
            .map(
              (k) =>
                `${k.id}\t${k.keyPrefix}…\t${k.role}\t${k.agentId ?? '-'}\t${k.label}${k.revokedAt ? '\trevoked' : ''}`,
            )
            .join('\n') || 'no keys',
      )
    })
  keys
    .command('revoke <id>')
    .description('the key stops working at once')
    .action(async (id: string) => {
      await run(
        (engram) => engram.revokeApiKey({ id }),
        (k) => `revoked ${k.id} (${k.keyPrefix}…)`,
      )
    })

  program
    .command('agents')
    .description('agents: all of them with the admin key, its own with an agent key')
    .action(async () => {
      await run(
        (engram) => engram.agents(),
        (list) => list.map((a) => `${a.id}\t${a.name}\t${a.createdAt}`).join('\n') || 'no agents',
      )
    })

  program
    .command('search <query>')
    .description("search an agent's memory, best hits first")
    .option('--agent <id>', 'the agent (with the admin key)')
    .addOption(
      new Option('--scope <scope...>', 'what to search')
        .choices(['messages', 'summaries', 'memories', 'knowledge', 'graph'])
        .default(['messages', 'memories']),
    )
    .option('--limit <n>', 'at most this many hits', positiveInt)
    .action(async (query: string, options: { agent?: string; scope: string[]; limit?: number }) => {
      await run(
        (engram) =>
          engram.search({
            agentId: options.agent,
            query,
            limit: options.limit,
            scopes: options.scope.map((s) => s.toUpperCase()) as ('MESSAGES' | 'MEMORIES')[],
          }),
        (result) =>
          result.hits
            .map(
              (h) =>
                `${h.rank}. [${h.scope.toLowerCase()}] ${h.score.toFixed(3)}  ${h.text.replace(/\s+/g, ' ')}`,
            )
            .join('\n') || 'no hits',
      )
    })

  program
    .command('context [query]')
    .description('the memory block an agent would put in its prompt')
    .option('--agent <id>', 'the agent (with the admin key)')
    .option('--conversation <id>', "add this conversation's recent turns")
    .option('--budget <tokens>', 'token budget', positiveInt)
    .action(
      async (
        query: string | undefined,
        options: { agent?: string; conversation?: string; budget?: number },
      ) => {
        await run(
          (engram) =>
            engram.memoryContext({
              agentId: options.agent,
              query,
              conversationId: options.conversation,
              budgetTokens: options.budget,
            }),
          (context) => `${context.text}\n(${context.totalTokens} of ${context.budgetTokens} tokens)`,
        )
      },
    )

  program
    .command('sync')
    .description('form memories now from every conversation turn not yet extracted')
    .option('--agent <id>', 'the agent (with the admin key)')
    .action(async (options: { agent?: string }) => {
      await run(
        (engram) => engram.syncMemory({ agentId: options.agent }),
        (formed) =>
          [
            `${formed.turns} turns of ${formed.conversations} conversations: ${formed.stored.length} memories formed, ${formed.duplicates} already known, ${formed.superseded} superseded, ${formed.rejected} refused`,
            ...formed.stored.map(
              (m) => `  ${m.id}	${m.category.toLowerCase()}	${m.content.replace(/\s+/g, ' ')}`,
            ),
          ].join('\n'),
      )
    })

  program
    .command('summaries')
    .description("the automatic summaries of the agent's conversations, newest first")
    .option('--agent <id>', 'the agent (with the admin key)')
    .option('--conversation <id>', 'of one conversation')
    .option('--limit <n>', 'at most this many (1-100)', positiveInt)
    .option('--id <id>', 'only the summary of this id')
    .option('--now <conversation>', "summarise this conversation's turns not yet summarised first")
    .addOption(
      new Option('--strategy <strategy>', 'with --now: the strategy (else the agent setting)').choices([
        'simple',
        'hierarchical',
        'extractive',
        'map-reduce',
      ]),
    )
    .action(
      async (options: {
        agent?: string
        conversation?: string
        limit?: number
        id?: string
        now?: string
        strategy?: string
      }) => {
        await run(
          async (engram) => {
            if (options.id) {
              const one = await engram.summary({ agentId: options.agent, id: options.id })
              return one.ok ? { ok: true, data: [one.data] } : one
            }
            if (options.now) {
              const made = await engram.summarize({
                agentId: options.agent,
                conversationId: options.now,
                strategy: options.strategy
                  ? (options.strategy.toUpperCase().replace('-', '_') as 'SIMPLE')
                  : undefined,
              })
              if (!made.ok) return made
            }
            return engram.summaries({
              agentId: options.agent,
              conversationId: options.conversation,
              limit: options.limit,
            })
          },
          (summaries) =>
            summaries.length === 0
              ? 'no summaries'
              : summaries
                  .map(
                    (s) =>
                      `${s.createdAt}  ${s.conversationId}  ${s.strategy.toLowerCase().replace('_', '-')} · ${s.messageCount} messages\n  ${s.content.replace(/\n+/g, '\n  ')}`,
                  )
                  .join('\n'),
        )
      },
    )

  program
    .command('profile')
    .description(
      "the generated profile of the agent's user: the current version, its versions, or a diff of two",
    )
    .option('--agent <id>', 'the agent (with the admin key)')
    .option('--user <id>', 'the user (else the memories that name no user)')
    .option('--versions', 'list every version, newest first')
    .option('--diff <versions...>', 'what changed from version A to version B (two numbers)')
    .option('--regenerate', 'build a new version now first')
    .action(
      async (options: {
        agent?: string
        user?: string
        versions?: boolean
        diff?: string[]
        regenerate?: boolean
      }) => {
        const who = { agentId: options.agent, userId: options.user }
        if (options.regenerate) {
          await run(
            (engram) => engram.regenerateProfile(who),
            (v) => `version ${v.version} (${v.writer.toLowerCase()}, ${v.tokenCount} tokens)\n${v.content}`,
          )
          return
        }
        if (options.diff) {
          const [from, to] = options.diff.map((n) => positiveInt(n))
          if (options.diff.length !== 2 || from === undefined || to === undefined)
            throw new CliError('--diff takes two version numbers: --diff 1 2')
          await run(
            (engram) => engram.profileDiff({ ...who, from, to }),
            (d) =>
              [
                `version ${d.from} → ${d.to}: ${d.added.length} added, ${d.removed.length} removed, ${d.unchanged} unchanged`,
                ...d.removed.map((line) => `- ${line}`),
                ...d.added.map((line) => `+ ${line}`),
              ].join('\n'),
          )
          return
        }
        if (options.versions) {
          await run(
            (engram) => engram.profileVersions({ ...who, limit: 100 }),
            (page) =>
              page.versions.length === 0
                ? 'no profile yet'
                : page.versions
                    .map(
                      (v) =>
                        `${v.version}\t${v.createdAt}\t${v.trigger.toLowerCase()}\t${v.writer.toLowerCase()}\t${v.tokenCount} tokens`,
                    )
                    .join('\n'),
          )
          return
        }
        await run(
          (engram) => engram.userProfile(who),
          (p) => (p.current ? `version ${p.current.version}\n${p.current.content}` : 'no profile yet'),
        )
      },
    )

  program
    .command('settings')
    .description("the agent's memory-formation settings; --set key=value changes some (validated together)")
    .option('--agent <id>', 'the agent (with the admin key)')
    .option(
      '--set <key=value>',
      "e.g. enabled=false, extraction.extractor=llm, extraction.model=llama3.1:8b (null: the server's), summaries.strategy=map-reduce, summaries.summaryDebounceSeconds=120, profile.profileMaxTokens=1000 (repeatable)",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action(async (options: { agent?: string; set?: string[] }) => {
      const human = (s: {
        enabled: boolean
        extraction: { extractor: string; model: string | null }
        summaries: Record<string, unknown>
        profile: Record<string, unknown>
      }) =>
        [
          `enabled=${s.enabled}`,
          `extraction.extractor=${s.extraction.extractor.toLowerCase()}`,
          // null: the server's ENGRAM_LLM_MODEL.
          `extraction.model=${s.extraction.model ?? 'null'}`,
          ...Object.entries(s.summaries).map(
            ([key, value]) =>
              `summaries.${key}=${typeof value === 'string' ? value.toLowerCase().replace('_', '-') : value}`,
          ),
          ...Object.entries(s.profile).map(([key, value]) => `profile.${key}=${value}`),
        ].join('\n')
      if (!options.set?.length) {
        await run((engram) => engram.memoryFormationSettings({ agentId: options.agent }), human)
        return
      }
      await run(
        (engram) =>
          engram.updateMemoryFormationSettings({
            agentId: options.agent,
            settings: formationSettingsOf(options.set ?? []),
          }),
        human,
      )
    })

  program
    .command('activity')
    .description(
      "memory formation's processing statistics: calls, failures, average duration per kind of work, queued jobs, extractor, circuit",
    )
    .option('--agent <id>', 'the agent (with the admin key)')
    .option('--watch', 'then print each unit of work as it ends, until interrupted')
    .option('--events <n>', 'with --watch: stop after this many', positiveInt)
    .action(async (options: { agent?: string; watch?: boolean; events?: number }) => {
      const human = (a: OutputOf<'formationActivity'>) =>
        [
          `extractor ${a.extractor.toLowerCase()} · circuit ${a.circuitState?.toLowerCase().replace('_', '-') ?? 'none (no model)'}`,
          ...a.work.map((w) => {
            const queue = a.queue.find((q) => q.kind === w.kind)
            const failure = w.lastFailure ? `; last failure ${w.lastFailure.at}: ${w.lastFailure.reason}` : ''
            return `${w.kind.toLowerCase().padEnd(10)} ${w.calls} calls, ${w.successes} ok, ${w.failures} failed, avg ${Math.round(w.averageDurationMs)} ms · queued ${queue?.pending ?? 0}, running ${queue?.running ?? 0}, dead ${queue?.failed ?? 0}${failure}`
          }),
        ].join('\n')
      if (!options.watch) {
        await run((engram) => engram.formationActivity({ agentId: options.agent }), human)
        return
      }
      const engram = client()
      // Subscribed before the counters are read, so no unit of work falls between the two.
      const events = engram.formationActivityEvents({ agentId: options.agent })
      const stop = () => void events.close()
      process.once('SIGINT', stop)
      try {
        const now = await engram.formationActivity({ agentId: options.agent })
        if (!now.ok) throw new CliError(describeFailure(now.error))
        const json = globals().json
        process.stdout.write(`${json ? JSON.stringify(now.data) : human(now.data)}\n`)
        let seen = 0
        for await (const event of events) {
          if (!event.ok) throw new CliError(describeFailure(event.error))
          const e = event.data
          process.stdout.write(
            `${
              json
                ? JSON.stringify(e)
                : `${e.at}  ${e.agentId}  ${e.kind.toLowerCase()} ${e.outcome.toLowerCase()} in ${Math.round(e.durationMs)} ms · ${e.queueDepth} queued${e.reason ? ` · ${e.reason}` : ''}`
            }\n`,
          )
          if (options.events !== undefined && ++seen >= options.events) break
        }
      } finally {
        process.off('SIGINT', stop)
        await events.close()
        await engram.close()
      }
    })

  program
    .command('classify <text>')
    .description('how the memory router routes a turn: tier, category, type, importance and why')
    .addOption(new Option('--role <role>', 'who says it').choices(['user', 'assistant', 'system', 'tool']))
    .action(async (text: string, options: { role?: string }) => {
      await run(
        (engram) =>
          engram.classify({
            content: text,
            role: options.role?.toUpperCase() as 'USER' | 'ASSISTANT' | 'SYSTEM' | 'TOOL' | undefined,
          }),
        (c) =>
          `${c.tier.toLowerCase()} · ${c.category.toLowerCase()} · ${c.memoryType.toLowerCase()} · importance ${c.importance.toFixed(2)}\n${c.reasons.map((r) => `  - ${r}`).join('\n')}`,
      )
    })

  addGraphCommands(program, run)
  addRunCommands(program, run)
  addMaintenanceCommands(program, run)

  program
    .command('eval')
    .description('the retrieval quality harness (apps/api/bench/quality.ts) on a LoCoMo-format dataset')
    .requiredOption('--dataset <path>', 'the dataset file')
    .option('--quick', 'one conversation only')
    .action(async (options: { dataset: string; quick?: boolean }) => {
      const dataset = path.resolve(options.dataset)
      if (!fs.existsSync(dataset)) throw new CliError(`no dataset at ${dataset}`)
      const apiDir = appDirectory('@engram/api/package.json')
      const args = [
        path.join(apiDir, 'bench', 'quality.ts'),
        '--dataset',
        dataset,
        ...(options.quick ? ['--quick'] : []),
      ]
      if (!globals().json) return void (await runChild('evaluating', apiDir, args, {}))
      // --json: the harness's own report (title, machine, rows) on stdout, its progress on stderr.
      const results = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-eval-'))
      try {
        await runChild('evaluating', apiDir, args, { ENGRAM_BENCH_RESULTS_DIR: results }, { quiet: true })
        const report = fs.readFileSync(path.join(results, 'quality.json'), 'utf8')
        process.stdout.write(report.endsWith('\n') ? report : `${report}\n`)
      } finally {
        fs.rmSync(results, { recursive: true, force: true })
      }
    })

  program
    .command('serve')
    .description('start the API (GraphQL, graphql-ws and the REST status endpoint)')
    .option('--port <port>', 'port (env API_PORT, default 4000)', positiveInt)
    .option('--database <url>', 'file: URL of the SQLite database (env DATABASE_URL)')
    .action(async (options: { port?: number; database?: string }) => {
      const apiDir = appDirectory('@engram/api/package.json')
      await runChild(null, apiDir, [path.join(apiDir, 'src', 'server.ts')], {
        ...(options.port === undefined ? {} : { API_PORT: String(options.port) }),
        ...(options.database ? { DATABASE_URL: options.database } : {}),
      })
    })

  program
    .command('mcp')
    .description(
      'start the MCP server: for the agent of --api-key (remote), or on a database file (--db, embedded)',
    )
    .addOption(
      new Option('--transport <transport>', 'stdio or http').choices(['stdio', 'http']).default('stdio'),
    )
    .option('--port <port>', 'for http (default 4100)', positiveInt)
    .addOption(new Option('--db <file>', 'embedded: the SQLite file (no server)').env('ENGRAM_DB'))
    .option('--agent <id>', 'embedded: the agent every tool acts for (default "default")')
    .action(async (options: { transport: string; port?: number; db?: string; agent?: string }) => {
      const mcpDir = path.dirname(path.dirname(entryPoint('@engram/mcp')))
      const args = [path.join(mcpDir, 'src', 'main.ts'), '--transport', options.transport]
      if (options.port !== undefined) args.push('--port', String(options.port))
      if (options.db) {
        args.push('--db', path.resolve(options.db), ...(options.agent ? ['--agent', options.agent] : []))
        return void (await runChild(null, mcpDir, args, {}))
      }
      const { url, apiKey } = globals()
      if (!apiKey) throw new CliError('no key: pass --api-key KEY or set ENGRAM_API_KEY (or --db FILE)')
      args.push('--url', url)
      // The key goes by environment, not argv, so it does not show in a process list.
      await runChild(null, mcpDir, args, { ENGRAM_API_KEY: apiKey })
    })

  return program
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram()
  try {
    await program.parseAsync(argv, { from: 'user' })
    return 0
  } catch (error) {
    const code = (error as { code?: string }).code
    // commander has already printed its own message (usage errors, --help, --version).
    if (typeof code === 'string' && code.startsWith('commander.'))
      return code === 'commander.helpDisplayed' || code === 'commander.version' ? 0 : 2
    process.stderr.write(`engram: ${error instanceof CliError ? error.message : String(error)}\n`)
    return 1
  }
}

process.exitCode = await main(process.argv.slice(2))
