import {
  createTokenCounter,
  DEFAULT_TRAJECTORY_RULES,
  goalWords,
  type MemoryIsolation,
  runMemoryScope,
  ValidationError,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { createOperations } from '../operations/operations.ts'
import type { Principal } from '../operations/principal.ts'
import type { NewTrajectory, TrajectoryMemoryRepository } from '../ports/trajectories.ts'
import { createInMemoryStorage } from '../testing/index.ts'

// The run context and reference matching (issue 16, spec 004) on the in-memory storage, through
// the operations layer (the handlers every door answers from).

const DAY = 86_400_000
const NOW = new Date('2026-06-01T12:00:00.000Z')
const clock = { now: () => NOW }
const ago = (days: number) => new Date(NOW.getTime() - days * DAY)
const operator: Principal = { kind: 'operator' }
const agentA = { kind: 'agent', agentId: 'agent-a' } as const satisfies Principal
const agentB = { kind: 'agent', agentId: 'agent-b' } as const satisfies Principal
const quiet = { info() {}, warn() {}, error() {} }
const DOMAIN = 'shop.example.com'

let nextId = 1
function trajectory(goal: string, more: Partial<NewTrajectory> = {}): NewTrajectory {
  const steps = [
    { action: 'click', selector: '#search', value: null, url: `https://${DOMAIN}/`, verified: true },
    { action: 'type', selector: '#search', value: goal, url: `https://${DOMAIN}/`, verified: true },
    { action: 'press', selector: '#search', value: 'Enter', url: `https://${DOMAIN}/`, verified: false },
  ].map((s) => ({ ...s, durationMs: 1_000, extra: null }))
  return {
    id: `traj_${nextId++}`,
    scope: 'default',
    domain: DOMAIN,
    origin: `https://${DOMAIN}`,
    goal,
    words: goalWords(goal),
    runId: null,
    steps,
    stepCount: steps.length,
    verifiedCount: steps.filter((s) => s.verified).length,
    success: true,
    turns: 4,
    durationMs: 20_000,
    outcome: 'found it',
    model: null,
    recordedAt: ago(1),
    extra: null,
    ...more,
  }
}

async function setUp() {
  const engine = createEngine({
    storage: createInMemoryStorage(clock),
    clock,
    tokenCounter: createTokenCounter(),
    log: quiet,
    optimizer: { intervalMs: 0 },
  })
  const ops = createOperations(engine)
  await ops.createAgent(operator, { id: 'agent-a' })
  await ops.createAgent(operator, { id: 'agent-b' })
  return { engine, ops, repo: engine.storage.trajectories }
}

/** A domain with every layer: five run sessions, three trajectories, facts, selectors and hints. */
async function seedDomain(repo: TrajectoryMemoryRepository, agentId = 'agent-a', scope = 'default') {
  for (let i = 0; i < 5; i++) {
    await repo.insertRunSession(
      agentId,
      {
        scope,
        domain: DOMAIN,
        sessionId: 'proj_1',
        runId: null,
        goal: `Earlier task ${i}`,
        outcome: `Finished task ${i}`,
        success: i !== 2,
        finalUrl: `https://${DOMAIN}/done/${i}`,
        turnsUsed: 5 + i,
        durationMs: 30_000,
        endedAt: ago(i + 1),
        extra: null,
      },
      DEFAULT_TRAJECTORY_RULES.sessionHistoryLimit,
    )
  }
  const ids = {
    best: (
      await repo.insertTrajectory(agentId, trajectory('search for smart watch reviews', { scope }), 1_000)
    ).id,
    partial: (await repo.insertTrajectory(agentId, trajectory('search for watch straps', { scope }), 1_000))
      .id,
    other: (await repo.insertTrajectory(agentId, trajectory('change the account password', { scope }), 1_000))
      .id,
  }
  const rules = DEFAULT_TRAJECTORY_RULES
  const fact = (type: 'TIMING' | 'QUIRK', key: string, value: string) =>
    repo.observeFact(agentId, { scope, domain: DOMAIN, type, key, value }, ago(1), rules, null)
  await fact('TIMING', 'search', 'results take 2s to load')
  await fact('TIMING', 'search', 'results take 2s to load')
  await fact('QUIRK', 'modal', 'the cookie banner covers the search box')
  for (const outcome of ['SUCCESS', 'SUCCESS', 'FAILURE'] as const)
    await repo.observeSelector(
      agentId,
      { scope, domain: DOMAIN, element: 'searchbox "Search"', selector: '#search', outcome },
      ago(1),
      null,
    )
  await repo.addHint(agentId, {
    scope,
    text: 'Close cookie banners before typing',
    createdAt: ago(2),
    updatedAt: ago(2),
    extra: null,
  })
  return ids
}

async function startRun(repo: TrajectoryMemoryRepository, runId: string, isolation: MemoryIsolation) {
  return repo.insertRun('agent-a', {
    id: runId,
    sessionId: 'proj_1',
    parentRunId: null,
    kind: 'START',
    isolation,
    scope: runMemoryScope(isolation, null, runId),
    status: 'RUNNING',
    goal: 'search for smart watch reviews today',
    domain: DOMAIN,
    startUrl: `https://${DOMAIN}/`,
    currentUrl: null,
    finalUrl: null,
    turnCount: 0,
    success: null,
    summary: null,
    result: null,
    reason: null,
    artifactPaths: [],
    model: null,
    durationMs: null,
    extra: null,
    startedAt: NOW,
    updatedAt: NOW,
    completedAt: null,
  })
}

describe('runContext', () => {
  it('gives a seeded domain all five sections in priority order, the best Jaccard match as reference', async () => {
    const { ops, repo } = await setUp()
    const ids = await seedDomain(repo)
    const context = await ops.runContext(agentA, {
      domain: `https://${DOMAIN}/some/page`,
      goal: 'Search for smart watch reviews',
    })
    expect(context.domain).toBe(DOMAIN)
    expect(context.scope).toBe('default')
    expect(context.sections.map((s) => [s.section, s.priority, s.included])).toEqual([
      ['SESSION_HISTORY', 50, true],
      ['REFERENCE_TRAJECTORY', 40, true],
      ['APP_KNOWLEDGE', 30, true],
      ['KNOWN_SELECTORS', 25, true],
      ['HINTS', 20, true],
    ])
    expect(context.text.indexOf('SESSION HISTORY (5 previous runs')).toBe(0)
    const order = [
      'SESSION HISTORY',
      'REFERENCE TRAJECTORY',
      'APP KNOWLEDGE',
      'KNOWN SELECTORS',
      'HINTS',
    ].map((h) => context.text.indexOf(h))
    expect(order).toEqual([...order].sort((a, b) => a - b))
    expect(context.reference?.trajectory.id).toBe(ids.best)
    expect(context.reference?.similarity).toBe(1)
    expect(context.text).toContain('Goal: search for smart watch reviews')
    expect(context.text).toContain('  1. click #search (on https://shop.example.com/) [verified]')
    expect(context.text).toContain('results take 2s to load (68% confidence, 2 observations)')
    expect(context.text).toContain('searchbox "Search" → #search (used 2x)')
    expect(context.text).toContain('  - Close cookie banners before typing')
    // The two most recent sessions in full with their final URL, the older three on one line.
    expect(context.text.match(/ {2}Final URL: /g)?.length).toBe(2)
    expect(context.budgetTokens).toBe(DEFAULT_TRAJECTORY_RULES.defaultContextBudgetTokens)
    expect(context.totalTokens).toBeLessThanOrEqual(context.budgetTokens)
    expect(context.sections.find((s) => s.section === 'SESSION_HISTORY')).toMatchObject({
      items: 5,
      availableItems: 5,
      truncated: false,
    })
  })

  it('offers no expired or dissimilar trajectory; the TTL override brings an old one back', async () => {
    const { ops, repo } = await setUp()
    await repo.insertTrajectory(
      'agent-a',
      trajectory('book a table for two tonight', { recordedAt: ago(31) }),
      100,
    )
    await repo.insertTrajectory('agent-a', trajectory('check the order status page'), 100)
    const ask = (goal: string, traceTtlDays?: number) =>
      ops.runContext(agentA, { domain: DOMAIN, goal, ...(traceTtlDays ? { traceTtlDays } : {}) })
    const expired = await ask('book a table for two tonight')
    expect(expired.reference).toBeNull()
    expect(expired.sections.find((s) => s.section === 'REFERENCE_TRAJECTORY')).toMatchObject({
      included: false,
      availableItems: 0,
    })
    expect((await ask('book a table for two tonight', 60)).reference?.trajectory.goal).toBe(
      'book a table for two tonight',
    )
    // Jaccard 2/9 < 0.5: shares "order" and "status" only.
    expect((await ask('cancel my order status email now')).reference).toBeNull()
    // At the threshold: 3 shared of 6 words.
    expect((await ask('check order status again')).reference?.similarity).toBe(0.5)
  })

  it('trace scoring changes the winner: recent, fast and verified beats a closer but stale match', async () => {
    const { ops, repo } = await setUp()
    const unverified = trajectory('export the monthly sales report as csv')
    const stale = await repo.insertTrajectory(
      'agent-a',
      {
        ...unverified,
        recordedAt: ago(25),
        durationMs: 600_000,
        steps: unverified.steps.map((s) => ({ ...s, verified: false })),
        verifiedCount: 0,
      },
      100,
    )
    const fresh = await repo.insertTrajectory(
      'agent-a',
      trajectory('export monthly sales report', { recordedAt: ago(0), durationMs: 6_000 }),
      100,
    )
    const goal = 'export the monthly sales report as csv file'
    const plain = await ops.matchTrajectories(agentA, { domain: DOMAIN, goal })
    expect(plain.map((m) => m.trajectory.id)).toEqual([stale.id, fresh.id])
    expect(plain[0]?.score).toBe(plain[0]?.similarity)
    const scored = await ops.matchTrajectories(agentA, { domain: DOMAIN, goal, traceScoring: true })
    expect(scored.map((m) => m.trajectory.id)).toEqual([fresh.id, stale.id])
    expect(scored[0]?.score).toBeGreaterThan(scored[1]?.score as number)
    expect(
      (await ops.runContext(agentA, { domain: DOMAIN, goal, traceScoring: true })).reference?.trajectory.id,
    ).toBe(fresh.id)
    expect(await ops.matchTrajectories(agentA, { domain: DOMAIN, goal, limit: 1 })).toHaveLength(1)
    // The steps travel with a match; extra never does.
    expect(plain[0]?.trajectory.steps[0]).toEqual({
      action: 'click',
      selector: '#search',
      value: null,
      url: `https://${DOMAIN}/`,
      verified: false,
      durationMs: 1_000,
    })
  })

  it('reads a run’s domain, goal and scope: SHARED sees the scope, PER_RUN starts clean, OFF is empty', async () => {
    const { ops, repo } = await setUp()
    await seedDomain(repo)
    await startRun(repo, 'run_shared', 'SHARED')
    const shared = await ops.runContext(agentA, { runId: 'run_shared' })
    expect(shared).toMatchObject({
      domain: DOMAIN,
      scope: 'default',
      goal: 'search for smart watch reviews today',
    })
    expect(shared.reference?.trajectory.goal).toBe('search for smart watch reviews')

    await startRun(repo, 'run_clean', 'PER_RUN')
    const clean = await ops.runContext(agentA, { runId: 'run_clean' })
    expect(clean.scope).toBe('run:run_clean')
    expect(clean.text).toBe('')
    expect(clean.sections.every((s) => !s.included)).toBe(true)
    // What the per-run scope holds is its own.
    await seedDomain(repo, 'agent-a', 'run:run_clean')
    expect((await ops.runContext(agentA, { runId: 'run_clean' })).sections.every((s) => s.included)).toBe(
      true,
    )

    await startRun(repo, 'run_off', 'OFF')
    const off = await ops.runContext(agentA, { runId: 'run_off' })
    expect(off).toMatchObject({ scope: null, text: '', totalTokens: 0, reference: null, domain: DOMAIN })
    expect(off.sections).toHaveLength(5)
    expect(off.sections.every((s) => !s.included && s.availableItems === 0)).toBe(true)
  })

  it('keeps agents apart, and names the field of a bad request', async () => {
    const { ops, repo } = await setUp()
    await seedDomain(repo)
    const other = await ops.runContext(agentB, { domain: DOMAIN, goal: 'search for smart watch reviews' })
    expect(other.text).toBe('')
    expect(
      await ops.matchTrajectories(agentB, { domain: DOMAIN, goal: 'search for smart watch reviews' }),
    ).toEqual([])
    await startRun(repo, 'run_a', 'SHARED')
    await expect(ops.runContext(agentB, { runId: 'run_a' })).rejects.toMatchObject({ code: 'NOT_FOUND' })

    const fieldOf = async (input: Record<string, unknown>) => {
      const error = await ops.runContext(agentA, input).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ValidationError)
      return (error as ValidationError).issues[0]?.field
    }
    expect(await fieldOf({ goal: 'anything at all' })).toBe('domain')
    expect(await fieldOf({ runId: 'run_a', scope: 'elsewhere' })).toBe('scope')
    expect(await fieldOf({ runId: 'run_a', domain: 'other.example.org' })).toBe('domain')
    expect(await fieldOf({ domain: DOMAIN, budgetTokens: 10 })).toBe('budgetTokens')
  })

  it('trims to the budget lowest priority first', async () => {
    const { ops, repo } = await setUp()
    await seedDomain(repo)
    const goal = 'search for smart watch reviews'
    const full = await ops.runContext(agentA, { domain: DOMAIN, goal })
    const history = full.sections[0]?.tokens as number
    const tight = await ops.runContext(agentA, { domain: DOMAIN, goal, budgetTokens: history + 20 })
    expect(tight.totalTokens).toBeLessThanOrEqual(history + 20)
    expect(tight.sections.map((s) => s.included)).toEqual([true, false, false, false, false])
    expect(tight.sections[1]).toMatchObject({ truncated: true, fullTokens: full.sections[1]?.tokens })
    // The reference is still reported even when its section did not fit.
    expect(tight.reference).not.toBeNull()
    const only = await ops.runContext(agentA, { domain: DOMAIN, goal, sections: ['HINTS', 'APP_KNOWLEDGE'] })
    expect(only.sections.map((s) => s.section)).toEqual(['APP_KNOWLEDGE', 'HINTS'])
    expect(only.reference).toBeNull()
  })
})
