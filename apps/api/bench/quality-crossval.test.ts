import { describe, expect, it } from 'vitest'
import {
  beforeIssue11,
  configurationKey,
  DEFAULTS,
  type KnobValue,
  missingKnob,
  RETRIEVAL_CHANGES,
  type RetrievalChange,
  selectChanges,
  withKnob,
} from './quality-changes.ts'
import {
  chooseTunedValue,
  crossValidate,
  inBucket,
  meanRecall,
  outcomeOf,
  recallAt,
  summariseLatency,
  verdictOf,
} from './quality-crossval.ts'

const change = (name: string) => RETRIEVAL_CHANGES.find((c) => c.name === name) as RetrievalChange

describe('choosing the tuned value', () => {
  it('takes the best score', () => {
    expect(
      chooseTunedValue(
        [
          { value: 0, score: 70 },
          { value: 0.25, score: 71 },
          { value: 0.5, score: 74 },
          { value: 1, score: 73 },
        ],
        0,
      ),
    ).toBe(0.5)
  })

  it('gives a tie to the off value, then to the value nearest off, then to the first listed', () => {
    const off = { value: 0, score: 74 }
    expect(chooseTunedValue([off, { value: 0.5, score: 74 }], 0)).toBe(0)
    expect(
      chooseTunedValue(
        [
          { value: 0, score: 70 },
          { value: 1, score: 74 },
          { value: 0.25, score: 74 },
        ],
        0,
      ),
    ).toBe(0.25)
    expect(
      chooseTunedValue(
        [
          { value: 'structured', score: 74 },
          { value: 'said', score: 74 },
        ],
        'said',
      ),
    ).toBe('said')
    expect(
      chooseTunedValue(
        [
          { value: null, score: 70 },
          { value: 0.7, score: 72 },
          { value: 1, score: 72 },
        ],
        null,
      ),
    ).toBe(0.7)
  })

  it('treats a difference in the last bits of a mean as a tie', () => {
    expect(
      chooseTunedValue(
        [
          { value: 1, score: 0.3 },
          { value: 0.5, score: 0.1 + 0.2 },
        ],
        1,
      ),
    ).toBe(1)
  })
})

describe('cross-validation', () => {
  // Mean R@10 per (value, conversation): 0.5 is best on conv-a, 1 is best on conv-b.
  const table: Record<string, Record<string, number>> = {
    '0': { 'conv-a': 70, 'conv-b': 60 },
    '0.5': { 'conv-a': 75, 'conv-b': 62 },
    '1': { 'conv-a': 72, 'conv-b': 65 },
  }
  const r10 = (value: KnobValue, conversation: string) => table[String(value)]?.[conversation] as number

  it('tunes on each conversation and measures the gain over off on the other, both ways', () => {
    const results = crossValidate({ values: [0.5, 1], off: 0 }, ['conv-a', 'conv-b'], r10)
    expect(results).toEqual([
      { tunedOn: 'conv-a', heldOut: 'conv-b', value: 0.5, inSample: 5, heldOutDelta: 2 },
      { tunedOn: 'conv-b', heldOut: 'conv-a', value: 1, inSample: 5, heldOutDelta: 2 },
    ])
    expect(verdictOf(results.map((r) => r.heldOutDelta))).toBe('helps on both held-out')
  })

  it('shows an in-sample gain that does not hold out', () => {
    const overfit: Record<string, Record<string, number>> = {
      '0': { 'conv-a': 70, 'conv-b': 60 },
      '0.5': { 'conv-a': 73, 'conv-b': 58 },
    }
    const results = crossValidate({ values: [0.5], off: 0 }, ['conv-a', 'conv-b'], (v, c) => {
      return overfit[String(v)]?.[c] as number
    })
    expect(results[0]).toMatchObject({ value: 0.5, inSample: 3, heldOutDelta: -2 })
    // Tuned on conv-b the change loses, so off is kept and gains nothing on conv-a.
    expect(results[1]).toMatchObject({ value: 0, inSample: 0, heldOutDelta: 0 })
    expect(verdictOf(results.map((r) => r.heldOutDelta))).toBe('mixed')
  })
})

