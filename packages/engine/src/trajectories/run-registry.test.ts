import { RUN_ID_PATTERN } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { SHOP, START, trajectoryEngine } from './trajectory-fixture.ts'

const A = 'agent-a'
const B = 'agent-b'
const at = (ms: number) => new Date(START + ms)

describe('the run registry: a run from start to end (spec 004)', () => {
  it('start → progress → complete keeps the trajectory, the session entry, the facts and the selectors', async () => {
    const t = await trajectoryEngine()
    const run = await t.runs.startRun(A, {
      goal: 'Search for smart watch reviews',
      startUrl: 'https://Shop.Example.com/',
    })
    // Ids in the documented system's shape from the seeded random; the domain is the URL's host.
    expect(run.id).toMatch(/^run_1773133200000_[0-9a-z]{6}$/)
    expect(run.sessionId).toMatch(/^session_1773133200000_[0-9a-z]{6}$/)
    expect(run).toMatchObject({
      agentId: A,
      kind: 'START',
      status: 'RUNNING',
      isolation: 'SHARED',
      scope: 'default',
      domain: SHOP,
      startUrl: 'https://Shop.Example.com/',
      currentUrl: null,
      turnCount: 0,
      success: null,
      parentRunId: null,
    })
    t.advance(30_000)
    const progressed = await t.runs.reportProgress(A, run.id, {
      currentUrl: `https://${SHOP}/search?q=watch`,
      turnCount: 3,
      summary: 'searching',
    })
    expect(progressed).toMatchObject({ turnCount: 3, summary: 'searching', updatedAt: at(30_000) })
    t.advance(60_000)
    const ended = await t.runs.completeRun(A, run.id, {
      outcome: 'Found three reviews',
      turnCount: 5,
      steps: [
        { action: 'click', selector: '#search', url: `https://${SHOP}/`, verified: true },
        { action: 'type', selector: '#search', value: 'smart watch', verified: true },
        { action: 'press', value: 'Enter' },
      ],
      facts: [{ type: 'TIMING', key: 'search', value: 'results take 2s' }],
      selectors: [
        { element: 'button "Search"', selector: '#search' },
        { element: 'link "Reviews"', selector: '@e12', outcome: 'FAILURE' },
      ],
    })
    expect(ended.run).toMatchObject({
      status: 'COMPLETED',
      success: true,
      // Defaults: the last reported URL, the time since the start.
      finalUrl: `https://${SHOP}/search?q=watch`,
      durationMs: 90_000,
      turnCount: 5,
      summary: 'Found three reviews',
      completedAt: at(90_000),
    })
    expect(ended.trajectory).toMatchObject({
      scope: 'default',
      domain: SHOP,
      origin: 'https://shop.example.com',
      goal: 'Search for smart watch reviews',
      words: ['search', 'for', 'smart', 'watch', 'reviews'],
      runId: run.id,
      stepCount: 3,
      verifiedCount: 2,
      success: true,
      turns: 5,
      durationMs: 90_000,
      outcome: 'Found three reviews',
      recordedAt: at(90_000),
    })
    expect(ended.trajectory?.steps[2]).toEqual({
      action: 'press',
      selector: null,
      value: 'Enter',
      url: null,
      verified: null,
      durationMs: null,
      extra: null,
    })
    expect(await t.memory.trajectory(A, ended.trajectory?.id as string)).toEqual(ended.trajectory)
    expect(await t.memory.runSessions(A, { domain: SHOP })).toEqual([
      expect.objectContaining({
        sessionId: run.sessionId,
        runId: run.id,
        goal: 'Search for smart watch reviews',
        outcome: 'Found three reviews',
        success: true,
        finalUrl: `https://${SHOP}/search?q=watch`,
        turnsUsed: 5,
        durationMs: 90_000,
        endedAt: at(90_000),
      }),
    ])
    const facts = await t.memory.appFacts(A, { domain: SHOP })
    expect(facts.items.map((f) => [f.type, f.key, f.value, f.confidence, f.sources])).toEqual([
      ['TIMING', 'search', 'results take 2s', 0.6, 1],
    ])
    const selectors = await t.memory.knownSelectors(A, { domain: SHOP })
    expect(selectors.items.map((s) => [s.element, s.selector, s.successCount, s.failureCount])).toEqual([
      ['button "Search"', '#search', 1, 0],
      ['link "Reviews"', '@e12', 0, 1],
    ])
    // B has none of it.
    expect(await t.runs.run(B, run.id)).toBeNull()
    expect((await t.memory.appFacts(B, {})).totalCount).toBe(0)
  })

  it('ending twice, progress after the end and ending another agent’s run are refused', async () => {
    const t = await trajectoryEngine()
    const run = await t.runs.startRun(A, { goal: 'Log in', domain: SHOP })
    await t.runs.completeRun(A, run.id, {})
    const again = t.runs.completeRun(A, run.id, {})
    await expect(again).rejects.toMatchObject({ code: 'CONFLICT', field: 'runId' })
    await expect(t.runs.failRun(A, run.id, { reason: 'late' })).rejects.toMatchObject({ code: 'CONFLICT' })
    await expect(t.runs.reportProgress(A, run.id, { turnCount: 9 })).rejects.toMatchObject({
      code: 'CONFLICT',
      field: 'runId',
    })
    await expect(t.runs.completeRun(B, run.id, {})).rejects.toMatchObject({
      code: 'NOT_FOUND',
      resource: 'Run',
    })
    // Two ends racing in one process: exactly one wins.
    const raced = await t.runs.startRun(A, { goal: 'Log out', domain: SHOP })
    const results = await Promise.allSettled([
      t.runs.completeRun(A, raced.id, { outcome: 'done' }),
      t.runs.failRun(A, raced.id, { reason: 'gave up' }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    expect(await t.memory.runSessions(A, { domain: SHOP })).toHaveLength(2)
    // A run id is the agent's: taking one twice is CONFLICT, another agent may use it.
    await expect(t.runs.startRun(A, { runId: run.id, goal: 'x y', domain: SHOP })).rejects.toMatchObject({
      code: 'CONFLICT',
      field: 'runId',
    })
    expect((await t.runs.startRun(B, { runId: run.id, goal: 'x y', domain: SHOP })).agentId).toBe(B)
  })

  it('a failed run keeps no trajectory; its failure enters the session history and counts against selectors', async () => {
    const t = await trajectoryEngine()
    const run = await t.runs.startRun(A, { goal: 'Buy the watch', domain: SHOP, runId: 'ci-42' })
    await t.runs.reportProgress(A, run.id, { currentUrl: `https://${SHOP}/cart` })
    t.advance(5_000)
    const failed = await t.runs.failRun(A, run.id, {
      reason: 'payment page timed out',
      facts: [{ type: 'QUIRK', key: 'checkout', value: 'needs a login first' }],
      selectors: [{ element: 'button "Pay"', selector: '#pay', outcome: 'FAILURE' }],
    })
    expect(failed.run).toMatchObject({
      status: 'FAILED',
      success: false,
      reason: 'payment page timed out',
      finalUrl: `https://${SHOP}/cart`,
      durationMs: 5_000,
    })
    expect(failed.trajectory).toBeNull()
    expect(failed.session).toMatchObject({ success: false, outcome: 'payment page timed out' })
    expect((await t.memory.trajectories(A, {})).totalCount).toBe(0)
    expect(failed.facts.map((f) => f.value)).toEqual(['needs a login first'])
    expect(failed.selectors[0]).toMatchObject({ successCount: 0, failureCount: 1, consecutiveFailures: 1 })
  })
})

describe('resume, fork and lineage', () => {
  it('resume continues in the run session from the final URL; fork starts a new session', async () => {
    const t = await trajectoryEngine()
    const parent = await t.runs.startRun(A, {
      goal: 'Build a todo app',
      startUrl: 'https://example.com/',
      sessionId: 'proj_123',
      model: 'm1',
    })
    await t.runs.completeRun(A, parent.id, { finalUrl: 'https://example.com/project/123' })
    t.advance(1_000)
    const resumed = await t.runs.resumeRun(A, parent.id, { goal: 'Now add dark mode', newRunId: 'r2' })
    expect(resumed).toMatchObject({
      id: 'r2',
      kind: 'RESUME',
      parentRunId: parent.id,
      sessionId: 'proj_123',
      goal: 'Now add dark mode',
      domain: 'example.com',
      startUrl: 'https://example.com/project/123',
      status: 'RUNNING',
      scope: 'default',
      model: 'm1',
    })
    // The default goal is the parent's; a running parent resumes from its last reported URL.
    await t.runs.reportProgress(A, 'r2', { currentUrl: 'https://example.com/settings' })
    const again = await t.runs.resumeRun(A, 'r2')
    expect(again).toMatchObject({ goal: 'Now add dark mode', startUrl: 'https://example.com/settings' })
    const forked = await t.runs.forkRun(A, parent.id, { goal: 'Build auth instead' })
    expect(forked.kind).toBe('FORK')
    expect(forked.sessionId).toMatch(/^fork_1773133201000_[0-9a-z]{6}$/)
    expect(forked.startUrl).toBe('https://example.com/project/123')
    const named = await t.runs.forkRun(A, parent.id, { goal: 'Another branch', sessionId: 'proj_9' })
    expect(named.sessionId).toBe('proj_9')
    await expect(t.runs.resumeRun(B, parent.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })

  it('a PER_RUN parent’s resume keeps reading and writing the parent’s own scope', async () => {
    const t = await trajectoryEngine()
    const parent = await t.runs.startRun(A, { goal: 'Try the search', domain: SHOP, isolation: 'PER_RUN' })
    expect(parent.scope).toBe(`run:${parent.id}`)
    const resumed = await t.runs.resumeRun(A, parent.id)
    expect(resumed).toMatchObject({ isolation: 'PER_RUN', scope: `run:${parent.id}` })
    const forked = await t.runs.forkRun(A, parent.id, { goal: 'Try the menus' })
    expect(forked.scope).toBe(`run:${parent.id}`)
  })

  it('lineage: the tree from the oldest stored ancestor, breadth first; a deleted parent shows as missing', async () => {
    const t = await trajectoryEngine()
    const root = await t.runs.startRun(A, { runId: 'root', goal: 'Build the app', domain: SHOP })
    t.advance(1)
    await t.runs.resumeRun(A, 'root', { newRunId: 'r1' })
    t.advance(1)
    await t.runs.forkRun(A, 'root', { goal: 'Fork it', newRunId: 'f1' })
    t.advance(1)
    await t.runs.resumeRun(A, 'r1', { newRunId: 'r1a' })
    const lineage = await t.runs.runLineage(A, 'r1a')
    expect(lineage.rootRunId).toBe(root.id)
    expect(lineage.ancestry).toEqual(['root', 'r1', 'r1a'])
    expect(lineage.runs.map((n) => [n.run.id, n.depth])).toEqual([
      ['root', 0],
      ['r1', 1],
      ['f1', 1],
      ['r1a', 2],
    ])
    expect(lineage).toMatchObject({ parentMissing: false, truncated: false })
    const cut = await t.runs.runLineage(A, 'r1a', 2)
    expect(cut.runs.map((n) => n.run.id)).toEqual(['root', 'r1'])
    expect(cut.truncated).toBe(true)
    await t.runs.deleteRun(A, 'root')
    const orphaned = await t.runs.runLineage(A, 'r1a')
    expect(orphaned).toMatchObject({ rootRunId: 'r1', ancestry: ['r1', 'r1a'], parentMissing: true })
    expect(orphaned.runs.map((n) => n.run.id)).toEqual(['r1', 'r1a'])
    await expect(t.runs.runLineage(B, 'r1a')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })
})

describe('listing runs', () => {
  it('filters by domain, status, run session, parent and scope, newest update first, paged by cursor', async () => {
    const t = await trajectoryEngine()
    const ids: string[] = []
    for (const [i, domain] of ['a.example', 'b.example', 'a.example', 'a.example', 'c.example'].entries()) {
      t.advance(1_000)
      const run = await t.runs.startRun(A, {
        runId: `run-${i}`,
        goal: `goal number ${i}`,
        domain,
        sessionId: i < 2 ? 's1' : 's2',
        ...(i === 4 ? { scope: 'track-1' } : {}),
      })
      ids.push(run.id)
    }
    t.advance(1_000)
    await t.runs.completeRun(A, 'run-0', {})
    await t.runs.resumeRun(A, 'run-0', { newRunId: 'run-5' })
    const all = await t.runs.runs(A, {})
    expect(all.runs.map((r) => r.id)).toEqual(['run-5', 'run-0', 'run-4', 'run-3', 'run-2', 'run-1'])
    expect(all.nextCursor).toBeNull()
    const byDomain = await t.runs.runs(A, { domain: 'https://A.example/path' })
    expect(byDomain.runs.map((r) => r.id)).toEqual(['run-5', 'run-0', 'run-3', 'run-2'])
    expect((await t.runs.runs(A, { status: 'COMPLETED' })).runs.map((r) => r.id)).toEqual(['run-0'])
    expect((await t.runs.runs(A, { sessionId: 's1' })).runs.map((r) => r.id)).toEqual([
      'run-5',
      'run-0',
      'run-1',
    ])
    expect((await t.runs.runs(A, { parentRunId: 'run-0' })).runs.map((r) => r.id)).toEqual(['run-5'])
    expect((await t.runs.runs(A, { scope: 'track-1' })).runs.map((r) => r.id)).toEqual(['run-4'])
    // Pages of two through the cursor, the total counted each time.
    const seen: string[] = []
    let after: string | null = null
    for (let page = 0; page < 5; page++) {
      const got = await t.runs.runs(A, {}, { limit: 2, after })
      expect(got.totalCount).toBe(6)
      seen.push(...got.runs.map((r) => r.id))
      after = got.nextCursor
      if (!after) break
    }
    expect(seen).toEqual(all.runs.map((r) => r.id))
    expect((await t.runs.runs(B, {})).totalCount).toBe(0)
    await expect(t.runs.runs(A, {}, { after: 'not-a-cursor' })).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'after' })],
    })
    await expect(t.runs.runs(A, {}, { limit: 201 })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'limit', limit: 200 })],
    })
  })
})

