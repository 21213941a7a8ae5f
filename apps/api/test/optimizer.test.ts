import { afterEach, describe, expect, it, vi } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const apps: TestApp[] = []
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close().catch(() => {})
})
async function app(options: Parameters<typeof createTestApp>[0] = {}) {
  const t = await createTestApp(options)
  apps.push(t)
  return t
}

const RUN = `mutation { runOptimizer { __typename ... on OptimizationSnapshot { id compressionTriggerRatio fullMessageWindow minRelevanceScore usageRatio } } }`
const STATUS = `{ optimizerStatus { ... on OptimizerStatus { totalOptimizations totalTokensSaved avgSavingsPerRun currentParameters { compressionTrigger fullMessageWindow minRelevance targetUsageRatio } } } }`

describe('the optimizer in the server', () => {
  it('learns parameters that survive a restart on the same database', async () => {
    const first = await app()
    const key = await createAgentKey(first, 'agent-o')
    await first.gql(
      `mutation { addMessage(input: { conversationId: "c", role: USER, content: "ok" }) { __typename } }`,
      {},
      key,
    )
    // Usage is tiny (far under 65% - 15%): each run relaxes — trigger +0.025, window +1, relevance -0.025.
    const run = await first.gql(RUN, {}, key)
    expect(run.data.runOptimizer).toMatchObject({
      compressionTriggerRatio: 0.725,
      fullMessageWindow: 31,
      minRelevanceScore: 0.275,
    })
    await first.app.close()

    const second = await createTestApp({ sameStoreAs: first })
    apps.push(second)
    const status = await second.gql(STATUS, {}, key)
    expect(status.data.optimizerStatus).toMatchObject({
      totalOptimizations: 1,
      currentParameters: {
        compressionTrigger: 0.725,
        fullMessageWindow: 31,
        minRelevance: 0.275,
        targetUsageRatio: 0.65,
      },
    })
    const again = await second.gql(RUN, {}, key)
    expect(again.data.runOptimizer).toMatchObject({
      compressionTriggerRatio: 0.75,
      fullMessageWindow: 32,
      minRelevanceScore: 0.25,
    })
  })

  it('reports the efficiency of every run, and keeps only the newest 500 snapshots', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-s')
    await t.gql(
      `mutation { addMessage(input: { conversationId: "c", role: USER, content: "ok" }) { __typename } }`,
      {},
      key,
    )
    // 499 old snapshots straight into the table, then two runs push the history past 500.
    await t.db.optimizationSnapshot.createMany({
      data: Array.from({ length: 499 }, (_, i) => ({
        agentId: 'agent-s',
        tokensBefore: 10,
        tokensAfter: 10,
        entriesCompressed: 0,
        entriesDropped: 0,
        entriesPromoted: 0,
        usageRatio: 0,
        compressionTriggerRatio: 0.7,
        fullMessageWindow: 30,
        minRelevanceScore: 0.3,
        timestamp: new Date(Date.UTC(2025, 0, 1, 0, i)),
      })),
    })
    await t.gql(RUN, {}, key)
    expect(await t.db.optimizationSnapshot.count({ where: { agentId: 'agent-s' } })).toBe(500)
    await t.gql(RUN, {}, key)
    expect(await t.db.optimizationSnapshot.count({ where: { agentId: 'agent-s' } })).toBe(500)
    const oldest = await t.db.optimizationSnapshot.findFirst({
      where: { agentId: 'agent-s' },
      orderBy: { timestamp: 'asc' },
    })
    expect(oldest?.timestamp.toISOString()).toBe('2025-01-01T00:01:00.000Z')

    const status = await t.gql(STATUS, {}, key)
    // The "ok" entry was compressed (kept as is: it is short) in run 1, dropped in run 2.
    expect(status.data.optimizerStatus).toMatchObject({ totalOptimizations: 2 })
    expect(status.data.optimizerStatus.totalTokensSaved).toBeGreaterThan(0)
    const list = await t.gql(
      `{ optimizerSnapshots(last: 3) { ... on OptimizationSnapshotList { snapshots { entriesDropped entriesCompressed } } } }`,
      {},
      key,
    )
    expect(list.data.optimizerSnapshots.snapshots.slice(-2)).toEqual([
      { entriesDropped: 0, entriesCompressed: 1 },
      { entriesDropped: 1, entriesCompressed: 0 },
    ])
  })

  it('never runs one scope twice at once: concurrent requests share the run', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-c')
    await t.gql(
      `mutation { addMessage(input: { conversationId: "c", role: USER, content: "hello there" }) { __typename } }`,
      {},
      key,
    )
    const [a, b] = await Promise.all([t.gql(RUN, {}, key), t.gql(RUN, {}, key)])
    expect(a.data.runOptimizer.id).toBe(b.data.runOptimizer.id)
    expect(await t.db.optimizationSnapshot.count()).toBe(1)
  })

  it('runs on a schedule for every agent with entries; a failing agent is logged and the others go on', async () => {
    try {
      const t = await app({ optimizerIntervalMs: 120_000 })
      const keyA = await createAgentKey(t, 'agent-1')
      const keyB = await createAgentKey(t, 'agent-2')
      await createAgentKey(t, 'agent-idle')
      for (const key of [keyA, keyB]) {
        await t.gql(
          `mutation { addMessage(input: { conversationId: "c", role: USER, content: "hello there" }) { __typename } }`,
          {},
          key,
        )
      }
      const errors: unknown[] = []
      const optimizer = t.app.services.optimizer as unknown as { log: { error: (...a: unknown[]) => void } }
      optimizer.log = { error: (...args: unknown[]) => errors.push(args) } as never
      const spy = vi.spyOn(t.app.services.parameters, 'load')
      spy.mockImplementation(async (scope, db) => {
        if (scope === 'agent-1') throw new Error('disk on fire')
        spy.mockRestore()
        return t.app.services.parameters.load(scope, db)
      })
      // The schedule runs on the engine's scheduler (real, unref'd timers here): faked from here on,
      // after the app and its writes, so only the schedule's timers wait for the test to move time.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
      t.app.services.optimizer.start()
      await vi.advanceTimersByTimeAsync(120_000)
      await waitFor(async () => (await t.db.optimizationSnapshot.count()) > 0)
      expect(await t.db.optimizationSnapshot.findMany({ select: { agentId: true } })).toEqual([
        { agentId: 'agent-2' },
      ])
      expect(String((errors[0] as unknown[])[0])).toContain('agent-1')
      // The next tick runs again, for both.
      await vi.advanceTimersByTimeAsync(120_000)
      await waitFor(async () => (await t.db.optimizationSnapshot.count()) === 3)
      await t.app.services.optimizer.stop()
    } finally {
      vi.useRealTimers()
    }
  })

  it('decays and prunes unused knowledge as part of a run', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-k')
    await t.gql(
      `mutation { addMessage(input: { conversationId: "c", role: USER, content: "hello there" }) { __typename } }`,
      {},
      key,
    )
    const store = (k: string, confidence: number) =>
      t.gql(
        `mutation($k: String!, $c: Float) { storeKnowledge(input: { category: DOMAIN, key: $k, value: "v", confidence: $c }) { __typename } }`,
        { k, c: confidence },
        key,
      )
    await store('fading', 0.5)
    await store('nearly-gone', 0.15)
    t.clock.advance(29 * 86_400_000)
    await t.gql(RUN, {}, key)
    expect((await t.db.knowledge.findMany({ orderBy: { key: 'asc' } })).map((k) => k.confidence)).toEqual([
      0.5, 0.15,
    ])
    t.clock.advance(1 * 86_400_000)
    await t.gql(RUN, {}, key)
    const left = await t.db.knowledge.findMany()
    expect(left.map((k) => [k.key, k.confidence])).toEqual([['fading', 0.4]])
    // Once per period: another run the same day changes nothing.
    await t.gql(RUN, {}, key)
    expect((await t.db.knowledge.findFirst())?.confidence).toBe(0.4)
  })
})

