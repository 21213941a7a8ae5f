import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONTRACT_LIMITS } from '@engram/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, startServer } from '../../../packages/sdk/test/server.ts'

const appDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const bin = path.join(appDir, 'dist', 'engram.js')

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

describe('the engram command (built, as a child process, against a real server)', () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let work: string

  /** Async: the server answering it runs in this process. */
  const engram = (args: string[], key: string | null = ADMIN_KEY, cwd = work) =>
    new Promise<Run>((resolve) => {
      const env: Record<string, string | undefined> = { ...process.env, ENGRAM_URL: server.url }
      delete env.ENGRAM_API_KEY
      if (key) env.ENGRAM_API_KEY = key
      const child = spawn(process.execPath, [bin, ...args], { cwd, env })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c) => (stdout += c))
      child.stderr.on('data', (c) => (stderr += c))
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })

  beforeAll(async () => {
    server = await startServer()
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-cli-'))
  }, 120_000)
  afterAll(async () => {
    await server?.close()
    if (work) fs.rmSync(work, { recursive: true, force: true })
  })

  it('keys create | list | revoke, agents: an operator’s loop, in text and --json', async () => {
    const created = await engram(['keys', 'create', 'cli-agent', '--label', 'laptop'])
    expect(created.code).toBe(0)
    const key = created.stdout.trim()
    expect(key).toMatch(/^engram_\S+$/)

    const listed = await engram(['--json', 'keys', 'list', '--agent', 'cli-agent'])
    const keys = JSON.parse(listed.stdout) as { id: string; label: string; revokedAt: string | null }[]
    expect(keys).toEqual([expect.objectContaining({ label: 'laptop', revokedAt: null })])

    const agents = await engram(['agents'], key)
    expect(agents.stdout).toMatch(/^cli-agent\t/)

    const revoked = await engram(['keys', 'revoke', keys[0]!.id])
    expect(revoked.stdout).toContain(`revoked ${keys[0]!.id}`)
    const refused = await engram(['agents'], key)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/^engram: UNAUTHENTICATED: .+\n$/)
  })

  it('search and context answer from the agent’s memory', async () => {
    const key = (await engram(['keys', 'create', 'cli-memory'])).stdout.trim()
    const { Engram, unwrap } = await import('@engram/sdk')
    const client = Engram.connect({ url: server.url, apiKey: key })
    unwrap(await client.rememberThis({ text: 'Remember that I take the 7:40 train to work' }))
    await client.close()

    const search = await engram(['search', 'when is my train?', '--scope', 'memories'], key)
    expect(search.code).toBe(0)
    expect(search.stdout).toMatch(/^1\. \[memories\] [\d.]+ {2}.*7:40 train/)
    const json = JSON.parse((await engram(['--json', 'search', 'train', '--limit', '1'], key)).stdout)
    expect(json.hits).toHaveLength(1)

    const context = await engram(['context', 'commute'], key)
    expect(context.stdout).toContain('7:40 train')
    expect(context.stdout).toMatch(/\(\d+ of 8000 tokens\)\n$/)
  })

  it('settings shows and changes the formation settings; a value out of range names field and limit', async () => {
    const key = (await engram(['keys', 'create', 'cli-settings'])).stdout.trim()
    const shown = await engram(['settings'], key)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toMatch(/^enabled=true$/m)
    expect(shown.stdout).toMatch(/^summaries\.strategy=extractive$/m)
    const changed = await engram(
      ['settings', '--set', 'summaries.strategy=map-reduce', '--set', 'profile.profileMaxTokens=900'],
      key,
    )
    expect(changed.code).toBe(0)
    expect(changed.stdout).toMatch(/^summaries\.strategy=map-reduce$/m)
    expect(changed.stdout).toMatch(/^profile\.profileMaxTokens=900$/m)
    const bad = await engram(['settings', '--set', 'summaries.summaryDebounceSeconds=5'], key)
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toMatch(/summaries\.summaryDebounceSeconds.*10/)
    const unknown = await engram(['settings', '--set', 'summaries.speed=3'], key)
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toMatch(/summaries has .*summaryDebounceSeconds/)
    expect(JSON.parse((await engram(['--json', 'settings'], key)).stdout)).toMatchObject({
      summaries: { strategy: 'MAP_REDUCE' },
      profile: { profileMaxTokens: 900 },
    })
    // The extractor and core model: the test server has no model, so llm is refused by field.
    expect(shown.stdout).toMatch(/^extraction\.extractor=offline$/m)
    expect(shown.stdout).toMatch(/^extraction\.model=null$/m)
    const model = await engram(['settings', '--set', 'extraction.model=llama3.1:8b'], key)
    expect(model.stdout).toMatch(/^extraction\.model=llama3\.1:8b$/m)
    const llm = await engram(['settings', '--set', 'extraction.extractor=llm'], key)
    expect(llm.code).not.toBe(0)
    expect(llm.stderr).toMatch(/settings\.extraction\.extractor.*no language model is configured/)
    const reset = await engram(['settings', '--set', 'extraction.model=null'], key)
    expect(reset.stdout).toMatch(/^extraction\.model=null$/m)
  })

  it('summaries --now summarises a conversation; profile regenerates, lists versions and diffs two', async () => {
    const key = (await engram(['keys', 'create', 'cli-profile'])).stdout.trim()
    const { Engram, unwrap } = await import('@engram/sdk')
    const client = Engram.connect({ url: server.url, apiKey: key })
    unwrap(
      await client.addMessage({
        conversationId: 'trip',
        role: 'USER',
        content: 'We booked the ferry to Naxos for June.',
      }),
    )
    unwrap(await client.createMemory({ content: 'Prefers window seats', category: 'PREFERENCE' }))
    await client.close()

    expect((await engram(['summaries'], key)).stdout.trim()).toBe('no summaries')
    const summarised = await engram(['summaries', '--now', 'trip', '--strategy', 'simple'], key)
    expect(summarised.code).toBe(0)
    expect(summarised.stdout).toMatch(/ trip {2}simple · 1 messages\n {2}.*Naxos/)
    const [listed] = JSON.parse((await engram(['--json', 'summaries'], key)).stdout) as { id: string }[]
    const one = await engram(['summaries', '--id', listed?.id ?? ''], key)
    expect(one.stdout).toMatch(/ trip {2}simple · 1 messages\n {2}.*Naxos/)
    const none = await engram(['summaries', '--id', '987654'], key)
    expect(none.code).not.toBe(0)
    expect(none.stderr).toMatch(/NOT_FOUND/)

    expect((await engram(['profile'], key)).stdout.trim()).toBe('no profile yet')
    const first = await engram(['profile', '--regenerate'], key)
    expect(first.stdout).toMatch(/^version 1 \(extractive, \d+ tokens\)\n[\s\S]*window seats/)
    const clientAgain = Engram.connect({ url: server.url, apiKey: key })
    unwrap(await clientAgain.createMemory({ content: 'Speaks Greek', category: 'SKILL' }))
    await clientAgain.close()
    await engram(['profile', '--regenerate'], key)
    expect((await engram(['profile'], key)).stdout).toMatch(/^version 2\n/)
    const versions = await engram(['profile', '--versions'], key)
    expect(
      versions.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t')[0]),
    ).toEqual(['2', '1'])
    const diff = await engram(['profile', '--diff', '1', '2'], key)
    expect(diff.stdout).toMatch(/^version 1 → 2: 1 added, 0 removed/)
    expect(diff.stdout).toMatch(/^\+ .*Greek/m)
    const missing = await engram(['profile', '--diff', '1', '7'], key)
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toMatch(/NOT_FOUND|not found/i)
  })

  it('sync forms memories from recorded turns; classify explains a routing', async () => {
    const key = (await engram(['keys', 'create', 'cli-formation'])).stdout.trim()
    const { Engram, unwrap } = await import('@engram/sdk')
    const client = Engram.connect({ url: server.url, apiKey: key })
    unwrap(
      await client.addMessage({
        conversationId: 'c',
        role: 'USER',
        content: 'Remember that my passport expires in March.',
      }),
    )
    await client.close()

    const synced = await engram(['sync'], key)
    expect(synced.code).toBe(0)
    expect(synced.stdout).toMatch(/^1 turns of 1 conversations: 1 memories formed/)
    expect(synced.stdout).toMatch(/passport/i)
    const routed = await engram(['--json', 'classify', 'Remember that I am vegan'], key)
    expect(JSON.parse(routed.stdout)).toMatchObject({ tier: 'SEMANTIC' })
    const text = await engram(['classify', 'ok thanks', '--role', 'assistant'], key)
    expect(text.stdout).toMatch(/^working · /)

    // The sync counted as extraction work: activity reports it.
    const activity = await engram(['activity'], key)
    expect(activity.code).toBe(0)
    expect(activity.stdout).toMatch(/^extractor offline · circuit none/)
    expect(activity.stdout).toMatch(/^extraction +1 calls, 1 ok, 0 failed/m)
    const refused = await engram(['activity', '--agent', 'someone-else'], key)
    expect(refused.stderr).toMatch(/FORBIDDEN/)
  })

  it('activity --watch prints each unit of formation work as it ends', async () => {
    const key = (await engram(['keys', 'create', 'cli-watch'])).stdout.trim()
    const env: Record<string, string | undefined> = {
      ...process.env,
      ENGRAM_URL: server.url,
      ENGRAM_API_KEY: key,
    }
    const child = spawn(process.execPath, [bin, 'activity', '--watch', '--events', '1'], { cwd: work, env })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve))
    let exited = false
    void closed.then(() => (exited = true))
    const { Engram, unwrap } = await import('@engram/sdk')
    const client = Engram.connect({ url: server.url, apiKey: key })
    try {
      // The stream registers a moment after the counters print: work until an event arrives.
      for (let turn = 0; turn < 100 && !exited; turn++) {
        if (stdout.includes('extractor')) {
          unwrap(
            await client.addMessage({
              conversationId: 'w',
              role: 'USER',
              content: `I prefer tea, day ${turn}.`,
            }),
          )
          unwrap(await client.syncMemory({}))
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    } finally {
      await client.close()
      if (!exited) child.kill()
    }
    expect(await closed).toBe(0)
    expect(stdout).toMatch(/^extractor offline/)
    expect(stdout).toMatch(/cli-watch {2}extraction success in \d+ ms · \d+ queued\n$/)
  })

  it('graph: an operator adds, links and retires; the agent searches, explores and finds paths', async () => {
    const key = (await engram(['keys', 'create', 'cli-graph'])).stdout.trim()
    const added = await engram([
      '--json',
      'graph',
      'add',
      'person',
      'Dana Kim',
      '--alias',
      'Dana',
      '--agent',
      'cli-graph',
    ])
    expect(added.code, added.stderr).toBe(0)
    const dana = JSON.parse(added.stdout) as { id: string; aliases: string[] }
    expect(dana.aliases).toEqual(['Dana'])
    // The rest of the graph through the SDK (each command is a process start).
    const { Engram, unwrap } = await import('@engram/sdk')
    const admin = Engram.connect({ url: server.url, apiKey: ADMIN_KEY })
    const acme = unwrap(
      await admin.createGraphEntity({ agentId: 'cli-graph', type: 'COMPANY', name: 'Acme Corp' }),
    )
    const lee = unwrap(
      await admin.createGraphEntity({ agentId: 'cli-graph', type: 'PERSON', name: 'Lee Park' }),
    )
    unwrap(
      await admin.createGraphRelationship({
        agentId: 'cli-graph',
        sourceId: lee.id,
        relation: 'works at',
        targetId: acme.id,
      }),
    )
    await admin.close()
    const works = await engram([
      'graph',
      'link',
      dana.id,
      'works at',
      acme.id,
      '--valid-from',
      '2021-01-01T00:00:00Z',
      '--agent',
      'cli-graph',
    ])
    expect(works.stdout).toMatch(/\tDana Kim —works at→ Acme Corp\t1\.00\t2021-01-01 → …\n$/)
    const edgeId = works.stdout.split('\t')[0] as string

    const search = await engram(['graph', 'search', 'dana'], key)
    expect(search.stdout.split('\n')[0]).toBe(`${dana.id}\tperson\tDana Kim (also Dana)\t1.000`)
    const around = await engram(['graph', 'around', 'Dana Kim'], key)
    expect(around.stdout).toContain(`${dana.id}\tperson\tDana Kim`)
    expect(around.stdout).toContain(`    ${lee.id}\tperson\tLee Park`)
    const paths = await engram(['graph', 'paths', 'Dana', 'Lee Park'], key)
    expect(paths.stdout).toBe('Dana Kim —works at→ Acme Corp ←works at— Lee Park\n')

    // Retired: gone from now, still there in the history.
    const retired = await engram([
      'graph',
      'retire',
      edgeId,
      '--reason',
      'never worked there',
      '--agent',
      'cli-graph',
    ])
    expect(retired.stdout).toMatch(/\tretired: never worked there\n$/)
    expect((await engram(['graph', 'relationships', '--entity', 'Dana'], key)).stdout).toBe(
      'no relationships\n',
    )
    const history = await engram(['graph', 'relationships', '--entity', 'Dana', '--history'], key)
    expect(history.stdout).toContain(edgeId)

    // The corrections are admin work; bad input names the field and the limit.
    const refused = await engram(['graph', 'add', 'person', 'Eve'], key)
    expect(refused).toMatchObject({
      code: 1,
      stderr: 'engram: FORBIDDEN: this operation needs an admin key\n',
    })
    const deep = await engram(['graph', 'around', 'Dana', '--depth', '9'], key)
    expect(deep.code).toBe(1)
    expect(deep.stderr).toMatch(/^engram: VALIDATION: depth: .*\(limit 4\)\n$/)
  })

  it('runs: list, show, lineage, context and delete an agent’s runs', async () => {
    const key = (await engram(['keys', 'create', 'cli-runs'])).stdout.trim()
    // The runs themselves through the SDK, as an acting agent records them.
    const { Engram, unwrap } = await import('@engram/sdk')
    const agent = Engram.connect({ url: server.url, apiKey: key })
    unwrap(
      await agent.startRun({
        runId: 'cli-run-1',
        sessionId: 'cli-proj',
        goal: 'Build a todo app',
        startUrl: 'https://todo.example.com/',
      }),
    )
    unwrap(
      await agent.completeRun({
        runId: 'cli-run-1',
        outcome: 'Created the project with a TaskList component',
        finalUrl: 'https://todo.example.com/project/123',
        turnCount: 8,
        steps: [{ action: 'click', selector: 'button "New project"', verified: true }],
        facts: [{ type: 'QUIRK', key: 'modals', value: 'uses shadow DOM for modals' }],
      }),
    )
    const resumed = unwrap(await agent.resumeRun({ runId: 'cli-run-1', goal: 'Add auth to the app' }))
    const forked = unwrap(await agent.forkRun({ runId: 'cli-run-1', goal: 'Build auth instead' }))
    await agent.close()

    const listed = await engram(['runs', 'list', '--domain', 'todo.example.com'], key)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.trim().split('\n')).toHaveLength(3)
    expect(listed.stdout).toContain('cli-run-1\tcompleted\ttodo.example.com\tBuild a todo app\t(8 turns)\n')
    const running = JSON.parse(
      (await engram(['--json', 'runs', 'list', '--status', 'running'], key)).stdout,
    ) as { totalCount: number; runs: { id: string }[] }
    expect(running.runs.map((r) => r.id).sort()).toEqual([forked.id, resumed.id].sort())
    const session = await engram(['runs', 'list', '--session-id', 'cli-proj'], key)
    expect(session.stdout).toContain(`${resumed.id}\trunning\ttodo.example.com\tAdd auth to the app`)
    expect(session.stdout).not.toContain(forked.id)

    const shown = await engram(['runs', 'show', resumed.id], key)
    expect(shown.stdout).toContain('kind        resume')
    expect(shown.stdout).toContain('parent      cli-run-1')
    expect(shown.stdout).toContain('start url   https://todo.example.com/project/123')
    expect((await engram(['runs', 'show', 'no-such-run'], key)).stdout).toBe('no run no-such-run\n')

    const lineage = await engram(['runs', 'lineage', forked.id], key)
    const lines = lineage.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^cli-run-1\t/)
    expect(lines.slice(1).every((line) => line.startsWith('  '))).toBe(true)
    expect(lines.find((line) => line.includes(forked.id))).toMatch(/ {2}←$/)

    const context = await engram(['runs', 'context', resumed.id, '--report'], key)
    expect(context.code, context.stderr).toBe(0)
    expect(context.stdout).toContain('SESSION HISTORY')
    expect(context.stdout).toContain('Created the project with a TaskList component')
    expect(context.stdout).toContain('uses shadow DOM for modals')
    expect(context.stdout).toMatch(/\nsession-history\t\d+\/\d+ tokens\t1\/1 items/)
    const limited = await engram(
      [
        'runs',
        'context',
        '--domain',
        'todo.example.com',
        '--goal',
        'Build a todo app',
        '--section',
        'reference-trajectory',
      ],
      key,
    )
    expect(limited.stdout).toContain('REFERENCE TRAJECTORY')
    expect(limited.stdout).not.toContain('SESSION HISTORY')

    // Bad input names the field and the limit; another agent's key sees none of it.
    const tooMany = await engram(['runs', 'list', '--limit', '201'], key)
    expect(tooMany.code).toBe(1)
    expect(tooMany.stderr).toMatch(/^engram: VALIDATION: limit: .*\(limit 200\)\n$/)
    const badId = await engram(['runs', 'show', 'has spaces'], key)
    expect(badId.stderr).toMatch(/^engram: VALIDATION: runId: /)
    const other = (await engram(['keys', 'create', 'cli-runs-other'])).stdout.trim()
    expect((await engram(['runs', 'list'], other)).stdout).toBe('no runs\n')
    expect((await engram(['runs', 'show', 'cli-run-1'], other)).stdout).toBe('no run cli-run-1\n')
    // The operator names the agent.
    expect((await engram(['runs', 'show', 'cli-run-1', '--agent', 'cli-runs'])).stdout).toContain(
      'goal        Build a todo app',
    )

    const deleted = await engram(['runs', 'delete', 'cli-run-1'], key)
    expect(deleted.stdout).toMatch(/^deleted run cli-run-1: 1 trajectories, 1 session entries/)
    const again = await engram(['runs', 'delete', 'cli-run-1'], key)
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/^engram: NOT_FOUND: /) })
    const after = await engram(['runs', 'lineage', forked.id], key)
    expect(after.stdout).toMatch(/^\(the root’s parent was deleted\)\n/)
  })

  it('runs import | export: a .agent-memory directory in, the same files out', async () => {
    const key = (await engram(['keys', 'create', 'cli-migrate'])).stdout.trim()
    const fixture = path.join(appDir, '..', '..', 'packages', 'engine', 'test', 'fixtures', 'agent-memory')
    const imported = await engram(['runs', 'import', fixture], key)
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stdout).toMatch(
      /^imported into scope default: 5 runs, \d+ trajectories, \d+ session entries, \d+ facts, \d+ selectors, \d+ hints\n/,
    )
    expect((await engram(['runs', 'list', '--limit', '200'], key)).stdout.trim().split('\n')).toHaveLength(5)

    const out = path.join(work, 'exported-memory')
    const exported = await engram(['runs', 'export', out], key)
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stdout).toMatch(/^exported scope default: \d+ files to /)
    const written = fs
      .readdirSync(out, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(out, path.join(entry.parentPath, entry.name)))
    expect(written.length).toBeGreaterThanOrEqual(10)
    // Every file written is the fixture's, field for field (unknown fields kept verbatim).
    for (const file of written)
      expect(JSON.parse(fs.readFileSync(path.join(out, file), 'utf8')), file).toEqual(
        JSON.parse(fs.readFileSync(path.join(fixture, file), 'utf8')),
      )
    // Another agent's export holds none of it; a missing directory fails on one line.
    const other = (await engram(['keys', 'create', 'cli-migrate-other'])).stdout.trim()
    expect(
      (await engram(['--json', 'runs', 'export', path.join(work, 'empty-memory')], other)).stdout,
    ).toMatch(/"files": 0/)
    const missing = await engram(['runs', 'import', path.join(work, 'no-such-dir')], key)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^engram: cannot read .*no-such-dir: /)
  })

  it('maintenance run --dry-run | run | runs | status (admin); an agent key is refused', async () => {
    const dry = await engram(['maintenance', 'run', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/manual · dry run {2}succeeded {2}0 conversations, 0 messages, 0 summaries/)
    const real = await engram(['--json', 'maintenance', 'run'])
    expect(JSON.parse(real.stdout)).toMatchObject({ trigger: 'MANUAL', dryRun: false, status: 'SUCCEEDED' })
    const runs = await engram(['maintenance', 'runs', '--limit', '2'])
    expect(runs.stdout.trim().split('\n')).toHaveLength(2)
    expect((await engram(['maintenance', 'status'])).stdout).toMatch(/schedule {5}0 3 \* \* \* \(UTC\)/)
    const key = (await engram(['keys', 'create', 'cli-maint'])).stdout.trim()
    const refused = await engram(['maintenance', 'run'], key)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/FORBIDDEN|admin key/)
  })

  it('export → import into another agent, backup and restore', async () => {
    const key = (await engram(['keys', 'create', 'cli-source'])).stdout.trim()
    const { Engram, unwrap } = await import('@engram/sdk')
    const client = Engram.connect({ url: server.url, apiKey: key })
    unwrap(await client.rememberThis({ text: 'Remember that the wifi password is hunter2' }))
    await client.close()

    const exported = await engram(['export', '--out', 'memory.json'], key)
    expect(exported.stdout).toMatch(/^exported 1 memories/)
    expect(JSON.parse(fs.readFileSync(path.join(work, 'memory.json'), 'utf8'))).toHaveProperty('format')

    await engram(['keys', 'create', 'cli-target'])
    const imported = await engram(['--json', 'import', 'memory.json', '--agent', 'cli-target'])
    expect(imported.code).toBe(0)
    expect(JSON.parse(imported.stdout)).toMatchObject({ memories: 1 })
    const found = await engram(['search', 'wifi password', '--agent', 'cli-target', '--scope', 'memories'])
    expect(found.stdout).toContain('hunter2')

    const backup = await engram(['--json', 'backup'])
    const { name } = JSON.parse(backup.stdout) as { name: string }
    expect((await engram(['backup', '--list'])).stdout).toContain(name)
    const restored = await engram(['restore', name])
    expect(restored.code).toBe(0)
    expect(restored.stdout).toMatch(new RegExp(`^restored ${name} \\(\\d+ tables\\)`))
  })

  it('errors: one clear line and a non-zero exit', async () => {
    const tooLong = await engram([
      'search',
      'q'.repeat(CONTRACT_LIMITS.maxQueryChars + 1),
      '--agent',
      'cli-memory',
    ])
    expect(tooLong.code).toBe(1)
    expect(tooLong.stderr).toBe(
      `engram: VALIDATION: query: Too big: expected string to have <=${CONTRACT_LIMITS.maxQueryChars} characters (limit ${CONTRACT_LIMITS.maxQueryChars})\n`,
    )
    const noKey = await engram(['agents'], null)
    expect(noKey).toMatchObject({
      code: 1,
      stderr: 'engram: no key: pass --api-key KEY or set ENGRAM_API_KEY\n',
    })
    const missing = await engram(['import', 'nothing.json'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^engram: cannot read nothing\.json: ENOENT.*\n$/)
    const notFound = await engram(['restore', 'no-such-backup'])
    expect(notFound.stderr).toMatch(/^engram: VALIDATION: name: no backup named no-such-backup/)
    const noDataset = await engram(['eval', '--dataset', 'missing.json'])
    expect(noDataset.code).toBe(1)
    expect(noDataset.stderr).toMatch(/^engram: no dataset at .*missing\.json\n$/)
    const usage = await engram(['keys', 'create'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain("missing required argument 'agent'")
    const down = await engram(['--url', 'http://127.0.0.1:9', 'agents'])
    expect(down.stderr).toMatch(/^engram: UNAVAILABLE: /)
  })
})
