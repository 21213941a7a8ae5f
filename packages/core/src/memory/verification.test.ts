import { describe, expect, it } from 'vitest'
import { DEFAULT_MEMORY_SETTINGS, type MemoryCategory } from './memory-item.ts'
import { type ExistingMemory, jaccard, verifyMemory } from './verification.ts'

const T0 = new Date('2026-01-01T00:00:00.000Z')
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000)
const memory = (
  id: string,
  content: string,
  category: MemoryCategory = 'fact',
  minutes = 0,
): ExistingMemory => ({
  id,
  content,
  category,
  createdAt: at(minutes),
})
const settings = DEFAULT_MEMORY_SETTINGS
const candidate = (content: string, category: MemoryCategory = 'fact') => ({ content, category })

// Content words only (no stop words), so the overlaps below are exact fractions:
// "red green blue" vs "red green blue cyan yellow": 3 shared of 5 = 0.6.
const SIX_TENTHS = ['red green blue', 'red green blue cyan yellow'] as const
// 3 shared of 10 = 0.3.
const THREE_TENTHS = ['one two three four five six', 'one two three seven eight nine ten'] as const

describe('jaccard', () => {
  it('is 0 for two empty sets and the overlap ratio otherwise', () => {
    expect(jaccard(new Set(), new Set())).toBe(0)
    expect(jaccard(new Set(['a']), new Set())).toBe(0)
    expect(jaccard(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3)
    expect(jaccard(new Set(['a']), new Set(['a']))).toBe(1)
  })
})

describe('verifyMemory', () => {
  it('stores anything when verification is disabled', () => {
    const existing = [memory('m1', 'red green blue')]
    expect(
      verifyMemory(candidate('red green blue'), existing, [{ id: 'm1', similarity: 1 }], {
        ...settings,
        verificationEnabled: false,
      }),
    ).toEqual({ kind: 'stored', supersedes: null, similarity: null })
  })

  it('stores into an empty memory', () => {
    expect(verifyMemory(candidate('User lives in Paris'), [], [], settings)).toEqual({
      kind: 'stored',
      supersedes: null,
      similarity: null,
    })
  })

  describe('layer 1: word overlap', () => {
    it('is a duplicate at exactly the threshold, in any category', () => {
      const existing = [memory('m1', SIX_TENTHS[1], 'skill')]
      expect(verifyMemory(candidate(SIX_TENTHS[0]), existing, [], settings)).toEqual({
        kind: 'duplicate',
        of: 'm1',
        layer: 'jaccard',
        similarity: 0.6,
      })
    })

    it('is no duplicate just under the threshold', () => {
      const existing = [memory('m1', SIX_TENTHS[1], 'skill')]
      const outcome = verifyMemory(candidate(SIX_TENTHS[0]), existing, [], {
        ...settings,
        jaccardDedupThreshold: 0.6000001,
      })
      expect(outcome).toEqual({ kind: 'stored', supersedes: null, similarity: null })
    })

    it('names the closest entry, the oldest on a tie', () => {
      const existing = [
        memory('newer', 'red green blue cyan', 'fact', 10),
        memory('older', 'red green blue magenta', 'fact', 5),
        memory('closer-but-later', 'red green blue', 'fact', 20),
      ]
      expect(verifyMemory(candidate('red green blue cyan'), existing, [], settings)).toMatchObject({
        of: 'newer',
        similarity: 1,
      })
      expect(
        verifyMemory(candidate('red green blue yellow'), existing.slice(0, 2), [], settings),
      ).toMatchObject({
        of: 'older',
        similarity: 0.6,
      })
    })

    it('ignores case, punctuation and stop words', () => {
      const existing = [memory('m1', 'The user prefers dark mode.')]
      expect(verifyMemory(candidate('user PREFERS dark mode'), existing, [], settings)).toMatchObject({
        kind: 'duplicate',
        of: 'm1',
        similarity: 1,
      })
    })

    it('finds no duplicate between texts without content words', () => {
      const existing = [memory('m1', 'it is what it is')]
      expect(verifyMemory(candidate('is it?'), existing, [], settings)).toMatchObject({ kind: 'stored' })
    })
  })

  describe('layer 2: contradiction', () => {
    it('supersedes a same-category entry in the band', () => {
      const existing = [memory('paris', 'User lives in Paris')]
      expect(verifyMemory(candidate('User lives in Berlin'), existing, [], settings)).toEqual({
        kind: 'stored',
        supersedes: 'paris',
        similarity: 0.5,
      })
    })

    it('does not supersede at exactly the lower bound (an open interval)', () => {
      const existing = [memory('m1', THREE_TENTHS[1])]
      expect(verifyMemory(candidate(THREE_TENTHS[0]), existing, [], settings)).toEqual({
        kind: 'stored',
        supersedes: null,
        similarity: null,
      })
    })

    it('supersedes just above the lower bound', () => {
      const existing = [memory('m1', THREE_TENTHS[1])]
      expect(
        verifyMemory(candidate(THREE_TENTHS[0]), existing, [], {
          ...settings,
          contradictionThreshold: 0.2999,
        }),
      ).toEqual({ kind: 'stored', supersedes: 'm1', similarity: 0.3 })
    })

    it('supersedes just under the dedup threshold', () => {
      const existing = [memory('m1', SIX_TENTHS[1])]
      expect(
        verifyMemory(candidate(SIX_TENTHS[0]), existing, [], {
          ...settings,
          jaccardDedupThreshold: 0.6000001,
        }),
      ).toEqual({ kind: 'stored', supersedes: 'm1', similarity: 0.6 })
    })

    it('leaves an entry of another category alone', () => {
      const existing = [memory('paris', 'User lives in Paris', 'preference')]
      expect(verifyMemory(candidate('User lives in Berlin', 'fact'), existing, [], settings)).toEqual({
        kind: 'stored',
        supersedes: null,
        similarity: null,
      })
    })

    it('supersedes the closest entry, the oldest on a tie', () => {
      const existing = [
        memory('far', 'User lives in Paris France Europe', 'fact', 0),
        memory('late', 'User lives in Rome', 'fact', 30),
        memory('early', 'User lives in Madrid', 'fact', 10),
      ]
      expect(verifyMemory(candidate('User lives in Berlin'), existing, [], settings)).toEqual({
        kind: 'stored',
        supersedes: 'early',
        similarity: 0.5,
      })
    })
  })

  describe('layer 3: semantic duplicate', () => {
    const existing = [memory('m1', 'User owns a golden retriever')]

    it('is a duplicate at exactly the threshold', () => {
      expect(
        verifyMemory(candidate('The user has a dog'), existing, [{ id: 'm1', similarity: 0.85 }], settings),
      ).toEqual({ kind: 'duplicate', of: 'm1', layer: 'semantic', similarity: 0.85 })
    })

    it('is stored just under the threshold', () => {
      expect(
        verifyMemory(candidate('The user has a dog'), existing, [{ id: 'm1', similarity: 0.8499 }], settings),
      ).toEqual({ kind: 'stored', supersedes: null, similarity: null })
    })

    it('names the most similar neighbour', () => {
      const neighbours = [
        { id: 'a', similarity: 0.86 },
        { id: 'b', similarity: 0.93 },
        { id: 'c', similarity: 0.9 },
      ]
      expect(verifyMemory(candidate('The user has a dog'), existing, neighbours, settings)).toMatchObject({
        of: 'b',
        similarity: 0.93,
      })
    })

    it('does not count the entry being superseded', () => {
      const paris = [memory('paris', 'User lives in Paris')]
      expect(
        verifyMemory(candidate('User lives in Berlin'), paris, [{ id: 'paris', similarity: 0.95 }], settings),
      ).toEqual({ kind: 'stored', supersedes: 'paris', similarity: 0.5 })
    })

    it('still catches another neighbour while superseding', () => {
      const both = [memory('paris', 'User lives in Paris'), memory('home', 'Home city: Berlin, Germany')]
      const neighbours = [
        { id: 'paris', similarity: 0.95 },
        { id: 'home', similarity: 0.9 },
      ]
      expect(verifyMemory(candidate('User lives in Berlin'), both, neighbours, settings)).toEqual({
        kind: 'duplicate',
        of: 'home',
        layer: 'semantic',
        similarity: 0.9,
      })
    })

    it('lets layer 1 decide before layer 3', () => {
      expect(
        verifyMemory(
          candidate('User owns a golden retriever'),
          existing,
          [{ id: 'x', similarity: 0.99 }],
          settings,
        ),
      ).toMatchObject({ layer: 'jaccard', of: 'm1' })
    })
  })
})