async function waitFor(check: () => Promise<boolean>) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error('condition not reached')
}

describe('optimizer explanations', () => {
  const EXPLAINED = `{ optimizerSnapshots { ... on OptimizationSnapshotList { snapshots { entriesPromoted explanation {
      rules summary usageRatio savingsRatio targetUsageRatio overBudgetAbove underBudgetBelow emergencySavingsBelow
      changes { parameter from to } keyFactMode promotionCount
      promotions { entryId excerpt relevance keyFacts { kind text } } } } } } }`
  const QUESTION = 'Sorry to hear that, Dana. Can you share the exact error message you see?'
  const add = (t: TestApp, key: string, role: string, content: string) =>
    t.gql(
      `mutation($c: String!) { addMessage(input: { conversationId: "c", role: ${role}, content: $c }) { __typename } }`,
      { c: content },
      key,
    )

  it('records which rule fired, why, each parameter change and each promotion with its key facts', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-why')
    await add(t, key, 'ASSISTANT', QUESTION)
    await t.gql(RUN, {}, key)
    const list = await t.gql(EXPLAINED, {}, key)
    const [snapshot] = list.data.optimizerSnapshots.snapshots
    expect(snapshot.entriesPromoted).toBe(1)
    expect(snapshot.explanation).toMatchObject({
      rules: ['UNDER_BUDGET'],
      targetUsageRatio: 0.65,
      overBudgetAbove: 0.75,
      underBudgetBelow: 0.5,
      emergencySavingsBelow: 0.05,
      changes: [
        { parameter: 'compressionTrigger', from: 0.7, to: 0.725 },
        { parameter: 'fullMessageWindow', from: 30, to: 31 },
        { parameter: 'minRelevance', from: 0.3, to: 0.275 },
      ],
      keyFactMode: 'SPEC',
      promotionCount: 1,
      promotions: [{ excerpt: QUESTION, relevance: 0.85, keyFacts: [{ kind: 'error', text: 'error' }] }],
    })
    expect(snapshot.explanation.summary[0]).toMatch(/^under budget \(usage 0\.000 < 0\.50\): relax$/)
    expect(snapshot.explanation.usageRatio).toBeLessThan(0.005)
  })

  it('in strict key-fact mode promotes an actual error, not a question about one', async () => {
    const t = await app({ keyFactMode: 'strict' })
    const key = await createAgentKey(t, 'agent-strict')
    await add(t, key, 'ASSISTANT', QUESTION)
    await add(t, key, 'TOOL', 'Error: connect ECONNREFUSED 10.0.0.5:5432')
    await t.gql(RUN, {}, key)
    const [snapshot] = (await t.gql(EXPLAINED, {}, key)).data.optimizerSnapshots.snapshots
    expect(snapshot.explanation).toMatchObject({
      keyFactMode: 'STRICT',
      promotionCount: 1,
      promotions: [
        {
          excerpt: 'Error: connect ECONNREFUSED 10.0.0.5:5432',
          keyFacts: [{ kind: 'error', text: 'Error: connect ECONNREFUSED 10.0.0.5:5432' }],
        },
      ],
    })
  })

  it('reports the unrounded average saved per run', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-avg')
    // 25 runs that saved 9 tokens between them, as the totals store holds them.
    await t.db.adaptiveParameter.createMany({
      data: [
        { agentId: 'agent-avg', key: 'stats.totalOptimizations', value: 25 },
        { agentId: 'agent-avg', key: 'stats.totalTokensSaved', value: 9 },
      ],
    })
    const status = await t.gql(
      `{ optimizerStatus { ... on OptimizerStatus { avgSavingsPerRun averageTokensSavedPerRun } } }`,
      {},
      key,
    )
    expect(status.data.optimizerStatus).toEqual({ avgSavingsPerRun: 0, averageTokensSavedPerRun: 0.36 })
  })
})
