import { ConflictError, goalWords, NotFoundError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'
import {
  fact,
  ids,
  KEEP_ALL,
  later,
  RULES,
  run,
  selector,
  session,
  T0,
  trajectory,
  twoAgents,
  WINDOW,
} from './trajectory-fixtures.ts'

export function describeTrajectories(initializer: StorageInitializer): void {
  describe(`${initializer.name}: trajectory memory`, () => {
    const fixture = useFixture(initializer)

    it('stores a run as given, refuses a duplicate run id with CONFLICT, and scopes every run to its agent', async () => {
      const repo = await twoAgents(fixture().storage)
      const stored = await repo.insertRun(
        'agent-a',
        run('run-1', { artifactPaths: ['a.png', 'b.txt'], extra: { orchestrator: 'x' } }),
      )
      expect(stored).toEqual({
        ...run('run-1', { artifactPaths: ['a.png', 'b.txt'], extra: { orchestrator: 'x' } }),
        agentId: 'agent-a',
      })
      expect(await repo.findRun('agent-a', 'run-1')).toEqual(stored)
      const duplicate = await repo
        .insertRun('agent-a', run('run-1', { goal: 'other' }))
        .catch((e: unknown) => e)
      expect(duplicate).toBeInstanceOf(ConflictError)
      expect((duplicate as ConflictError).field).toBe('runId')
      expect((await repo.findRun('agent-a', 'run-1'))?.goal).toBe('search for shoes')
      // Another agent may use the same run id; neither sees nor changes the other's.
      expect(await repo.findRun('agent-b', 'run-1')).toBeNull()
      await expect(
        repo.updateRun('agent-b', 'run-1', { status: 'FAILED', updatedAt: later(1) }),
      ).rejects.toBeInstanceOf(NotFoundError)
      await repo.insertRun('agent-b', run('run-1', { goal: 'b goal' }))
      expect((await repo.findRun('agent-a', 'run-1'))?.goal).toBe('search for shoes')
      const updated = await repo.updateRun('agent-a', 'run-1', {
        status: 'COMPLETED',
        success: true,
        finalUrl: 'https://shop.example/done',
        artifactPaths: ['c.png'],
        durationMs: 5_000,
        completedAt: later(5),
        updatedAt: later(5),
      })
      expect(updated).toMatchObject({
        status: 'COMPLETED',
        success: true,
        finalUrl: 'https://shop.example/done',
        artifactPaths: ['c.png'],
        durationMs: 5_000,
        goal: 'search for shoes',
        extra: { orchestrator: 'x' },
      })
      expect(updated.completedAt?.toISOString()).toBe(later(5).toISOString())
      expect((await repo.findRun('agent-b', 'run-1'))?.status).toBe('RUNNING')
      expect(await repo.forgetRun('agent-b', 'missing')).toBeNull()
    })

    it('lists runs newest updatedAt first (ties by id descending) under each filter, pages by cursor, and walks children', async () => {
      const repo = await twoAgents(fixture().storage)
      await repo.insertRun('agent-a', run('r1', { updatedAt: later(1) }))
      await repo.insertRun(
        'agent-a',
        run('r2', { updatedAt: later(3), domain: 'docs.example', status: 'FAILED' }),
      )
      await repo.insertRun(
        'agent-a',
        run('r3', { updatedAt: later(3), parentRunId: 'r1', kind: 'RESUME', startedAt: later(2) }),
      )
      await repo.insertRun(
        'agent-a',
        run('r4', {
          updatedAt: later(2),
          parentRunId: 'r1',
          kind: 'FORK',
          sessionId: 's2',
          startedAt: later(1),
          scope: 'track-b',
        }),
      )
      await repo.insertRun(
        'agent-a',
        run('r5', { updatedAt: later(4), parentRunId: 'r3', startedAt: later(4) }),
      )
      await repo.insertRun('agent-b', run('b1', { updatedAt: later(9), parentRunId: 'r1' }))
      const all = await repo.listRuns('agent-a', {}, null, 10)
      expect(ids(all)).toEqual(['r5', 'r3', 'r2', 'r4', 'r1'])
      expect(await repo.countRuns('agent-a', {})).toBe(5)
      const page1 = await repo.listRuns('agent-a', {}, null, 2)
      const last = page1[1] as { updatedAt: Date; id: string }
      expect(ids(await repo.listRuns('agent-a', {}, { updatedAt: last.updatedAt, id: last.id }, 2))).toEqual([
        'r2',
        'r4',
      ])
      expect(ids(await repo.listRuns('agent-a', { domain: 'docs.example' }, null, 10))).toEqual(['r2'])
      expect(ids(await repo.listRuns('agent-a', { status: 'RUNNING' }, null, 10))).toEqual([
        'r5',
        'r3',
        'r4',
        'r1',
      ])
      expect(ids(await repo.listRuns('agent-a', { sessionId: 's2' }, null, 10))).toEqual(['r4'])
      expect(ids(await repo.listRuns('agent-a', { parentRunId: 'r1' }, null, 10))).toEqual(['r3', 'r4'])
      expect(ids(await repo.listRuns('agent-a', { scope: 'track-b' }, null, 10))).toEqual(['r4'])
      expect(await repo.countRuns('agent-a', { status: 'FAILED' })).toBe(1)
      // Children oldest first; another agent's run naming the same parent is not among them.
      expect(ids(await repo.childRuns('agent-a', ['r1'], 10))).toEqual(['r4', 'r3'])
      expect(ids(await repo.childRuns('agent-a', ['r1', 'r3'], 10))).toEqual(['r4', 'r3', 'r5'])
      expect(ids(await repo.childRuns('agent-a', ['r1', 'r3'], 2))).toEqual(['r4', 'r3'])
      expect(ids(await repo.childRuns('agent-b', ['r1'], 10))).toEqual(['b1'])
      expect(await repo.listRuns('agent-b', { domain: 'docs.example' }, null, 10)).toEqual([])
    })

    it('applies the fact rules through observeFact: 0.6, confirmation, halving, pruning below 0.1', async () => {
      const repo = await twoAgents(fixture().storage)
      const first = await repo.observeFact('agent-a', fact('#q'), T0, RULES, null)
      expect(first).toMatchObject({
        value: '#q',
        confidence: 0.6,
        sources: 1,
        scope: 'default',
        type: 'SELECTOR',
      })
      const confirmed = await repo.observeFact('agent-a', fact('#q'), later(1), RULES, null)
      expect(confirmed.id).toBe(first.id)
      expect(confirmed.confidence).toBeCloseTo(0.68, 10)
      expect(confirmed.sources).toBe(2)
      expect(confirmed.lastSeenAt.toISOString()).toBe(later(1).toISOString())
      await repo.observeFact('agent-a', fact('#search'), later(2), RULES, null)
      await repo.observeFact('agent-a', fact('input[name=q]'), later(3), RULES, null)
      let facts = await repo.listFacts('agent-a', { scope: 'default' }, WINDOW)
      expect(facts.map((f) => [f.value, Number(f.confidence.toFixed(4))])).toEqual([
        ['input[name=q]', 0.6],
        ['#search', 0.3],
        ['#q', 0.17],
      ])
      // A contradiction lowers the others without counting as a sighting of them.
      expect(facts[2]?.lastSeenAt.toISOString()).toBe(later(1).toISOString())
      await repo.observeFact('agent-a', fact('[data-q]'), later(4), RULES, null)
      facts = await repo.listFacts('agent-a', { scope: 'default' }, WINDOW)
      expect(facts.map((f) => f.value)).toEqual(['[data-q]', 'input[name=q]', '#search'])
      expect(await repo.countFacts('agent-a', { scope: 'default', minConfidence: 0.5 })).toBe(1)
      expect(await repo.countFacts('agent-a', { scope: 'default', type: 'TIMING' })).toBe(0)
      // Another key, another domain, another scope, another agent: each its own.
      await repo.observeFact('agent-a', fact('#other', 'cart'), T0, RULES, null)
      await repo.observeFact('agent-a', { ...fact('#q'), domain: 'docs.example' }, T0, RULES, null)
      await repo.observeFact('agent-b', fact('#q'), T0, RULES, null)
      expect(await repo.countFacts('agent-a', { scope: 'default', domain: 'shop.example' })).toBe(4)
      expect(await repo.countFacts('agent-b', { scope: 'default' })).toBe(1)
      expect(await repo.deleteFact('agent-b', first.id)).toBe(false)
      const put = await repo.putFact('agent-a', {
        ...fact('#search'),
        confidence: 0.9,
        sources: 7,
        lastSeenAt: later(9),
        createdAt: T0,
        extra: { note: 'imported' },
      })
      expect(put).toMatchObject({
        value: '#search',
        confidence: 0.9,
        sources: 7,
        extra: { note: 'imported' },
      })
      expect(await repo.countFacts('agent-a', { scope: 'default', domain: 'shop.example' })).toBe(4)
      expect(await repo.deleteFact('agent-a', put.id)).toBe(true)
      expect(await repo.countFacts('agent-a', { scope: 'default', domain: 'shop.example' })).toBe(3)
    })

    it('counts selector outcomes and ranks them (most successes, fewest failures, stable before volatile, newest)', async () => {
      const repo = await twoAgents(fixture().storage)
      await repo.observeSelector('agent-a', selector('#search', 'SUCCESS'), T0, null)
      await repo.observeSelector('agent-a', selector('#search', 'FAILURE'), later(1), null)
      const twice = await repo.observeSelector('agent-a', selector('#search', 'FAILURE'), later(2), null)
      expect(twice).toMatchObject({ successCount: 1, failureCount: 2, consecutiveFailures: 2 })
      const reset = await repo.observeSelector('agent-a', selector('#search', 'SUCCESS'), later(3), null)
      expect(reset).toMatchObject({ id: twice.id, successCount: 2, failureCount: 2, consecutiveFailures: 0 })
      expect(reset.lastUsedAt.toISOString()).toBe(later(3).toISOString())
      await repo.observeSelector('agent-a', selector('@e12', 'SUCCESS'), later(4), null)
      await repo.observeSelector('agent-a', selector('@e12', 'SUCCESS'), later(4), null)
      await repo.observeSelector('agent-a', selector('button.go', 'SUCCESS'), later(1), null)
      await repo.observeSelector('agent-a', selector('button.go', 'SUCCESS'), later(1), null)
      await repo.observeSelector('agent-a', selector('form > button', 'SUCCESS'), later(5), null)
      // Observations at once (concurrent writers on Postgres) are each counted.
      await Promise.all(
        Array.from({ length: 6 }, () =>
          repo.observeSelector('agent-b', selector('#race', 'SUCCESS'), T0, null),
        ),
      )
      await Promise.all(
        Array.from({ length: 6 }, () => repo.observeFact('agent-b', fact('#race', 'race'), T0, RULES, null)),
      )
      expect(
        (await repo.listSelectors('agent-b', { scope: 'default' }, WINDOW)).map((s) => s.successCount),
      ).toEqual([6])
      expect((await repo.listFacts('agent-b', { scope: 'default' }, WINDOW)).map((f) => f.sources)).toEqual([
        6,
      ])
      const ranked = await repo.listSelectors('agent-a', { scope: 'default' }, WINDOW)
      expect(ranked.map((s) => s.selector)).toEqual(['button.go', '@e12', '#search', 'form > button'])
      expect(
        (await repo.listSelectors('agent-a', { scope: 'default' }, { offset: 1, limit: 2 })).map(
          (s) => s.selector,
        ),
      ).toEqual(['@e12', '#search'])
      expect(await repo.countSelectors('agent-a', { scope: 'default', element: 'button "Search"' })).toBe(4)
      expect(await repo.countSelectors('agent-a', { scope: 'default', element: 'link' })).toBe(0)
      expect(await repo.countSelectors('agent-b', { scope: 'default', element: 'button "Search"' })).toBe(1)
      expect(await repo.deleteSelector('agent-b', reset.id)).toBe(false)
      const put = await repo.putSelector('agent-a', {
        scope: 'default',
        domain: 'shop.example',
        element: 'button "Search"',
        selector: '#search',
        successCount: 10,
        failureCount: 0,
        consecutiveFailures: 0,
        lastUsedAt: later(8),
        createdAt: T0,
        extra: { from: 'file' },
      })
      expect(put).toMatchObject({ successCount: 10, extra: { from: 'file' } })
      expect(await repo.countSelectors('agent-a', { scope: 'default' })).toBe(4)
      expect(await repo.deleteSelector('agent-a', put.id)).toBe(true)
      expect(await repo.countSelectors('agent-a', { scope: 'default' })).toBe(3)
    })

    it('keeps the newest trajectories per domain and the last run sessions per (scope, domain)', async () => {
      const repo = await twoAgents(fixture().storage)
      for (let i = 1; i <= 4; i++)
        await repo.insertTrajectory(
          'agent-a',
          trajectory(`t${i}`, `goal number ${i}`, { recordedAt: later(i) }),
          3,
        )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('other', 'goal', { domain: 'docs.example', recordedAt: T0 }),
        3,
      )
      await repo.insertTrajectory('agent-b', trajectory('t1', 'b goal', { recordedAt: T0 }), 3)
      expect(ids(await repo.listTrajectories('agent-a', { domain: 'shop.example' }, WINDOW))).toEqual([
        't4',
        't3',
        't2',
      ])
      expect(await repo.countTrajectories('agent-a', {})).toBe(4)
      expect(ids(await repo.listTrajectories('agent-a', {}, { offset: 1, limit: 2 }))).toEqual(['t3', 't2'])
      const stored = await repo.findTrajectory('agent-a', 't4')
      expect(stored).toEqual({
        ...trajectory('t4', 'goal number 4', { recordedAt: later(4) }),
        agentId: 'agent-a',
      })
      expect((await repo.findTrajectory('agent-b', 't1'))?.goal).toBe('b goal')
      expect(await repo.findTrajectory('agent-b', 't4')).toBeNull()
      expect(await repo.deleteTrajectory('agent-b', 't4')).toBe(false)
      expect(await repo.deleteTrajectory('agent-a', 't4')).toBe(true)
      expect(await repo.countTrajectories('agent-a', { domain: 'shop.example' })).toBe(2)

      for (let i = 1; i <= 7; i++) await repo.insertRunSession('agent-a', session(`run-${i}`, later(i)), 5)
      await repo.insertRunSession('agent-a', session('elsewhere', T0, { domain: 'docs.example' }), 5)
      await repo.insertRunSession('agent-a', session('in-b', T0, { scope: 'track-b' }), 5)
      const last = await repo.runSessions('agent-a', 'default', 'shop.example', 10)
      expect(last.map((e) => e.runId)).toEqual(['run-7', 'run-6', 'run-5', 'run-4', 'run-3'])
      expect((await repo.runSessions('agent-a', 'default', 'shop.example', 2)).map((e) => e.runId)).toEqual([
        'run-7',
        'run-6',
      ])
      expect((await repo.runSessions('agent-a', 'track-b', 'shop.example', 10)).map((e) => e.runId)).toEqual([
        'in-b',
      ])
      expect(await repo.runSessions('agent-b', 'default', 'shop.example', 10)).toEqual([])
    })

    it('offers reference candidates sharing at least minShared goal words, successful and recent, most shared first', async () => {
      const repo = await twoAgents(fixture().storage)
      await repo.insertTrajectory(
        'agent-a',
        trajectory('all3', 'search red running shoes', { recordedAt: later(1) }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('two-old', 'search red hats', { recordedAt: later(2) }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('two-new', 'red shoes sale', { recordedAt: later(3) }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('one', 'buy shoes', { recordedAt: later(4) }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('failed', 'search red shoes', { success: false, recordedAt: later(5) }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('stale', 'search red shoes', { recordedAt: T0 }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('other-domain', 'search red shoes', { domain: 'docs.example' }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('other-scope', 'search red shoes', { scope: 'track-b' }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-b',
        trajectory('b', 'search red shoes', { recordedAt: later(9) }),
        KEEP_ALL,
      )
      const query = {
        scope: 'default',
        domain: 'shop.example',
        words: goalWords('search red shoes'),
        minShared: 2,
        since: later(1),
      }
      const found = await repo.trajectoryCandidates('agent-a', query, 10)
      expect(ids(found)).toEqual(['all3', 'two-new', 'two-old'])
      expect(found[0]).toEqual({
        id: 'all3',
        goal: 'search red running shoes',
        words: goalWords('search red running shoes'),
        recordedAt: later(1),
        durationMs: 9_000,
        stepCount: 2,
        verifiedCount: 1,
        success: true,
        runId: null,
      })
      expect(ids(await repo.trajectoryCandidates('agent-a', query, 2))).toEqual(['all3', 'two-new'])
      expect(ids(await repo.trajectoryCandidates('agent-a', { ...query, minShared: 3 }, 10))).toEqual([
        'all3',
      ])
      expect(ids(await repo.trajectoryCandidates('agent-a', { ...query, minShared: 1 }, 10))).toEqual([
        'all3',
        'two-new',
        'two-old',
        'one',
      ])
      expect(ids(await repo.trajectoryCandidates('agent-a', { ...query, since: later(3) }, 10))).toEqual([
        'two-new',
      ])
      expect(ids(await repo.trajectoryCandidates('agent-a', { ...query, since: T0 }, 10))).toEqual([
        'all3',
        'stale',
        'two-new',
        'two-old',
      ])
      expect(ids(await repo.trajectoryCandidates('agent-b', { ...query, since: T0 }, 10))).toEqual(['b'])
      // A trajectory gone takes its words out of the index.
      await repo.deleteTrajectory('agent-a', 'all3')
      expect(ids(await repo.trajectoryCandidates('agent-a', query, 10))).toEqual(['two-new', 'two-old'])
    })

    it('forgetRun takes back exactly what the run contributed, and nothing of other runs or agents', async () => {
      const repo = await twoAgents(fixture().storage)
      await repo.insertRun('agent-a', run('r1'))
      await repo.insertRun('agent-a', run('r2'))
      await repo.insertRun('agent-a', run('child', { parentRunId: 'r1', kind: 'RESUME' }))
      await repo.insertRun('agent-b', run('r1'))
      await repo.insertTrajectory('agent-a', trajectory('t-r1', 'search shoes', { runId: 'r1' }), KEEP_ALL)
      await repo.insertTrajectory('agent-a', trajectory('t-r2', 'search shoes', { runId: 'r2' }), KEEP_ALL)
      await repo.insertTrajectory('agent-b', trajectory('b-t-r1', 'search shoes', { runId: 'r1' }), KEEP_ALL)
      await repo.insertRunSession('agent-a', session('r1', later(1)), 5)
      await repo.insertRunSession('agent-a', session('r2', later(2)), 5)
      // A fact only r1 saw, one both confirmed, one confirmed by r1 and by hand.
      const onlyR1 = await repo.observeFact('agent-a', fact('#only', 'only'), T0, RULES, 'r1')
      await repo.observeFact('agent-a', fact('#both', 'both'), T0, RULES, 'r1')
      await repo.observeFact('agent-a', fact('#both', 'both'), later(1), RULES, 'r1')
      await repo.observeFact('agent-a', fact('#both', 'both'), later(2), RULES, 'r2')
      await repo.observeFact('agent-a', fact('#hand', 'hand'), T0, RULES, 'r1')
      await repo.observeFact('agent-a', fact('#hand', 'hand'), later(1), RULES, null)
      await repo.observeFact('agent-b', fact('#only', 'only'), T0, RULES, 'r1')
      await repo.observeSelector('agent-a', selector('#r1-only', 'SUCCESS'), T0, 'r1')
      await repo.observeSelector('agent-a', selector('#r1-only', 'FAILURE'), later(1), 'r1')
      await repo.observeSelector('agent-a', selector('#shared', 'SUCCESS'), T0, 'r1')
      await repo.observeSelector('agent-a', selector('#shared', 'FAILURE'), later(1), 'r1')
      await repo.observeSelector('agent-a', selector('#shared', 'SUCCESS'), later(2), 'r2')
      await repo.observeSelector('agent-a', selector('#shared', 'FAILURE'), later(3), 'r2')

      const forgot = await repo.forgetRun('agent-a', 'r1')
      expect(forgot).toEqual({ runs: 1, trajectories: 1, runSessions: 1, facts: 1, selectors: 1, hints: 0 })
      expect(await repo.findRun('agent-a', 'r1')).toBeNull()
      // The child keeps its parent's id: lineage shows the parent as gone.
      expect((await repo.findRun('agent-a', 'child'))?.parentRunId).toBe('r1')
      expect(ids(await repo.listTrajectories('agent-a', {}, WINDOW))).toEqual(['t-r2'])
      expect((await repo.runSessions('agent-a', 'default', 'shop.example', 10)).map((e) => e.runId)).toEqual([
        'r2',
      ])
      const facts = await repo.listFacts('agent-a', { scope: 'default' }, WINDOW)
      expect(facts.map((f) => [f.key, f.sources]).sort()).toEqual([
        ['both', 1],
        ['hand', 1],
      ])
      expect(facts.some((f) => f.id === onlyR1.id)).toBe(false)
      const selectors = await repo.listSelectors('agent-a', { scope: 'default' }, WINDOW)
      expect(
        selectors.map((s) => [s.selector, s.successCount, s.failureCount, s.consecutiveFailures]),
      ).toEqual([['#shared', 1, 1, 1]])
      // The other agent's run of the same id and its records are untouched.
      expect(await repo.findRun('agent-b', 'r1')).not.toBeNull()
      expect(await repo.countTrajectories('agent-b', {})).toBe(1)
      expect((await repo.listFacts('agent-b', { scope: 'default' }, WINDOW))[0]?.sources).toBe(1)
      // Forgetting r2 now removes what r1 and r2 gave, down to nothing.
      expect(await repo.forgetRun('agent-a', 'r2')).toEqual({
        runs: 1,
        trajectories: 1,
        runSessions: 1,
        facts: 1,
        selectors: 1,
        hints: 0,
      })
      expect((await repo.listFacts('agent-a', { scope: 'default' }, WINDOW)).map((f) => f.key)).toEqual([
        'hand',
      ])
      expect(await repo.forgetRun('agent-a', 'r2')).toBeNull()
    })

    it('summarises domains, forgets a domain in one scope, and forgets a scope keeping the manifests', async () => {
      const repo = await twoAgents(fixture().storage)
      await repo.insertRun('agent-a', run('r1', { updatedAt: later(1) }))
      await repo.insertRun('agent-a', run('r2', { domain: 'docs.example', updatedAt: later(2) }))
      await repo.insertRun('agent-a', run('off', { isolation: 'OFF', scope: null, updatedAt: later(9) }))
      await repo.insertRun('agent-a', run('rb', { scope: 'track-b', updatedAt: later(3) }))
      await repo.insertTrajectory(
        'agent-a',
        trajectory('t1', 'search shoes', { recordedAt: later(4) }),
        KEEP_ALL,
      )
      await repo.insertTrajectory(
        'agent-a',
        trajectory('t2', 'read docs', { domain: 'docs.example' }),
        KEEP_ALL,
      )
      await repo.insertTrajectory('agent-a', trajectory('tb', 'search shoes', { scope: 'track-b' }), KEEP_ALL)
      await repo.insertRunSession('agent-a', session('r1', later(1)), 5)
      await repo.observeFact('agent-a', fact('#q'), later(1), RULES, 'r1')
      await repo.observeFact('agent-a', { ...fact('#q'), scope: 'track-b' }, later(1), RULES, 'rb')
      await repo.observeSelector('agent-a', selector('#s', 'SUCCESS'), later(6), 'r1')
      await repo.addHint('agent-a', {
        scope: 'default',
        text: 'use search',
        createdAt: T0,
        updatedAt: T0,
        extra: null,
      })
      await repo.addHint('agent-a', {
        scope: 'track-b',
        text: 'b hint',
        createdAt: T0,
        updatedAt: T0,
        extra: null,
      })
      await repo.insertTrajectory('agent-b', trajectory('b-t1', 'search shoes'), KEEP_ALL)

      const domains = await repo.domains('agent-a')
      expect(
        domains.map((d) => [d.scope, d.domain, d.runs, d.trajectories, d.runSessions, d.facts, d.selectors]),
      ).toEqual([
        ['default', 'shop.example', 1, 1, 1, 1, 1],
        ['track-b', 'shop.example', 1, 1, 0, 1, 0],
        ['default', 'docs.example', 1, 1, 0, 0, 0],
      ])
      expect(domains[0]?.lastActivityAt.toISOString()).toBe(later(6).toISOString())
      expect((await repo.domains('agent-a', 'track-b')).map((d) => d.domain)).toEqual(['shop.example'])
      expect(await repo.domains('agent-b', 'track-b')).toEqual([])

      expect(await repo.forgetDomain('agent-a', 'default', 'shop.example')).toEqual({
        runs: 1,
        trajectories: 1,
        runSessions: 1,
        facts: 1,
        selectors: 1,
        hints: 0,
      })
      expect(await repo.findRun('agent-a', 'r1')).toBeNull()
      expect(await repo.findRun('agent-a', 'off')).not.toBeNull()
      expect(await repo.countTrajectories('agent-a', { scope: 'track-b' })).toBe(1)
      expect(await repo.listHints('agent-a', 'default')).toHaveLength(1)
      expect(await repo.countTrajectories('agent-b', {})).toBe(1)

      expect(await repo.forgetScope('agent-a', 'track-b')).toEqual({
        runs: 0,
        trajectories: 1,
        runSessions: 0,
        facts: 1,
        selectors: 0,
        hints: 1,
      })
      // Manifests stay: the run still says which scope it used.
      expect((await repo.findRun('agent-a', 'rb'))?.scope).toBe('track-b')
      expect(await repo.listHints('agent-a', 'track-b')).toEqual([])
      expect(await repo.countTrajectories('agent-a', {})).toBe(1)
    })

    it('keeps hints oldest first per scope, updates and deletes only the agent’s own', async () => {
      const repo = await twoAgents(fixture().storage)
      const second = await repo.addHint('agent-a', {
        scope: 'default',
        text: 'two',
        createdAt: later(2),
        updatedAt: later(2),
        extra: null,
      })
      const first = await repo.addHint('agent-a', {
        scope: 'default',
        text: 'one',
        createdAt: later(1),
        updatedAt: later(1),
        extra: { x: 1 },
      })
      expect((await repo.listHints('agent-a', 'default')).map((h) => h.text)).toEqual(['one', 'two'])
      expect(first.extra).toEqual({ x: 1 })
      await expect(
        repo.updateHint('agent-b', first.id, { text: 'stolen', updatedAt: later(3) }),
      ).rejects.toBeInstanceOf(NotFoundError)
      const updated = await repo.updateHint('agent-a', first.id, { text: 'one, better', updatedAt: later(3) })
      expect(updated).toMatchObject({ text: 'one, better', extra: { x: 1 } })
      expect(updated.updatedAt.toISOString()).toBe(later(3).toISOString())
      expect(await repo.deleteHint('agent-b', second.id)).toBe(false)
      expect(await repo.deleteHint('agent-a', second.id)).toBe(true)
      expect((await repo.listHints('agent-a', 'default')).map((h) => h.text)).toEqual(['one, better'])
      expect(await repo.listHints('agent-b', 'default')).toEqual([])
    })

    it('snapshots an agent (or one scope) and restores it into another agent with ids and extra kept; clear empties it', async () => {
      const { storage } = fixture()
      const repo = await twoAgents(storage)
      await storage.repositories.agents.upsert('agent-c', null)
      await repo.insertRun('agent-a', run('r1', { extra: { custom: [1, 2] }, artifactPaths: ['shot.png'] }))
      await repo.insertRun('agent-a', run('off', { isolation: 'OFF', scope: null, startedAt: later(1) }))
      await repo.insertTrajectory(
        'agent-a',
        trajectory('t1', 'search red shoes', { runId: 'r1', extra: { v: 'x' } }),
        KEEP_ALL,
      )
      await repo.insertTrajectory('agent-a', trajectory('tb', 'search shoes', { scope: 'track-b' }), KEEP_ALL)
      await repo.insertRunSession('agent-a', session('r1', later(1), { extra: { keep: true } }), 5)
      await repo.observeFact('agent-a', fact('#q'), T0, RULES, 'r1')
      await repo.observeSelector('agent-a', selector('#s', 'SUCCESS'), T0, 'r1')
      await repo.addHint('agent-a', {
        scope: 'default',
        text: 'hint',
        createdAt: T0,
        updatedAt: T0,
        extra: { h: 1 },
      })

      const whole = await repo.snapshot('agent-a')
      expect(ids(whole.runs)).toEqual(['r1', 'off'])
      expect(ids(whole.trajectories)).toEqual(['t1', 'tb'])
      expect([
        whole.runSessions.length,
        whole.facts.length,
        whole.selectors.length,
        whole.hints.length,
      ]).toEqual([1, 1, 1, 1])
      const scoped = await repo.snapshot('agent-a', 'track-b')
      expect([
        scoped.runs.length,
        ids(scoped.trajectories),
        scoped.facts.length,
        scoped.hints.length,
      ]).toEqual([0, ['tb'], 0, 0])
      expect(await repo.snapshot('agent-b')).toEqual({
        runs: [],
        runSessions: [],
        trajectories: [],
        facts: [],
        selectors: [],
        hints: [],
      })

      // Cleared, then restored into another agent: the same records under it, ids and extra kept.
      expect(await repo.clear('agent-a')).toEqual({
        runs: 2,
        trajectories: 2,
        runSessions: 1,
        facts: 1,
        selectors: 1,
        hints: 1,
      })
      expect((await repo.snapshot('agent-a')).runs).toEqual([])
      expect(await repo.domains('agent-a')).toEqual([])
      await repo.restore('agent-c', whole)
      const copy = await repo.snapshot('agent-c')
      const asAgent = <T extends { agentId: string }>(rows: T[]) =>
        rows.map((r) => ({ ...r, agentId: 'agent-c' }))
      expect(copy).toEqual({
        runs: asAgent(whole.runs),
        runSessions: asAgent(whole.runSessions),
        trajectories: asAgent(whole.trajectories),
        facts: asAgent(whole.facts),
        selectors: asAgent(whole.selectors),
        hints: asAgent(whole.hints),
      })
      expect(copy.runs[0]?.extra).toEqual({ custom: [1, 2] })
      expect(copy.trajectories[0]?.extra).toEqual({ v: 'x' })
      // The restored trajectory is matched like any other (its words are indexed).
      const query = {
        scope: 'default',
        domain: 'shop.example',
        words: goalWords('red shoes'),
        minShared: 2,
        since: T0,
      }
      expect(ids(await repo.trajectoryCandidates('agent-c', query, 5))).toEqual(['t1'])
      // Restoring again replaces rather than duplicates.
      await repo.restore('agent-c', whole)
      expect(await repo.countTrajectories('agent-c', {})).toBe(2)
      expect(await repo.countFacts('agent-c', { scope: 'default' })).toBe(1)
      expect(await repo.snapshot('agent-a')).toEqual(await repo.snapshot('agent-b'))
    })

    it('rolls back with its unit of work: a failed import writes none of it, a failed clear keeps it', async () => {
      const { storage } = fixture()
      const repo = await twoAgents(storage)
      await repo.insertRun('agent-a', run('r1'))
      await repo.insertTrajectory('agent-a', trajectory('t1', 'search red shoes', { runId: 'r1' }), KEEP_ALL)
      await repo.observeFact('agent-a', fact('#q'), T0, RULES, 'r1')
      await repo.addHint('agent-a', {
        scope: 'default',
        text: 'hint',
        createdAt: T0,
        updatedAt: T0,
        extra: null,
      })
      const before = await repo.snapshot('agent-a')
      const failed = storage.unitOfWork.transaction(async (tx) => {
        await tx.archive.clear('agent-a')
        await tx.archive.addTrajectoryMemory('agent-b', before)
        throw new Error('the import failed part-way')
      })
      await expect(failed).rejects.toThrow('the import failed part-way')
      expect(await repo.snapshot('agent-a')).toEqual(before)
      expect((await repo.snapshot('agent-b')).trajectories).toEqual([])
      expect(await repo.findRun('agent-b', 'r1')).toBeNull()
      // The same writes committed: the records move as they are.
      await storage.unitOfWork.transaction(async (tx) => {
        await tx.archive.addTrajectoryMemory('agent-b', before)
      })
      const moved = (
        await storage.repositories.archive.read('agent-b', { vectorModel: 'm', includeSnapshots: false })
      )?.trajectories
      expect(moved?.runs.map((r) => [r.id, r.agentId])).toEqual([['r1', 'agent-b']])
      expect(moved?.trajectories.map((t) => t.id)).toEqual(['t1'])
    })
  })
}