describe('memory isolation of runs (spec 004’s A/B benchmarking)', () => {
  it('PER_RUN keeps a run’s memory out of the shared scope; OFF records nothing but the run', async () => {
    const t = await trajectoryEngine()
    const steps = [{ action: 'click', selector: '#search', verified: true }]
    const facts = [{ type: 'TIMING' as const, key: 'load', value: 'slow' }]
    const isolated = await t.runs.startRun(A, { goal: 'Search the shop', domain: SHOP, isolation: 'PER_RUN' })
    const isolatedEnd = await t.runs.completeRun(A, isolated.id, { steps, facts })
    expect(isolatedEnd.trajectory?.scope).toBe(`run:${isolated.id}`)
    expect((await t.memory.trajectories(A, { scope: 'default' })).totalCount).toBe(0)
    expect((await t.memory.appFacts(A, {})).totalCount).toBe(0)
    expect(await t.memory.runSessions(A, { domain: SHOP })).toEqual([])
    expect((await t.memory.appFacts(A, { scope: `run:${isolated.id}` })).totalCount).toBe(1)
    expect(await t.memory.runSessions(A, { domain: SHOP, scope: `run:${isolated.id}` })).toHaveLength(1)

    const off = await t.runs.startRun(A, { goal: 'Search the shop', domain: SHOP, isolation: 'OFF' })
    expect(off.scope).toBeNull()
    const offEnd = await t.runs.completeRun(A, off.id, {
      steps,
      facts,
      selectors: [{ element: 'button "Go"', selector: '#go' }],
    })
    expect(offEnd).toMatchObject({ trajectory: null, facts: [], selectors: [], session: null })
    expect(offEnd.run.status).toBe('COMPLETED')
    const domains = await t.memory.domains(A)
    expect(domains.map((d) => d.scope)).toEqual([`run:${isolated.id}`])
    // A record call naming the OFF run is refused rather than silently dropped.
    await expect(t.memory.recordKnowledge(A, { domain: SHOP, runId: off.id, facts })).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'runId' })],
    })
  })
})

