import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { AgentMemoryExportSchema, AgentMemoryImportSchema } from '@engram/contract'
import {
  type AgentMemoryFile,
  type Clock,
  createTokenCounter,
  DEFAULT_TRAJECTORY_RULES,
  goalWords,
  TrajectoryLimitsSchema,
  ValidationError,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { createOperations } from '../operations/operations.ts'
import type { Principal } from '../operations/principal.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { AgentMemoryTransfer } from './agent-memory-transfer.ts'

// The fixture is a `.agent-memory/` directory in the documented system's own formats
// (tangle-network/browser-agent-driver: store.ts, knowledge.ts, selectors.ts, run-registry.ts,
// project-store.ts), with fields that system does not write at every level.
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/agent-memory')

function readFixture(dir = FIXTURE, prefix = ''): AgentMemoryFile[] {
  const files: AgentMemoryFile[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) files.push(...readFixture(path.join(dir, entry.name), relative))
    else files.push({ path: relative, content: fs.readFileSync(path.join(dir, entry.name), 'utf8') })
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : 1))
}

const clock: Clock = { now: () => new Date('2026-11-26T12:00:00.000Z') }
const operator: Principal = { kind: 'operator' }
const agentA = { kind: 'agent', agentId: 'agent-a' } as const satisfies Principal
const agentB = { kind: 'agent', agentId: 'agent-b' } as const satisfies Principal
const SUITE_SUMMARY = 'runs/run_1764000000000_ab12.json'

async function setup() {
  const engine = createEngine({
    storage: createInMemoryStorage(clock),
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {} },
    optimizer: { intervalMs: 0 },
  })
  const ops = createOperations(engine)
  await ops.createAgent(operator, { id: 'agent-a' })
  await ops.createAgent(operator, { id: 'agent-b' })
  return { engine, ops, repo: engine.storage.trajectories }
}

const parsedByPath = (files: readonly AgentMemoryFile[]) =>
  Object.fromEntries(files.map((f) => [f.path, JSON.parse(f.content)]))

