import { describe, expect, it } from 'vitest'
import { SHOP, trajectoryEngine } from './trajectory-fixture.ts'

const A = 'agent-a'
const B = 'agent-b'

describe('memory records without the registry', () => {
  it('recordTrajectory counts steps and verified steps, keeps goal words, and the newest per domain', async () => {
    const t = await trajectoryEngine({ trajectoryLimits: { maxTrajectoriesPerDomain: 2 } })
    const ids: string[] = []
    for (const goal of ['Open the cart', 'Open the wishlist', 'Open the orders']) {
      t.advance(1_000)
      const kept = await t.memory.recordTrajectory(A, {
        domain: `https://${SHOP}/`,
        goal,
        steps: [
          { action: 'click', selector: '#menu', url: `https://${SHOP}/home`, verified: true },
          { action: 'click', selector: '#item', verified: false },
        ],
        durationMs: 4_000,
      })
      expect(kept).toMatchObject({
        domain: SHOP,
        scope: 'default',
        origin: `https://${SHOP}`,
        stepCount: 2,
        verifiedCount: 1,
        success: true,
        turns: 0,
        durationMs: 4_000,
        runId: null,
      })
      ids.push(kept.id)
    }
    const page = await t.memory.trajectories(A, { domain: SHOP })
    expect(page.totalCount).toBe(2)
    expect(page.items.map((x) => x.goal)).toEqual(['Open the orders', 'Open the wishlist'])
    expect(page.items[0]?.words).toEqual(['open', 'the', 'orders'])
    expect(await t.memory.trajectory(A, ids[0] as string)).toBeNull()
    expect(await t.memory.trajectory(B, ids[2] as string)).toBeNull()
    expect(await t.memory.deleteTrajectory(B, ids[2] as string)).toBe(false)
    expect(await t.memory.deleteTrajectory(A, ids[2] as string)).toBe(true)
    expect((await t.memory.trajectories(A, {})).totalCount).toBe(1)
  })

  it('a run named by a record call must be the agent’s, and its scope is the one written', async () => {
    const t = await trajectoryEngine()
    const run = await t.runs.startRun(A, { goal: 'Search', domain: SHOP, scope: 'track-1' })
    const facts = [{ type: 'QUIRK' as const, key: 'modals', value: 'shadow DOM' }]
    const [fact] = await t.memory.recordKnowledge(A, { domain: SHOP, runId: run.id, facts })
    expect(fact?.scope).toBe('track-1')
    const kept = await t.memory.recordTrajectory(A, {
      domain: SHOP,
      runId: run.id,
      scope: 'track-1',
      goal: 'Search',
      steps: [{ action: 'click' }],
    })
    expect(kept).toMatchObject({ scope: 'track-1', runId: run.id })
    await expect(
      t.memory.recordSelector(A, {
        domain: SHOP,
        runId: run.id,
        scope: 'default',
        selectors: [{ element: 'button "Go"', selector: '#go' }],
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION', issues: [expect.objectContaining({ field: 'scope' })] })
    await expect(t.memory.recordKnowledge(B, { domain: SHOP, runId: run.id, facts })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      resource: 'Run',
    })
    // Its contributions go with the run.
    await t.runs.deleteRun(A, run.id)
    expect((await t.memory.appFacts(A, { scope: 'track-1' })).totalCount).toBe(0)
    expect((await t.memory.trajectories(A, {})).totalCount).toBe(0)
  })

  it('app facts: a confirmation adds (1 − c)·0.2, a different value halves the old one, below 0.1 is pruned', async () => {
    const t = await trajectoryEngine()
    const observe = (value: string) =>
      t.memory.recordKnowledge(A, { domain: SHOP, facts: [{ type: 'SELECTOR', key: 'search box', value }] })
    await observe('[data-testid=search]')
    const [confirmed] = await observe('[data-testid=search]')
    expect(confirmed?.confidence).toBeCloseTo(0.68)
    expect(confirmed?.sources).toBe(2)
    await observe('#q')
    const listed = await t.memory.appFacts(A, { domain: SHOP })
    expect(listed.items.map((f) => [f.value, Number(f.confidence.toFixed(4))])).toEqual([
      ['#q', 0.6],
      ['[data-testid=search]', 0.34],
    ])
    expect((await t.memory.appFacts(A, { minConfidence: 0.5 })).items.map((f) => f.value)).toEqual(['#q'])
    expect((await t.memory.appFacts(A, { type: 'TIMING' })).totalCount).toBe(0)
    // Contradicted twice more, 0.34 → 0.17 → 0.085: pruned.
    await observe('#search-a')
    await observe('#search-b')
    const values = (await t.memory.appFacts(A, {})).items.map((f) => f.value)
    expect(values).not.toContain('[data-testid=search]')
    expect(await t.memory.deleteAppFact(B, (await t.memory.appFacts(A, {})).items[0]?.id as string)).toBe(
      false,
    )
  })

  it('selectors rank by successes; repeated failures stop one being known-good', async () => {
    const t = await trajectoryEngine({ trajectoryRules: { selectorFailureLimit: 2 } })
    const see = (selector: string, outcome: 'SUCCESS' | 'FAILURE' = 'SUCCESS') =>
      t.memory.recordSelector(A, {
        domain: SHOP,
        selectors: [{ element: 'button "Search"', selector, outcome }],
      })
    await see('#search')
    await see('@e12')
    await see('@e12')
    await see('#search', 'FAILURE')
    await see('#search', 'FAILURE')
    const ranked = await t.memory.knownSelectors(A, { domain: SHOP, element: 'button "Search"' })
    expect(
      ranked.items.map((s) => [s.selector, s.successCount, s.failureCount, s.consecutiveFailures]),
    ).toEqual([
      ['@e12', 2, 0, 0],
      ['#search', 1, 2, 2],
    ])
    expect((await t.memory.knownSelectors(B, {})).totalCount).toBe(0)
  })

  it('the session history keeps the last sessionHistoryLimit runs of a domain', async () => {
    const t = await trajectoryEngine({ trajectoryRules: { sessionHistoryLimit: 2 } })
    for (const goal of ['first goal', 'second goal', 'third goal']) {
      t.advance(1_000)
      const run = await t.runs.startRun(A, { goal, domain: SHOP })
      await t.runs.completeRun(A, run.id, { outcome: `did the ${goal}` })
    }
    const history = await t.memory.runSessions(A, { domain: `https://${SHOP}/x` })
    expect(history.map((e) => e.outcome)).toEqual(['did the third goal', 'did the second goal'])
    expect(await t.memory.runSessions(A, { domain: SHOP, scope: 'other' })).toEqual([])
  })

  it('hints: added, listed oldest first per scope, rewritten and deleted, each agent its own', async () => {
    const t = await trajectoryEngine()
    const first = await t.memory.hints.add(A, { text: 'Close cookie banners first' })
    t.advance(1_000)
    const second = await t.memory.hints.add(A, { text: 'Prefer site search' })
    await t.memory.hints.add(A, { scope: 'track-1', text: 'Only in the track' })
    expect((await t.memory.hints.list(A)).map((h) => h.text)).toEqual([
      'Close cookie banners first',
      'Prefer site search',
    ])
    t.advance(1_000)
    const rewritten = await t.memory.hints.update(A, first.id, 'Dismiss cookie banners first')
    expect(rewritten.updatedAt.getTime() - rewritten.createdAt.getTime()).toBe(2_000)
    await expect(t.memory.hints.update(B, first.id, 'mine now')).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(t.memory.hints.update(A, first.id, ' ')).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'text', limit: 1 })],
    })
    expect(await t.memory.hints.delete(B, second.id)).toBe(false)
    expect(await t.memory.hints.delete(A, second.id)).toBe(true)
    expect((await t.memory.hints.list(A)).map((h) => h.text)).toEqual(['Dismiss cookie banners first'])
    expect(await t.memory.hints.list(B)).toEqual([])
  })
})