describe('deleting a run', () => {
  it('takes back exactly what the run contributed, and leaves the rest', async () => {
    const t = await trajectoryEngine()
    const fact = { type: 'PATTERN' as const, key: 'login', value: 'click login, fill email' }
    const first = await t.runs.startRun(A, { runId: 'first', goal: 'Log in', domain: SHOP })
    await t.runs.completeRun(A, 'first', {
      steps: [{ action: 'click', selector: '#login' }],
      facts: [fact],
      selectors: [{ element: 'button "Login"', selector: '#login' }],
    })
    await t.runs.startRun(A, { runId: 'second', goal: 'Log in again', domain: SHOP })
    await t.runs.completeRun(A, 'second', {
      facts: [fact, { type: 'QUIRK', key: 'banner', value: 'cookie banner on load' }],
      selectors: [{ element: 'button "Login"', selector: '#login' }],
    })
    expect((await t.memory.appFacts(A, {})).items.map((f) => [f.key, f.sources])).toEqual([
      ['login', 2],
      ['banner', 1],
    ])
    const forgotten = await t.runs.deleteRun(A, 'second')
    expect(forgotten).toEqual({ runs: 1, trajectories: 0, runSessions: 1, facts: 1, selectors: 0, hints: 0 })
    expect((await t.memory.appFacts(A, {})).items.map((f) => [f.key, f.sources])).toEqual([['login', 1]])
    expect((await t.memory.knownSelectors(A, {})).items.map((s) => s.successCount)).toEqual([1])
    expect((await t.memory.runSessions(A, { domain: SHOP })).map((e) => e.runId)).toEqual([first.id])
    const gone = await t.runs.deleteRun(A, 'first')
    expect(gone).toEqual({ runs: 1, trajectories: 1, runSessions: 1, facts: 1, selectors: 1, hints: 0 })
    expect(await t.memory.domains(A)).toEqual([])
    await expect(t.runs.deleteRun(A, 'first')).rejects.toMatchObject({ code: 'NOT_FOUND', id: 'first' })
  })
})