describe('the .agent-memory migration', () => {
  const fixture = readFixture()

  it('round-trips the directory: import then export gives every file back, deep-equal', async () => {
    const { ops } = await setup()
    const report = await ops.importAgentMemory(agentA, { files: fixture })
    expect(report).toEqual({
      scope: 'default',
      runs: 5,
      trajectories: 4,
      runSessions: 3,
      facts: 6,
      // localhost: Save (stable + lastRef), Email (stable), Sign in (lastRef); shop: Add to cart.
      selectors: 5,
      hints: 1,
      skipped: [{ path: SUITE_SUMMARY, reason: expect.stringContaining('suite result summary') }],
    })
    const exported = await ops.exportAgentMemory(agentA, {})
    // The answers are the catalog's output shapes exactly.
    expect(AgentMemoryImportSchema.strict().parse(report)).toEqual(report)
    expect(AgentMemoryExportSchema.strict().parse(exported)).toEqual(exported)
    const expected = parsedByPath(fixture.filter((f) => f.path !== SUITE_SUMMARY))
    expect(Object.keys(parsedByPath(exported.files)).sort()).toEqual(Object.keys(expected).sort())
    expect(parsedByPath(exported.files)).toStrictEqual(expected)
  })

  it('makes the data visible to what the run context reads: facts, selectors, trajectories, sessions, runs, hints', async () => {
    const { ops, repo } = await setup()
    await ops.importAgentMemory(agentA, { files: fixture })
    const scope = 'default'
    const domain = 'localhost:5173'

    const facts = await repo.listFacts('agent-a', { scope, domain }, { offset: 0, limit: 20 })
    expect(facts.map((f) => [f.type, f.key, f.confidence])).toEqual([
      ['PATTERN', 'auth-flow', 0.84],
      ['TIMING', 'save-latency', 0.744],
      ['QUIRK', 'modal-dom', 0.6],
      ['SELECTOR', 'search-box', 0.6],
      ['QUIRK', 'modal-dom', 0.3],
    ])
    // The contradicted fact (halved) stays below the context's minimum confidence.
    const inContext = await repo.listFacts(
      'agent-a',
      { scope, domain, minConfidence: DEFAULT_TRAJECTORY_RULES.factContextMinConfidence },
      { offset: 0, limit: 20 },
    )
    expect(inContext.map((f) => f.value)).not.toContain('uses shadow DOM for modals')

    const selectors = await repo.listSelectors('agent-a', { scope, domain }, { offset: 0, limit: 20 })
    expect(selectors.map((s) => [s.element, s.selector, s.successCount])).toEqual([
      ['button "Save"', "[data-testid='save']", 7],
      ['button "Save"', '@e12', 7],
      ['textbox "Email"', '#email', 3],
      ['link "Sign in"', '@e4', 1],
    ])

    const candidates = await repo.trajectoryCandidates(
      'agent-a',
      { scope, domain, words: goalWords('Build a todo app'), minShared: 1, since: new Date(0) },
      10,
    )
    // Only the successful one is offered as a reference.
    expect(candidates.map((c) => c.goal)).toEqual(['Build a todo app with a task list'])
    const [reference] = await repo.listTrajectories('agent-a', { scope, domain }, { offset: 1, limit: 1 })
    expect(reference?.steps.map((s) => [s.action, s.selector, s.value])).toEqual([
      ['navigate', null, 'http://localhost:5173/new'],
      ['click', '@e3', null],
      ['type', '@e5', 'todo app'],
      ['press', '@e5', 'Enter'],
      ['hover', "[data-testid='menu']", null],
      ['select', '#template', 'react-ts'],
      ['scroll', '#tasks', 'down'],
      ['wait', null, '1500'],
      ['evaluate', null, 'the task list renders three rows'],
      ['runScript', null, 'document.title'],
      ['verifyPreview', null, null],
    ])
    expect(reference?.verifiedCount).toBe(7)
    expect(reference?.steps[0]?.url).toBe('http://localhost:5173/')

    const sessions = await repo.runSessions('agent-a', scope, domain, 5)
    expect(sessions.map((s) => [s.sessionId, s.success, s.finalUrl])).toEqual([
      ['fork_1763900000000_q8w2e4', true, null],
      ['proj_123', false, 'http://localhost:5173/login'],
      ['proj_123', true, 'http://localhost:5173/project/123'],
    ])

    // The lineage: a resume keeps the session, a fork starts one; a manifest without a session is its own.
    const run = (id: string) => repo.findRun('agent-a', id)
    expect((await run('run_1763900000000_resum1'))?.kind).toBe('RESUME')
    expect((await run('run_1764000000000_fork01'))?.kind).toBe('FORK')
    expect(await run('run_1764200000000_solo01')).toMatchObject({
      kind: 'START',
      domain: 'shop.example.org',
      sessionId: 'run_1764200000000_solo01',
      scope: 'default',
    })
    expect((await run('run_1764100000000_live01'))?.status).toBe('RUNNING')
    expect((await repo.listHints('agent-a', scope)).map((h) => h.text)).toEqual([
      'Prefer data-testid selectors over snapshot refs.\nDismiss cookie banners before the first click.',
    ])
    // shop.example.org has no knowledge.json: its directory names it.
    expect((await repo.domains('agent-a', scope)).map((d) => d.domain).sort()).toEqual([
      'localhost:5173',
      'shop.example.org',
      'www.example.com',
    ])
  })

  it('keeps each agent to its own: B imports the same directory without touching A', async () => {
    const { ops, repo } = await setup()
    await ops.importAgentMemory(agentA, { files: fixture })
    expect((await ops.exportAgentMemory(agentB, {})).files).toEqual([])
    await ops.importAgentMemory(agentB, { files: fixture })
    const a = await repo.snapshot('agent-a')
    const b = await repo.snapshot('agent-b')
    expect(a.trajectories.map((t) => t.id).filter((id) => b.trajectories.some((t) => t.id === id))).toEqual(
      [],
    )
    await repo.forgetScope('agent-b', 'default')
    expect(parsedByPath((await ops.exportAgentMemory(agentA, {})).files)).toStrictEqual(
      parsedByPath(fixture.filter((f) => f.path !== SUITE_SUMMARY)),
    )
  })

  it('imports into a named scope, and importing again adds nothing twice', async () => {
    const { ops } = await setup()
    await ops.importAgentMemory(agentA, { files: fixture, scope: 'track-a' })
    expect((await ops.exportAgentMemory(agentA, {})).files).toEqual([])
    const again = await ops.importAgentMemory(agentA, { files: fixture, scope: 'track-a' })
    expect(again).toMatchObject({ runs: 0, trajectories: 0, runSessions: 0, hints: 0 })
    expect(again.skipped.filter((s) => s.reason.includes('already has a run'))).toHaveLength(5)
    const exported = await ops.exportAgentMemory(agentA, { scope: 'track-a' })
    expect(exported.scope).toBe('track-a')
    expect(parsedByPath(exported.files)).toStrictEqual(
      parsedByPath(fixture.filter((f) => f.path !== SUITE_SUMMARY)),
    )
  })

  it('reports bad files with their reason and imports the rest', async () => {
    const { ops } = await setup()
    const trajectory = (goal: string, steps = 1) =>
      JSON.stringify({
        id: 'traj_x',
        goal,
        steps: Array.from({ length: steps }, () => ({
          url: 'https://a.example',
          action: { action: 'click', selector: '#a' },
        })),
        success: true,
        durationMs: 1,
        model: 'm',
        timestamp: '2026-11-01T00:00:00.000Z',
      })
    const report = await ops.importAgentMemory(agentA, {
      files: [
        { path: 'domains/a.example/trajectories/ok.json', content: trajectory('Open the pricing page') },
        { path: 'domains/a.example/trajectories/broken.json', content: '{"id": "traj_' },
        { path: 'notes/todo.json', content: '{}' },
        { path: 'domains/a.example/trajectories/long.json', content: trajectory('x'.repeat(2_001)) },
        { path: 'domains/a.example/trajectories/many.json', content: trajectory('Many steps', 501) },
        {
          path: 'domains/a.example/knowledge.json',
          content: JSON.stringify({
            facts: [
              {
                type: 'rumour',
                key: 'k',
                value: 'v',
                confidence: 1,
                sources: 1,
                lastSeen: '2026-11-01T00:00:00Z',
              },
            ],
          }),
        },
        { path: 'hints.json', content: JSON.stringify({ hints: 'h', $engram: { at: 1 } }) },
      ],
    })
    expect(report.trajectories).toBe(1)
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]))
    expect(reasons['domains/a.example/trajectories/broken.json']).toMatch(/^bad JSON/)
    expect(reasons['notes/todo.json']).toMatch(/unknown place/)
    expect(reasons['domains/a.example/trajectories/long.json']).toBe('goal: must be at most 2000 characters')
    expect(reasons['domains/a.example/trajectories/many.json']).toBe('steps: must hold at most 500 steps')
    expect(reasons['domains/a.example/knowledge.json']).toMatch(/^facts\[0\]\.type: must be one of/)
    expect(reasons['hints.json']).toMatch(/\$engram is reserved/)
    expect(report.skipped).toHaveLength(6)
  })

  it('refuses a directory over its file or byte limit, naming the field and the limit', async () => {
    const { engine } = await setup()
    const transfer = new AgentMemoryTransfer({
      repository: engine.storage.trajectories,
      clock,
      limits: TrajectoryLimitsSchema.parse({ maxImportFiles: 3, maxImportBytes: 1_000 }),
    })
    const tooMany = transfer.importFiles('agent-a', fixture.slice(0, 4))
    await expect(tooMany).rejects.toBeInstanceOf(ValidationError)
    await expect(tooMany).rejects.toMatchObject({ issues: [{ field: 'files', limit: 3 }] })
    await expect(transfer.importFiles('agent-a', fixture.slice(0, 3))).rejects.toMatchObject({
      issues: [{ field: 'files', limit: 1_000 }],
    })
    await expect(transfer.exportFiles('agent-a', 'not a scope')).rejects.toMatchObject({
      issues: [{ field: 'scope' }],
    })
    // The catalog's own bound, through the operation.
    const { ops } = await setup()
    const files = Array.from({ length: 20_001 }, (_, i) => ({ path: `x${i}.json`, content: '' }))
    await expect(ops.importAgentMemory(agentA, { files })).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'files', limit: 20_000 })],
    })
  })

  it('exports what Engram recorded itself in the same formats, and reads it back the same', async () => {
    const { engine, ops, repo } = await setup()
    const at = new Date('2026-11-25T10:00:00.000Z')
    await repo.insertTrajectory(
      'agent-a',
      {
        id: 'traj_native',
        scope: 'default',
        domain: 'repo.example',
        origin: null,
        goal: 'Fix the failing build',
        words: goalWords('Fix the failing build'),
        runId: 'run_native',
        steps: [
          {
            action: 'run_tool',
            selector: 'npm',
            value: 'test',
            url: null,
            verified: true,
            durationMs: 1200,
            extra: null,
          },
          {
            action: 'wait',
            selector: null,
            value: '300',
            url: null,
            verified: null,
            durationMs: null,
            extra: null,
          },
          {
            action: 'type',
            selector: 'src/a.ts',
            value: 'fix',
            url: null,
            verified: false,
            durationMs: null,
            extra: null,
          },
        ],
        stepCount: 3,
        verifiedCount: 1,
        success: true,
        turns: 4,
        durationMs: 5000,
        outcome: 'build green',
        model: 'gpt-5.4',
        recordedAt: at,
        extra: null,
      },
      100,
    )
    await repo.observeFact(
      'agent-a',
      { scope: 'default', domain: 'repo.example', type: 'QUIRK', key: 'ci', value: 'CI needs node 20' },
      at,
      DEFAULT_TRAJECTORY_RULES,
      null,
    )
    for (const selector of ['#run', '@e7'])
      await repo.observeSelector(
        'agent-a',
        { scope: 'default', domain: 'repo.example', element: 'button "Run"', selector, outcome: 'SUCCESS' },
        at,
        null,
      )
    const exported = await ops.exportAgentMemory(agentA, {})
    const files = parsedByPath(exported.files)
    expect(files['domains/repo.example/trajectories/traj_native.json']).toMatchObject({
      id: 'traj_native',
      goal: 'Fix the failing build',
      steps: [
        { action: { action: 'run_tool', selector: 'npm', value: 'test' }, verified: true, durationMs: 1200 },
        { action: { action: 'wait', ms: 300 } },
        { action: { action: 'type', selector: 'src/a.ts', text: 'fix' }, verified: false },
      ],
      timestamp: at.toISOString(),
      turns: 4,
      outcome: 'build green',
      runId: 'run_native',
    })
    expect(files['domains/repo.example/knowledge.json']).toEqual({
      domain: 'repo.example',
      facts: [
        {
          type: 'quirk',
          key: 'ci',
          value: 'CI needs node 20',
          confidence: 0.6,
          sources: 1,
          lastSeen: at.toISOString(),
        },
      ],
      sessions: [],
      updatedAt: at.toISOString(),
    })
    expect(files['domains/repo.example/selectors.json']).toEqual({
      entries: {
        'button "Run"': {
          element: 'button "Run"',
          stableSelector: '#run',
          lastRef: '@e7',
          successCount: 1,
          lastUsed: at.toISOString(),
        },
      },
      updatedAt: at.toISOString(),
    })
    // Back into another scope: the same steps, fact and selectors.
    await engine.agentMemory.importFiles('agent-a', exported.files, 'copy')
    const [copy] = await repo.listTrajectories('agent-a', { scope: 'copy' }, { offset: 0, limit: 5 })
    expect(copy).toMatchObject({
      goal: 'Fix the failing build',
      turns: 4,
      outcome: 'build green',
      runId: 'run_native',
    })
    expect(copy?.steps.map(({ extra: _extra, ...step }) => step)).toEqual([
      { action: 'run_tool', selector: 'npm', value: 'test', url: null, verified: true, durationMs: 1200 },
      { action: 'wait', selector: null, value: '300', url: null, verified: null, durationMs: null },
      { action: 'type', selector: 'src/a.ts', value: 'fix', url: null, verified: false, durationMs: null },
    ])
    const copied = await repo.listSelectors('agent-a', { scope: 'copy' }, { offset: 0, limit: 5 })
    expect(copied.map((s) => [s.selector, s.successCount])).toEqual([
      ['#run', 1],
      ['@e7', 1],
    ])
    expect(parsedByPath((await ops.exportAgentMemory(agentA, { scope: 'copy' })).files)).toStrictEqual(files)
  })
  it('passes imported free text through the agent’s sensitive-data policy, as runs do', async () => {
    const { engine, ops } = await setup()
    const card = '4111 1111 1111 1111'
    const trajectory = {
      id: 'traj_1764000000000_pay001',
      goal: 'Pay for the watch',
      origin: 'https://shop.example.org',
      steps: [
        {
          url: 'https://shop.example.org/pay',
          action: { action: 'type', selector: '#card', text: card },
          verified: true,
        },
      ],
      success: true,
      durationMs: 4000,
      model: 'gpt-test',
      timestamp: '2026-11-20T10:00:00.000Z',
    }
    const knowledge = {
      domain: 'shop.example.org',
      facts: [
        {
          type: 'pattern',
          key: 'payment',
          value: `card ${card} works`,
          confidence: 0.8,
          sources: 2,
          lastSeen: '2026-11-20T10:00:00.000Z',
        },
      ],
      sessions: [],
      updatedAt: '2026-11-20T10:00:00.000Z',
    }
    const files = [
      {
        path: 'domains/shop.example.org/trajectories/traj_1764000000000_pay001.json',
        content: JSON.stringify(trajectory),
      },
      { path: 'domains/shop.example.org/knowledge.json', content: JSON.stringify(knowledge) },
      {
        path: 'hints.json',
        content: JSON.stringify({ hints: `pay with ${card}`, updatedAt: '2026-11-20T10:00:00.000Z' }),
      },
    ]
    const report = await ops.importAgentMemory(agentA, { files })
    expect(report).toMatchObject({ trajectories: 1, facts: 1, hints: 1 })
    const exported = JSON.stringify((await ops.exportAgentMemory(agentA, {})).files)
    expect(exported).not.toContain(card)
    expect(exported).toMatch(/REDACTED/)
    // A reject policy refuses the import naming the field; nothing of it is written.
    await engine.privacy.setPolicy('agent-b', 'reject', [])
    await expect(ops.importAgentMemory(agentB, { files })).rejects.toMatchObject({ code: 'VALIDATION' })
    expect((await ops.exportAgentMemory(agentB, {})).files).toEqual([])
  })
})