describe('domains and scopes', () => {
  it('lists what each (scope, domain) holds; deleting a domain or clearing a scope removes exactly that', async () => {
    const t = await trajectoryEngine()
    const facts = [{ type: 'TIMING' as const, key: 'load', value: 'slow' }]
    const shop = await t.runs.startRun(A, { goal: 'Buy', domain: SHOP })
    await t.runs.completeRun(A, shop.id, { steps: [{ action: 'click' }], facts })
    t.advance(1_000)
    await t.memory.recordKnowledge(A, { domain: 'docs.example', facts })
    await t.memory.recordKnowledge(A, { domain: SHOP, scope: 'track-1', facts })
    await t.memory.hints.add(A, { scope: 'track-1', text: 'hint' })
    await t.memory.recordKnowledge(B, { domain: SHOP, facts })
    const domains = await t.memory.domains(A)
    expect(domains.map((d) => [d.scope, d.domain, d.runs, d.trajectories, d.runSessions, d.facts])).toEqual([
      ['default', 'docs.example', 0, 0, 0, 1],
      ['track-1', SHOP, 0, 0, 0, 1],
      ['default', SHOP, 1, 1, 1, 1],
    ])
    expect((await t.memory.domains(A, 'track-1')).map((d) => d.domain)).toEqual([SHOP])
    expect(await t.memory.deleteDomain(A, { domain: `https://${SHOP}/` })).toEqual({
      runs: 1,
      trajectories: 1,
      runSessions: 1,
      facts: 1,
      selectors: 0,
      hints: 0,
    })
    expect(await t.memory.clearScope(A, 'track-1')).toMatchObject({ facts: 1, hints: 1 })
    expect((await t.memory.domains(A)).map((d) => [d.scope, d.domain])).toEqual([['default', 'docs.example']])
    expect((await t.memory.domains(B)).map((d) => d.domain)).toEqual([SHOP])
    await expect(t.memory.clearScope(A, 'has spaces')).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'scope' })],
    })
    await expect(t.memory.deleteDomain(A, { domain: ' ' })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'domain' })],
    })
  })

  it('record calls refuse bad input naming the field and the limit, writing nothing', async () => {
    const t = await trajectoryEngine({ trajectoryLimits: { maxFactsPerCall: 1, maxFactValueChars: 5 } })
    await expect(
      t.memory.recordKnowledge(A, {
        domain: SHOP,
        facts: [
          { type: 'QUIRK', key: 'k', value: 'too long' },
          { type: 'QUIRK', key: ' ', value: 'v' },
        ],
      }),
    ).rejects.toMatchObject({
      issues: [
        expect.objectContaining({ field: 'facts', limit: 1 }),
        expect.objectContaining({ field: 'facts.0.value', limit: 5 }),
        expect.objectContaining({ field: 'facts.1.key', limit: 1 }),
      ],
    })
    await expect(t.memory.recordTrajectory(A, { domain: SHOP, goal: 'g', steps: [] })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'steps', limit: 1 })],
    })
    await expect(t.memory.trajectories(A, {}, { limit: 0 })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'limit', limit: 1 })],
    })
    expect(await t.memory.domains(A)).toEqual([])
  })
})
