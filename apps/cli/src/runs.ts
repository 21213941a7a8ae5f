import path from 'node:path'
import { describeFailure, EngramError, type OutputOf } from '@engram/contract'
import { readAgentMemoryDirectory, writeAgentMemoryDirectory } from '@engram/sdk/node'
import { type Command, InvalidArgumentError, Option } from 'commander'
import { progress } from './child.ts'
import { CliError } from './errors.ts'
import type { RunCall } from './graph.ts'

type Run = OutputOf<'startRun'>

const STATUSES = ['running', 'completed', 'failed'] as const
const SECTIONS = [
  'session-history',
  'reference-trajectory',
  'app-knowledge',
  'known-selectors',
  'hints',
] as const
type SectionName = 'SESSION_HISTORY' | 'REFERENCE_TRAJECTORY' | 'APP_KNOWLEDGE' | 'KNOWN_SELECTORS' | 'HINTS'

function whole(value: string): number {
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('must be a whole number')
  return parsed
}

/** A directory read or written: its typed refusal (a limit, a path leaving it) or the OS's error, on one line. */
async function onDisk<T>(what: string, act: () => Promise<T>): Promise<T> {
  try {
    return await act()
  } catch (error) {
    throw new CliError(
      `${what}: ${error instanceof EngramError ? describeFailure(error.failure) : (error as Error).message}`,
    )
  }
}

/** "run_1_abc  completed  shop.example.com  Search for reviews  (8 turns)": one line a run. */
export function runLine(r: Run): string {
  const status = r.status === 'FAILED' && r.reason ? `failed: ${r.reason}` : r.status.toLowerCase()
  const from = r.parentRunId ? `\t${r.kind.toLowerCase()} of ${r.parentRunId}` : ''
  return `${r.id}\t${status}\t${r.domain}\t${r.goal}\t(${r.turnCount} turns)${from}`
}

function runDetails(r: Run): string {
  const lines: [string, string | number | null][] = [
    ['run', r.id],
    ['status', r.status.toLowerCase()],
    ['kind', r.kind.toLowerCase()],
    ['parent', r.parentRunId],
    ['session', r.sessionId],
    ['goal', r.goal],
    ['domain', r.domain],
    ['memory', r.scope === null ? 'off' : `${r.isolation.toLowerCase()} (scope ${r.scope})`],
    ['start url', r.startUrl],
    ['current url', r.currentUrl],
    ['final url', r.finalUrl],
    ['turns', r.turnCount],
    ['summary', r.summary],
    ['result', r.result],
    ['reason', r.reason],
    ['model', r.model],
    ['started', r.startedAt],
    ['ended', r.completedAt],
    ['duration', r.durationMs === null ? null : `${r.durationMs} ms`],
  ]
  return lines
    .filter(([, value]) => value !== null && value !== '')
    .map(([name, value]) => `${name.padEnd(12)}${value}`)
    .join('\n')
}

/**
 * `engram runs ...`: trajectory memory's run registry (issue 16) for orchestrators and operators:
 * list, show, lineage, the run context an agent would get, deletion. Agent keys see their own
 * agent's runs; the admin key names the agent with --agent.
 */
