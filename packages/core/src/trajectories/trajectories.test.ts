import { describe, expect, it } from 'vitest'
import { observeFact } from './app-facts.ts'
import { domainDirectoryName, normalizeRunDomain } from './domains.ts'
import { newRunId, DEFAULT_TRAJECTORY_RULES as R, runMemoryScope, TrajectoryRulesSchema } from './rules.ts'
import { compareSelectors, observeSelector, type SelectorState, selectorIsKnownGood } from './selectors.ts'
import {
  goalSimilarity,
  goalWords,
  minSharedWords,
  rankReferenceTrajectories,
  trajectoryScore,
} from './similarity.ts'

const DAY = 86_400_000
const now = new Date('2026-06-01T00:00:00Z')

describe('goal matching (spec 004: word-overlap Jaccard, threshold 0.5)', () => {
  it('compares word sets, case and punctuation aside, skipping one-letter words', () => {
    expect(goalWords('Search for "smart watch" reviews, a lot!')).toEqual([
      'search',
      'for',
      'smart',
      'watch',
      'reviews',
      'lot',
    ])
    expect(goalSimilarity('Search for smart watch reviews', 'search smart watch reviews')).toBeCloseTo(4 / 5)
    expect(goalSimilarity('', '')).toBe(1)
    expect(goalSimilarity('buy shoes', '')).toBe(0)
  })

  it('offers a trajectory at exactly the threshold and not just under it', () => {
    const at = {
      id: 'a',
      goal: 'book a flight to paris',
      recordedAt: now,
      durationMs: 1,
      stepCount: 1,
      verifiedCount: 1,
    }
    // {book, flight, to, paris} vs {book, flight, to, rome}: 3/5 = 0.6; vs {book, hotel, in, rome}: 1/7.
    expect(rankReferenceTrajectories('book a flight to rome', [at], now, R)).toHaveLength(1)
    const half = { ...at, id: 'h', goal: 'alpha beta gamma delta' }
    expect(goalSimilarity('alpha beta gamma delta', 'alpha beta')).toBe(0.5)
    expect(rankReferenceTrajectories('alpha beta', [half], now, R)).toHaveLength(1)
    expect(
      rankReferenceTrajectories('alpha beta', [half], now, { ...R, similarityThreshold: 0.51 }),
    ).toHaveLength(0)
  })

  it('expires trajectories after traceTtlDays (30): a day under is offered, a day over is not', () => {
    const t = (age: number) => ({
      id: `t${age}`,
      goal: 'open settings',
      recordedAt: new Date(now.getTime() - age * DAY),
      durationMs: 1,
      stepCount: 0,
      verifiedCount: 0,
    })
    const ids = rankReferenceTrajectories('open settings', [t(29), t(31)], now, R).map((m) => m.trajectory.id)
    expect(ids).toEqual(['t29'])
  })

  it('ranks by the 60/20/10/10 blend with trace scoring on, by similarity alone otherwise', () => {
    const exactButOld = {
      id: 'old',
      goal: 'export the monthly report',
      recordedAt: new Date(now.getTime() - 25 * DAY),
      durationMs: 600_000,
      stepCount: 4,
      verifiedCount: 0,
    }
    const closeAndFresh = {
      id: 'fresh',
      goal: 'export monthly report now',
      recordedAt: now,
      durationMs: 10_000,
      stepCount: 4,
      verifiedCount: 4,
    }
    const goal = 'export the monthly report'
    expect(rankReferenceTrajectories(goal, [exactButOld, closeAndFresh], now, R)[0]?.trajectory.id).toBe(
      'old',
    )
    const scored = rankReferenceTrajectories(goal, [exactButOld, closeAndFresh], now, {
      ...R,
      traceScoring: true,
    })
    expect(scored[0]?.trajectory.id).toBe('fresh')
    const s = goalSimilarity(goal, closeAndFresh.goal)
    expect(scored[0]?.score).toBeCloseTo(s * 0.6 + 1 * 0.2 + (1 / (1 + 10_000 / 60_000)) * 0.1 + 1 * 0.1)
    expect(
      trajectoryScore(
        1,
        {
          recordedAt: new Date(now.getTime() - 14 * DAY),
          durationMs: 60_000,
          stepCount: 0,
          verifiedCount: 0,
        },
        now,
        R,
      ),
    ).toBeCloseTo(0.6 + 0.2 / Math.E + 0.05 + 0.05)
  })

  it('bounds the words a candidate must share so an index can skip the rest', () => {
    expect(minSharedWords(4, 0.5)).toBe(2)
    expect(minSharedWords(5, 0.5)).toBe(3)
    expect(minSharedWords(3, 0)).toBe(0)
  })
})