describe('run events', () => {
  it('publishes STARTED, PROGRESS and the end in order, with ids only', async () => {
    const t = await trajectoryEngine()
    const run = await t.runs.startRun(A, { goal: 'Watch me', domain: SHOP })
    await t.runs.reportProgress(A, run.id, { turnCount: 3 })
    t.advance(10)
    await t.runs.completeRun(A, run.id, {})
    const other = await t.runs.startRun(B, { goal: 'Fail me', domain: 'b.example' })
    await t.runs.failRun(B, other.id, { reason: 'no' })
    await expect(t.runs.reportProgress(A, run.id, {})).rejects.toMatchObject({ code: 'CONFLICT' })
    await t.settle()
    expect(t.events).toEqual([
      { agentId: A, runId: run.id, domain: SHOP, kind: 'STARTED', at: at(0).toISOString() },
      { agentId: A, runId: run.id, domain: SHOP, kind: 'PROGRESS', at: at(0).toISOString() },
      { agentId: A, runId: run.id, domain: SHOP, kind: 'COMPLETED', at: at(10).toISOString() },
      { agentId: B, runId: other.id, domain: 'b.example', kind: 'STARTED', at: at(10).toISOString() },
      { agentId: B, runId: other.id, domain: 'b.example', kind: 'FAILED', at: at(10).toISOString() },
    ])
    await t.close()
  })
})

