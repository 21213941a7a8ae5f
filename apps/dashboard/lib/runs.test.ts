import { describe, expect, it } from 'vitest'
import {
  type AppFact,
  applyRunEvent,
  domainHref,
  formatDuration,
  groupFactsByType,
  type KnownSelector,
  lineageTree,
  newestFirst,
  normalizeDomain,
  type Run,
  type RunFilter,
  type RunSession,
  rankSelectorsByElement,
  runDurationMs,
  runMatches,
} from './runs'

function run(id: string, changes: Partial<Run> = {}): Run {
  return {
    id,
    sessionId: 's1',
    parentRunId: null,
    kind: 'START',
    isolation: 'SHARED',
    scope: 'default',
    status: 'RUNNING',
    goal: 'search for shoes',
    domain: 'shop.example.com',
    startUrl: 'https://shop.example.com/',
    currentUrl: null,
    finalUrl: null,
    turnCount: 0,
    success: null,
    summary: null,
    result: null,
    reason: null,
    model: null,
    durationMs: null,
    startedAt: '2026-01-01T10:00:00.000Z',
    updatedAt: '2026-01-01T10:00:00.000Z',
    completedAt: null,
    ...changes,
  }
}

const NO_FILTER: RunFilter = { domain: null, status: null, sessionId: null, scope: null }

describe('the runs list', () => {
  it('matches a domain filter typed as a URL or in capitals, as the API stores it', () => {
    expect(normalizeDomain('https://Shop.Example.com/cart?x=1')).toBe('shop.example.com')
    expect(normalizeDomain(' Shop.Example.COM ')).toBe('shop.example.com')
    expect(normalizeDomain('http://localhost:5173/app')).toBe('localhost:5173')
    expect(runMatches(run('r1'), { ...NO_FILTER, domain: 'https://SHOP.example.com/x' })).toBe(true)
    expect(runMatches(run('r1'), { ...NO_FILTER, domain: 'other.example.com' })).toBe(false)
    expect(runMatches(run('r1'), { ...NO_FILTER, status: 'FAILED' })).toBe(false)
    expect(runMatches(run('r1'), { ...NO_FILTER, sessionId: 's2' })).toBe(false)
    expect(runMatches(run('r1'), { ...NO_FILTER, scope: 'eval-a' })).toBe(false)
  })

  it('folds a progress event into the listed run, in place', () => {
    const runs = [run('r1'), run('r2')]
    const progressed = run('r2', {
      currentUrl: 'https://shop.example.com/search',
      turnCount: 3,
      updatedAt: '2026-01-01T10:01:00.000Z',
    })
    const next = applyRunEvent(
      runs,
      { kind: 'PROGRESS', run: progressed, at: progressed.updatedAt },
      NO_FILTER,
    )
    expect(next.reread).toBe(false)
    expect(next.runs.map((r) => [r.id, r.turnCount])).toEqual([
      ['r1', 0],
      ['r2', 3],
    ])
    expect(runs[1]?.turnCount).toBe(0)
  })

  it('never lets an older event overwrite a newer state', () => {
    const newer = run('r1', { turnCount: 6, updatedAt: '2026-01-01T10:02:00.000Z' })
    const older = run('r1', { turnCount: 3, updatedAt: '2026-01-01T10:01:00.000Z' })
    const next = applyRunEvent([newer], { kind: 'PROGRESS', run: older, at: older.updatedAt }, NO_FILTER)
    expect(next.runs[0]?.turnCount).toBe(6)
  })

  it('drops a run that no longer matches the filter, and asks for a read for a matching run it does not list', () => {
    const completed = run('r1', { status: 'COMPLETED', updatedAt: '2026-01-01T10:05:00.000Z' })
    const running: RunFilter = { ...NO_FILTER, status: 'RUNNING' }
    const dropped = applyRunEvent(
      [run('r1')],
      { kind: 'COMPLETED', run: completed, at: completed.updatedAt },
      running,
    )
    expect(dropped).toEqual({ runs: [], reread: false })
    const unknown = applyRunEvent([run('r1')], { kind: 'STARTED', run: run('r9'), at: 'x' }, NO_FILTER)
    expect(unknown.reread).toBe(true)
    expect(unknown.runs.map((r) => r.id)).toEqual(['r1'])
    // A run outside the filter is none of the list's business: no read.
    const elsewhere = applyRunEvent(
      [],
      { kind: 'STARTED', run: run('r9', { domain: 'other.test' }), at: 'x' },
      {
        ...NO_FILTER,
        domain: 'shop.example.com',
      },
    )
    expect(elsewhere).toEqual({ runs: [], reread: false })
  })

  it('times a running run against now and an ended one by its duration', () => {
    const now = new Date('2026-01-01T10:01:30.000Z')
    expect(runDurationMs(run('r1'), now)).toBe(90_000)
    expect(runDurationMs(run('r1', { durationMs: 4_200 }), now)).toBe(4_200)
    expect(runDurationMs(run('r1', { completedAt: '2026-01-01T10:00:10.000Z', status: 'FAILED' }), now)).toBe(
      10_000,
    )
    expect([850, 12_400, 95_000, 120_000, 4_000_000, 7_200_000].map(formatDuration)).toEqual([
      '850 ms',
      '12.4 s',
      '1 min 35 s',
      '2 min',
      '1 h 6 min',
      '2 h',
    ])
  })
})