describe('app knowledge confidence (0.6 start, +(1−c)·0.2, halved on contradiction, pruned under 0.1)', () => {
  const fact = (id: string, value: string, confidence: number, sources = 1) => ({
    id,
    type: 'QUIRK' as const,
    key: 'modals',
    value,
    confidence,
    sources,
  })
  it('starts a new fact at 0.6', () => {
    const change = observeFact([], { type: 'QUIRK', key: 'modals', value: 'shadow DOM' }, R)
    expect(change.insert?.confidence).toBe(0.6)
  })
  it('confirms the same value', () => {
    const change = observeFact(
      [fact('f', 'shadow DOM', 0.6)],
      { type: 'QUIRK', key: 'modals', value: 'shadow DOM' },
      R,
    )
    expect(change.updates).toHaveLength(1)
    expect(change.updates[0]?.confidence).toBeCloseTo(0.68, 10)
    expect(change.updates[0]?.sources).toBe(2)
    expect(change.insert).toBeNull()
  })
  it('halves a contradicted value and prunes it once under 0.1', () => {
    const c1 = observeFact(
      [fact('f', 'shadow DOM', 0.6)],
      { type: 'QUIRK', key: 'modals', value: 'iframe' },
      R,
    )
    expect(c1.updates).toEqual([{ id: 'f', confidence: 0.3, sources: 1 }])
    expect(c1.insert?.value).toBe('iframe')
    const c2 = observeFact(
      [fact('f', 'shadow DOM', 0.19)],
      { type: 'QUIRK', key: 'modals', value: 'iframe' },
      R,
    )
    expect(c2.prune).toEqual(['f'])
    const c3 = observeFact(
      [fact('f', 'shadow DOM', 0.2)],
      { type: 'QUIRK', key: 'modals', value: 'iframe' },
      R,
    )
    expect(c3.prune).toEqual([])
  })
})

describe('the selector cache', () => {
  const base: SelectorState = {
    element: 'button "Search"',
    selector: '[data-testid=search]',
    successCount: 0,
    failureCount: 0,
    consecutiveFailures: 0,
    lastUsedAt: now,
  }
  it('ranks by successes, and stops offering a selector after 3 failures in a row', () => {
    let s = observeSelector(base, 'SUCCESS', now)
    s = observeSelector(s, 'FAILURE', now)
    s = observeSelector(s, 'FAILURE', now)
    expect(selectorIsKnownGood(s, R)).toBe(true)
    s = observeSelector(s, 'FAILURE', now)
    expect(selectorIsKnownGood(s, R)).toBe(false)
    expect(selectorIsKnownGood(observeSelector(s, 'SUCCESS', now), R)).toBe(true)
    const ref = { ...base, selector: '@e12', successCount: 2 }
    const stable = { ...base, successCount: 2 }
    const better = { ...base, selector: '#q', successCount: 5 }
    expect([ref, stable, better].sort(compareSelectors).map((x) => x.selector)).toEqual([
      '#q',
      '[data-testid=search]',
      '@e12',
    ])
  })
})

describe('domains, scopes and ids', () => {
  it('takes the host of a URL and names directories as the documented system does', () => {
    expect(normalizeRunDomain('https://WWW.Example.com/path?q=1')).toBe('www.example.com')
    expect(normalizeRunDomain('http://localhost:5173/x')).toBe('localhost:5173')
    expect(normalizeRunDomain('  GitHub.com ')).toBe('github.com')
    expect(domainDirectoryName('localhost:5173')).toBe('localhost_5173')
  })
  it('gives a per-run scope, the shared one, or none', () => {
    expect(runMemoryScope('PER_RUN', 'track', 'run_1')).toBe('run:run_1')
    expect(runMemoryScope('SHARED', undefined, 'run_1')).toBe('default')
    expect(runMemoryScope('SHARED', 'track-7', 'run_1')).toBe('track-7')
    expect(runMemoryScope('OFF', 'track-7', 'run_1')).toBeNull()
  })
  it('makes ids in the documented shape, and every rule is configurable', () => {
    let i = 0
    expect(newRunId(1_710_543_210_000, () => (i++ % 36) / 36)).toBe('run_1710543210000_012345')
    expect(() => TrajectoryRulesSchema.parse({ similarityThreshold: 1.5 })).toThrow()
    expect(TrajectoryRulesSchema.parse({ traceTtlDays: 14 }).traceTtlDays).toBe(14)
  })
})