export function addRunCommands(program: Command, run: RunCall): Command {
  const runs = program
    .command('runs')
    .description(
      "the agent's runs and trajectory memory: list, show, lineage, context, delete; import and export .agent-memory directories",
    )
  const agentOption = () => new Option('--agent <id>', 'the agent (with the admin key)')

  runs
    .command('list')
    .description('runs, most recently updated first')
    .addOption(agentOption())
    .option('--domain <host>', 'on this domain (a host or a URL)')
    .addOption(new Option('--status <status>', 'only runs in this state').choices(STATUSES))
    .option('--session-id <id>', 'of this run session')
    .option('--parent <runId>', 'resumed or forked from this run')
    .option('--scope <scope>', 'using this memory scope')
    .option('--limit <n>', 'at most this many (1-200)', whole)
    .option('--after <cursor>', 'the next page (the cursor a previous page printed)')
    .action(
      async (o: {
        agent?: string
        domain?: string
        status?: (typeof STATUSES)[number]
        sessionId?: string
        parent?: string
        scope?: string
        limit?: number
        after?: string
      }) => {
        await run(
          (engram) =>
            engram.runs({
              agentId: o.agent,
              domain: o.domain,
              status: o.status?.toUpperCase() as Run['status'] | undefined,
              sessionId: o.sessionId,
              parentRunId: o.parent,
              scope: o.scope,
              limit: o.limit,
              after: o.after,
            }),
          (page) =>
            [
              ...page.runs.map(runLine),
              ...(page.runs.length === 0 ? ['no runs'] : []),
              ...(page.nextCursor ? [`(more: --after ${page.nextCursor})`] : []),
            ].join('\n'),
        )
      },
    )

  runs
    .command('show <runId>')
    .description('one run: status, where it is or ended, how it went')
    .addOption(agentOption())
    .action(async (runId: string, o: { agent?: string }) => {
      await run(
        (engram) => engram.run({ agentId: o.agent, runId }),
        (r) => (r ? runDetails(r) : `no run ${runId}`),
      )
    })

  runs
    .command('lineage <runId>')
    .description('the tree of resumes and forks the run belongs to, from its oldest stored ancestor')
    .addOption(agentOption())
    .option('--limit <n>', 'at most this many runs (1-500)', whole)
    .action(async (runId: string, o: { agent?: string; limit?: number }) => {
      await run(
        (engram) => engram.runLineage({ agentId: o.agent, runId, limit: o.limit }),
        (l) =>
          [
            ...(l.parentMissing ? ['(the root’s parent was deleted)'] : []),
            ...l.runs.map(
              (n) => `${'  '.repeat(n.depth)}${runLine(n.run)}${l.ancestry.at(-1) === n.run.id ? '  ←' : ''}`,
            ),
            ...(l.truncated ? ['(cut by --limit)'] : []),
          ].join('\n'),
      )
    })

  runs
    .command('context [runId]')
    .description(
      "what memory gives a run's next decision: session history, a reference trajectory, app knowledge, known selectors, hints (or --domain and --goal without a run)",
    )
    .addOption(agentOption())
    .option('--domain <host>', 'the domain (without a run)')
    .option('--goal <text>', 'the goal (without a run)')
    .option('--scope <scope>', 'the memory scope (without a run; default "default")')
    .option('--budget <tokens>', 'the token budget (default 2000)', whole)
    .addOption(new Option('--section <section...>', 'only these sections').choices(SECTIONS))
    .option('--trace-scoring', 'rank references by similarity, recency, speed and verification')
    .option('--report', 'after the text, what each section took and what was cut')
    .action(
      async (
        runId: string | undefined,
        o: {
          agent?: string
          domain?: string
          goal?: string
          scope?: string
          budget?: number
          section?: string[]
          traceScoring?: boolean
          report?: boolean
        },
      ) => {
        await run(
          (engram) =>
            engram.runContext({
              agentId: o.agent,
              runId,
              domain: o.domain,
              goal: o.goal,
              scope: o.scope,
              budgetTokens: o.budget,
              sections: o.section?.map((s) => s.toUpperCase().replaceAll('-', '_') as SectionName),
              traceScoring: o.traceScoring,
            }),
          (c) => {
            const text = c.text || '(no memory for this domain yet)'
            if (!o.report) return text
            const report = c.sections.map(
              (s) =>
                `${s.section.toLowerCase().replaceAll('_', '-')}\t${s.included ? `${s.tokens}/${s.fullTokens} tokens` : 'dropped'}\t${s.items}/${s.availableItems} items${s.truncated ? '\ttrimmed' : ''}`,
            )
            return `${text}\n\n${c.totalTokens}/${c.budgetTokens} tokens\n${report.join('\n')}`
          },
        )
      },
    )

  runs
    .command('delete <runId>')
    .description(
      'delete a run and what it left in memory: its trajectory, its session history entry, its confirmations of facts and selectors',
    )
    .addOption(agentOption())
    .action(async (runId: string, o: { agent?: string }) => {
      await run(
        (engram) => engram.deleteRun({ agentId: o.agent, runId }),
        (d) =>
          // An unknown run is NOT_FOUND (a failure line), so an answer always deleted one.
          `deleted run ${runId}: ${d.trajectories} trajectories, ${d.runSessions} session entries, ${d.facts} facts, ${d.selectors} selectors`,
      )
    })

  runs
    .command('import <dir>')
    .description(
      'import a .agent-memory directory (spec 004: domains/<domain>/{knowledge,selectors}.json, trajectories, agent-runs, hints.json) into a memory scope',
    )
    .addOption(agentOption())
    .option('--scope <scope>', 'the memory scope it goes into (default "default")')
    .action(async (dir: string, o: { agent?: string; scope?: string }) => {
      const files = await onDisk(`cannot read ${dir}`, () => readAgentMemoryDirectory(dir))
      const bar = progress(`importing ${files.length} files from ${path.basename(path.resolve(dir))}`)
      try {
        await run(
          (engram) => engram.importAgentMemory({ agentId: o.agent, scope: o.scope, files }),
          (r) =>
            [
              `imported into scope ${r.scope}: ${r.runs} runs, ${r.trajectories} trajectories, ${r.runSessions} session entries, ${r.facts} facts, ${r.selectors} selectors, ${r.hints} hints`,
              ...r.skipped.map((s) => `skipped ${s.path}: ${s.reason}`),
            ].join('\n'),
        )
      } finally {
        bar.done()
      }
    })

  runs
    .command('export <dir>')
    .description("write a memory scope as a .agent-memory directory in spec 004's formats")
    .addOption(agentOption())
    .option('--scope <scope>', 'the memory scope (default "default")')
    .action(async (dir: string, o: { agent?: string; scope?: string }) => {
      await run(
        async (engram) => {
          const exported = await engram.exportAgentMemory({ agentId: o.agent, scope: o.scope })
          if (!exported.ok) return exported
          // Written before anything is printed: a path the server sent that would leave the
          // directory is refused by the helper, and the command fails instead of reporting success.
          await onDisk(`cannot write ${dir}`, () => writeAgentMemoryDirectory(dir, exported.data.files))
          return {
            ok: true as const,
            data: {
              scope: exported.data.scope,
              files: exported.data.files.length,
              directory: path.resolve(dir),
            },
          }
        },
        (e) => `exported scope ${e.scope}: ${e.files} files to ${e.directory}`,
      )
    })

  return runs
}