describe('the lineage tree', () => {
  it('puts every resume and fork under its parent, from the root', () => {
    const root = run('r1')
    const resume = run('r2', { parentRunId: 'r1', kind: 'RESUME' })
    const fork = run('r3', { parentRunId: 'r1', kind: 'FORK', sessionId: 'f1' })
    const grandchild = run('r4', { parentRunId: 'r3', kind: 'RESUME', sessionId: 'f1' })
    const tree = lineageTree({
      rootRunId: 'r1',
      runs: [root, resume, fork, grandchild].map((r, i) => ({
        run: r,
        depth: i === 3 ? 2 : i === 0 ? 0 : 1,
      })),
      ancestry: ['r1', 'r3', 'r4'],
      parentMissing: false,
      truncated: false,
    })
    const shape = (node: NonNullable<typeof tree>): unknown => [node.run.id, node.children.map(shape)]
    expect(tree && shape(tree)).toEqual([
      'r1',
      [
        ['r2', []],
        ['r3', [['r4', []]]],
      ],
    ])
  })

  it('hangs a run whose parent was cut off under the root, and has no tree without its root', () => {
    const tree = lineageTree({
      rootRunId: 'r1',
      runs: [
        { run: run('r1', { parentRunId: 'gone', kind: 'RESUME' }), depth: 0 },
        { run: run('r5', { parentRunId: 'r4' }), depth: 3 },
      ],
      ancestry: ['r1'],
      parentMissing: true,
      truncated: true,
    })
    expect(tree?.children.map((c) => c.run.id)).toEqual(['r5'])
    expect(
      lineageTree({ rootRunId: 'x', runs: [], ancestry: [], parentMissing: false, truncated: false }),
    ).toBeNull()
  })
})

describe('a domain’s memory', () => {
  const fact = (key: string, type: string, confidence: number): AppFact => ({
    id: key,
    scope: 'default',
    domain: 'shop.example.com',
    type,
    key,
    value: 'v',
    confidence,
    sources: 1,
    lastSeenAt: '2026-01-01T00:00:00.000Z',
  })

  it('groups facts by type in the run context’s order, most confident first', () => {
    const groups = groupFactsByType([
      fact('quirk-a', 'QUIRK', 0.6),
      fact('wait', 'TIMING', 0.5),
      fact('search-box', 'SELECTOR', 0.9),
      fact('load', 'TIMING', 0.84),
    ])
    expect(groups.map((g) => [g.type, g.facts.map((f) => f.key)])).toEqual([
      ['TIMING', ['load', 'wait']],
      ['SELECTOR', ['search-box']],
      ['QUIRK', ['quirk-a']],
    ])
  })

  const selector = (
    selector: string,
    element: string,
    changes: Partial<KnownSelector> = {},
  ): KnownSelector => ({
    id: selector,
    scope: 'default',
    domain: 'shop.example.com',
    element,
    selector,
    successCount: 1,
    failureCount: 0,
    consecutiveFailures: 0,
    knownGood: true,
    volatile: false,
    lastUsedAt: '2026-01-01T00:00:00.000Z',
    ...changes,
  })

  it('ranks selectors per element: successes, then fewest failures, stable before volatile, then recent', () => {
    const groups = rankSelectorsByElement([
      selector('#q', 'input "Search"', { successCount: 2 }),
      selector('@e12', 'button "Go"', { successCount: 5, volatile: true }),
      selector('button.go', 'button "Go"', { successCount: 5 }),
      selector('input[name=q]', 'input "Search"', { successCount: 2, failureCount: 1 }),
      selector('.old', 'input "Search"', {
        successCount: 2,
        failureCount: 1,
        lastUsedAt: '2025-01-01T00:00:00.000Z',
      }),
      selector('#gone', 'button "Go"', { successCount: 0, failureCount: 3, knownGood: false }),
    ])
    expect(groups.map((g) => [g.element, g.selectors.map((s) => s.selector)])).toEqual([
      ['button "Go"', ['button.go', '@e12', '#gone']],
      ['input "Search"', ['#q', 'input[name=q]', '.old']],
    ])
  })

  it('lists the session history newest first, and links a domain with a port', () => {
    const session = (id: string, endedAt: string): RunSession => ({
      id,
      sessionId: 's',
      runId: id,
      domain: 'd',
      goal: 'g',
      outcome: '',
      success: true,
      finalUrl: null,
      turnsUsed: 1,
      durationMs: 1,
      endedAt,
    })
    expect(
      newestFirst([session('a', '2026-01-01T00:00:00.000Z'), session('b', '2026-01-02T00:00:00.000Z')]).map(
        (s) => s.id,
      ),
    ).toEqual(['b', 'a'])
    expect(domainHref('agent-1', 'localhost:5173')).toBe('/runs/domains/localhost%3A5173?agent=agent-1')
    expect(domainHref('agent-1', 'x.com', 'eval-a')).toBe('/runs/domains/x.com?agent=agent-1&scope=eval-a')
    expect(domainHref('agent-1', 'x.com', 'default')).toBe('/runs/domains/x.com?agent=agent-1')
  })
})
