import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { agentMemoryFiles } from './agent-memory-export.ts'
import { type AgentMemoryFile, type AgentMemoryImportPlan, agentMemoryPlace } from './agent-memory-format.ts'
import { ACTION_VALUE_FIELDS, planAgentMemoryImport } from './agent-memory-import.ts'
import { DEFAULT_TRAJECTORY_LIMITS, TrajectoryLimitsSchema } from './rules.ts'

const now = new Date('2026-11-26T12:00:00.000Z')
const plan = (files: AgentMemoryFile[], limits = DEFAULT_TRAJECTORY_LIMITS) =>
  planAgentMemoryImport(files, { limits, now })
const file = (path: string, content: unknown): AgentMemoryFile => ({ path, content: JSON.stringify(content) })
/** What an export of the plan's records writes (as a repository would hand them back). */
const exported = (p: AgentMemoryImportPlan) =>
  Object.fromEntries(agentMemoryFiles(p).map((f) => [f.path, JSON.parse(f.content)]))

const trajectory = (steps: unknown[], extra: Record<string, unknown> = {}) => ({
  id: 'traj_1_abc',
  goal: 'Open the settings page',
  steps,
  success: true,
  durationMs: 1000,
  model: 'gpt-5.4',
  timestamp: '2026-11-01T00:00:00.000Z',
  ...extra,
})
const TRAJ = 'domains/a.example/trajectories/traj_1_abc.json'

describe('the .agent-memory layout', () => {
  it('knows each place of the documented layout and nothing else', () => {
    expect(agentMemoryPlace('domains/localhost_5173/knowledge.json')).toEqual({
      kind: 'knowledge',
      directory: 'localhost_5173',
    })
    expect(agentMemoryPlace('.agent-memory/domains/x/selectors.json')).toEqual({
      kind: 'selectors',
      directory: 'x',
    })
    expect(agentMemoryPlace('./domains/x/trajectories/traj_1.json')).toEqual({
      kind: 'trajectory',
      directory: 'x',
      name: 'traj_1.json',
    })
    expect(agentMemoryPlace('agent-runs/run_1.json')).toEqual({ kind: 'run', name: 'run_1.json' })
    expect(agentMemoryPlace('runs/run_1.json')).toEqual({ kind: 'suiteSummary', name: 'run_1.json' })
    expect(agentMemoryPlace('hints.json')).toEqual({ kind: 'hints' })
    for (const unknown of [
      'domains/../hints.json',
      'domains/x/notes.json',
      'agent-runs/.json',
      'x.json',
      'domains//knowledge.json',
    ])
      expect(agentMemoryPlace(unknown), unknown).toEqual({ kind: 'unknown' })
  })
})

describe('trajectory steps', () => {
  it.each([
    ...Object.entries(ACTION_VALUE_FIELDS).filter(([verb]) => verb !== 'wait'),
    ['run_tool', 'value'],
  ])('%s carries its value in `%s` and back', (verb, field) => {
    const step = {
      url: 'https://a.example/',
      action: { action: verb, selector: '#x', [field]: 'some value' },
      snapshotHash: '1',
    }
    const p = plan([file(TRAJ, trajectory([step]))])
    expect(p.trajectories[0]?.steps[0]).toMatchObject({ action: verb, selector: '#x', value: 'some value' })
    expect(exported(p)[TRAJ]).toStrictEqual(trajectory([step]))
  })

  it('keeps a wait in ms as a number, and a value Engram cannot hold verbatim', () => {
    const steps = [
      { url: 'https://a.example/', action: { action: 'wait', ms: 1500 } },
      { url: 'https://a.example/', action: { action: 'wait', ms: 'soon' }, verified: 'yes' },
      { url: '', action: { action: 'scroll', direction: 'down', amount: 500 } },
    ]
    const p = plan([file(TRAJ, trajectory(steps, { finalNote: { nested: [1, 2] } }))])
    expect(p.trajectories[0]?.steps.map((s) => [s.value, s.verified, s.url])).toEqual([
      ['1500', null, 'https://a.example/'],
      [null, null, 'https://a.example/'],
      ['down', null, null],
    ])
    expect(exported(p)[TRAJ]).toStrictEqual(trajectory(steps, { finalNote: { nested: [1, 2] } }))
  })

  it('refuses a step without an action verb, naming the step', () => {
    const p = plan([file(TRAJ, trajectory([{ url: 'https://a.example/', action: { selector: '#x' } }]))])
    expect(p.skipped).toEqual([{ path: TRAJ, reason: 'steps[0].action.action: must be a non-empty text' }])
  })
})