describe('the verdict', () => {
  it('helps only when every held-out gain is above zero, hurts when every one is below', () => {
    expect(verdictOf([0.4, 1.2])).toBe('helps on both held-out')
    expect(verdictOf([-0.4, -1.2])).toBe('hurts')
    expect(verdictOf([0.4, -1.2])).toBe('mixed')
    expect(verdictOf([0, 1.2])).toBe('mixed')
    expect(verdictOf([1e-12, 1.2])).toBe('mixed')
    expect(verdictOf([])).toBe('mixed')
  })
})

describe('recall', () => {
  it('counts the evidence among the first k hits and averages per bucket in percent', () => {
    expect(recallAt(['D1:1', 'D1:2', 'D1:3'], ['D1:3', 'D2:1'], 2)).toBe(0)
    expect(recallAt(['D1:1', 'D1:2', 'D1:3'], ['D1:3', 'D2:1'], 3)).toBe(0.5)
    const outcomes = [outcomeOf(2, ['D1:1'], ['D1:1']), outcomeOf(4, ['D1:2'], ['D1:1'])]
    expect(meanRecall(outcomes, 10)).toBe(50)
    expect(meanRecall(inBucket(outcomes, 'temporal'), 10)).toBe(100)
    expect(meanRecall(inBucket(outcomes, 'multi-hop'), 10)).toBeNaN()
  })
})

describe('latency', () => {
  const ms = (from: number) => Array.from({ length: 100 }, (_, i) => from + i)

  it('reports p50 and p95 by nearest rank and the p95 budget of +25%', () => {
    const within = summariseLatency(
      ms(1),
      ms(1).map((v) => v * 1.25),
    )
    expect(within.before).toEqual({ p50: 50, p95: 95, calls: 100 })
    expect(within.p95Ratio).toBeCloseTo(1.25)
    expect(within.withinBudget).toBe(true)
    const over = summariseLatency(
      ms(1),
      ms(1).map((v) => v * 1.26),
    )
    expect(over.withinBudget).toBe(false)
  })
})

describe('configurations', () => {
  it('moves the vector share out of BM25 and leaves out a knob set to null', () => {
    expect(withKnob(DEFAULTS, change('vector'), 0.4).input).toEqual({ weights: { vector: 0.4, bm25: 0.6 } })
    const mmr = withKnob(DEFAULTS, change('mmr'), 0.5)
    expect(mmr.input).toEqual({ mmrLambda: 0.5 })
    expect(withKnob(mmr, change('mmr'), null)).toEqual(DEFAULTS)
    expect(withKnob(DEFAULTS, change('speaker-fields'), 'structured').ingest).toBe('structured')
  })

  it('keys a configuration the same whatever order its fields were set in', () => {
    const a = withKnob(withKnob(DEFAULTS, change('time'), 0.5), change('neighbours'), 2)
    const b = withKnob(withKnob(DEFAULTS, change('neighbours'), 2), change('time'), 0.5)
    expect(configurationKey(a)).toBe(configurationKey(b))
    expect(configurationKey(a)).not.toBe(configurationKey(withKnob(a, change('time'), 1)))
  })

  it('builds "before issue 11" from the knobs this build has, and names the missing one', () => {
    const schema = {
      search: new Set(['query', 'mmrLambda', 'weights']),
      weights: new Set(['bm25', 'vector', 'context']),
    }
    expect(beforeIssue11(schema)).toEqual({
      ingest: 'said',
      input: { weights: { context: 1, vector: 0.3, bm25: 0.7 } },
    })
    expect(missingKnob(change('time'), schema)).toBe('SearchWeightsInput has no time')
    expect(missingKnob(change('neighbours'), schema)).toBe('SearchInput has no contextTurns')
    expect(missingKnob(change('speaker-fields'), schema)).toBeNull()
  })

  it('selects changes by name and refuses an unknown one', () => {
    expect(selectChanges(['time', 'speaker']).map((c) => c.name)).toEqual(['time', 'speaker'])
    expect(() => selectChanges(['tiem'])).toThrow(/unknown change\(s\) tiem/)
  })
})