describe('bad input: typed errors naming the field and the limit', () => {
  it('refuses what the registry cannot keep before writing anything', async () => {
    const t = await trajectoryEngine({ trajectoryLimits: { maxStepsPerTrajectory: 2, maxGoalChars: 20 } })
    const refused = async (promise: Promise<unknown>) => {
      const error = await promise.then(
        () => null,
        (e: unknown) => e,
      )
      expect(error).toMatchObject({ code: 'VALIDATION' })
      return (error as { issues: unknown[] }).issues
    }
    expect(await refused(t.runs.startRun(A, { goal: 'Find the docs' }))).toEqual([
      expect.objectContaining({ field: 'domain' }),
    ])
    expect(await refused(t.runs.startRun(A, { goal: 'Find the docs', startUrl: 'docs' }))).toEqual([
      expect.objectContaining({ field: 'domain' }),
    ])
    expect(await refused(t.runs.startRun(A, { goal: 'Find the docs', domain: '   ' }))).toEqual([
      expect.objectContaining({ field: 'domain', limit: 1 }),
    ])
    expect(await refused(t.runs.startRun(A, { goal: 'x'.repeat(21), domain: SHOP }))).toEqual([
      expect.objectContaining({ field: 'goal', limit: 20 }),
    ])
    expect(
      await refused(t.runs.startRun(A, { goal: 'g', domain: SHOP, isolation: 'PER_RUN', scope: 'track' })),
    ).toEqual([expect.objectContaining({ field: 'scope' })])
    expect(await refused(t.runs.startRun(A, { goal: 'g', domain: SHOP, runId: 'no spaces please' }))).toEqual(
      [expect.objectContaining({ field: 'runId' })],
    )
    const run = await t.runs.startRun(A, { goal: 'Three steps', domain: SHOP })
    const steps = [{ action: 'a' }, { action: 'b' }, { action: ' ' }]
    expect(await refused(t.runs.completeRun(A, run.id, { steps, turnCount: -1 }))).toEqual([
      expect.objectContaining({ field: 'turnCount', limit: 0 }),
      expect.objectContaining({ field: 'steps', limit: 2 }),
      expect.objectContaining({ field: 'steps.2.action', limit: 1 }),
    ])
    expect(await refused(t.runs.failRun(A, run.id, { reason: '' }))).toEqual([
      expect.objectContaining({ field: 'reason', limit: 1 }),
    ])
    // Nothing was written: the run still runs and has no trajectory.
    expect((await t.runs.run(A, run.id))?.status).toBe('RUNNING')
    expect((await t.memory.trajectories(A, {})).totalCount).toBe(0)
    expect(run.id).toMatch(RUN_ID_PATTERN)
  })

  it('rules and limits given to createEngine are checked, naming the option', async () => {
    await expect(trajectoryEngine({ trajectoryRules: { sessionHistoryLimit: 0 } })).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'trajectoryRules.sessionHistoryLimit', limit: 1 })],
    })
    await expect(trajectoryEngine({ trajectoryLimits: { maxGoalChars: 5 } })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'trajectoryLimits.maxGoalChars', limit: 10 })],
    })
  })
})