describe('knowledge, selectors, runs and hints', () => {
  it('keeps dates as written and file fields, and moves updatedAt only when Engram adds something newer', () => {
    const knowledge = {
      domain: 'a.example',
      facts: [
        {
          type: 'quirk',
          key: 'k',
          value: 'v',
          confidence: 0.6,
          sources: 1,
          lastSeen: '2026-11-01T00:00:00Z',
        },
      ],
      updatedAt: '2026-11-01T00:00:00Z',
      custom: true,
    }
    const p = plan([file('domains/a.example/knowledge.json', knowledge)])
    expect(p.facts[0]?.lastSeenAt.toISOString()).toBe('2026-11-01T00:00:00.000Z')
    expect(exported(p)['domains/a.example/knowledge.json']).toStrictEqual(knowledge)
    const later = new Date('2026-11-20T00:00:00.000Z')
    p.facts.push({
      ...(p.facts[0] as (typeof p.facts)[0]),
      key: 'k2',
      lastSeenAt: later,
      createdAt: later,
      extra: null,
    })
    expect(exported(p)['domains/a.example/knowledge.json']).toMatchObject({
      custom: true,
      updatedAt: later.toISOString(),
      facts: [
        { key: 'k', lastSeen: '2026-11-01T00:00:00Z' },
        { key: 'k2', type: 'quirk' },
      ],
    })
  })

  it("gives an entry's two selectors its successCount, and writes the element's highest back", () => {
    const selectors = {
      entries: {
        'button "Go"': {
          element: 'button "Go"',
          lastRef: '@e2',
          stableSelector: '#go',
          successCount: 4,
          lastUsed: '2026-11-01T00:00:00.000Z',
        },
      },
      updatedAt: '2026-11-01T00:00:00.000Z',
    }
    const p = plan([file('domains/a.example/selectors.json', selectors)])
    expect(p.selectors.map((s) => [s.selector, s.successCount])).toEqual([
      ['#go', 4],
      ['@e2', 4],
    ])
    expect(exported(p)['domains/a.example/selectors.json']).toStrictEqual(selectors)
    ;(p.selectors[0] as (typeof p.selectors)[0]).successCount = 6
    expect(exported(p)['domains/a.example/selectors.json'].entries['button "Go"'].successCount).toBe(6)
  })

  it('reads a manifest whose domain is a URL, and writes it back as written', () => {
    const manifest = {
      runId: 'run_1_x',
      status: 'running',
      goal: 'Check out',
      domain: 'https://Shop.Example.org/cart',
      startedAt: '2026-11-01T00:00:00.000Z',
      updatedAt: '2026-11-01T00:00:00.000Z',
      artifactPaths: 'none',
      turnCount: 0,
    }
    const p = plan([file('agent-runs/run_1_x.json', manifest)])
    expect(p.runs[0]).toMatchObject({
      domain: 'shop.example.org',
      status: 'RUNNING',
      sessionId: 'run_1_x',
      artifactPaths: [],
    })
    expect(exported(p)['agent-runs/run_1_x.json']).toStrictEqual(manifest)
  })

  it('reports a file over a per-record limit with the field and the limit, and refuses a directory over its own', () => {
    const limits = TrajectoryLimitsSchema.parse({ maxExtraBytes: 100, maxImportFiles: 2 })
    const p = plan(
      [file('hints.json', { hints: 'h', updatedAt: '2026-11-01T00:00:00.000Z', blob: 'x'.repeat(200) })],
      limits,
    )
    expect(p.skipped[0]?.reason).toBe(
      'extra: the fields Engram keeps verbatim must be at most 100 bytes of JSON',
    )
    const tooMany = () => plan([file('hints.json', {}), file('a.json', {}), file('b.json', {})], limits)
    expect(tooMany).toThrow(ValidationError)
    expect(tooMany).toThrow(
      expect.objectContaining({ issues: [{ field: 'files', message: 'must be at most 2 files', limit: 2 }] }),
    )
  })
})