describe('the sensitive-data policy (spec 001) over what runs write', () => {
  it('redacts what the agent typed by default, and a reject policy refuses the end naming the field', async () => {
    const t = await trajectoryEngine()
    const card = '4111 1111 1111 1111'
    const run = await t.runs.startRun(A, { goal: 'Pay for the watch', domain: SHOP })
    const ended = await t.runs.completeRun(A, run.id, {
      outcome: `paid with ${card}`,
      steps: [{ action: 'type', selector: '#card', value: card }],
      facts: [{ type: 'PATTERN', key: 'payment', value: `card ${card} works` }],
    })
    const stored = JSON.stringify([
      ended.trajectory,
      await t.memory.appFacts(A, {}),
      await t.memory.runSessions(A, { domain: SHOP }),
      await t.runs.run(A, run.id),
    ])
    expect(stored).not.toContain(card)
    expect(ended.trajectory?.steps[0]?.value).toMatch(/REDACTED/)
    await t.engine.privacy.setPolicy(B, 'reject', [])
    const theirs = await t.runs.startRun(B, { goal: 'Pay for the watch', domain: SHOP })
    await expect(
      t.runs.completeRun(B, theirs.id, { steps: [{ action: 'type', value: card }] }),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'steps.0.value' })],
    })
    expect((await t.runs.run(B, theirs.id))?.status).toBe('RUNNING')
    await expect(t.memory.hints.add(B, { text: `use ${card}` })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'text' })],
    })
  })
})
