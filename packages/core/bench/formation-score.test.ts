import { describe, expect, it } from 'vitest'
import {
  chooseSettings,
  evidenceCovered,
  f1,
  type ObservationScore,
  recallThroughMemories,
  scoreObservations,
  sessionOf,
  speakerNames,
  summaryCoverage,
  wordSet,
} from './formation-score.ts'

const conversation = {
  speakers: ['Caroline', 'Melanie'],
  observations: [
    { text: 'Caroline attended an LGBTQ support group.', speaker: 'Caroline', turnIds: ['D1:3'] },
    { text: 'Melanie painted a lake sunrise last year.', speaker: 'Melanie', turnIds: ['D1:12'] },
    { text: 'Melanie has three kids.', speaker: 'Melanie', turnIds: ['D2:1'] },
  ],
}

describe('observation matching', () => {
  it('word sets are stems without stop words and the speakers', () => {
    const names = speakerNames(['Caroline', 'Melanie'])
    expect(wordSet('Caroline attended the support groups', names)).toEqual(
      new Set(['attend', 'support', 'group']),
    )
    expect(f1(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(0.5)
    expect(f1(new Set(), new Set(['b']))).toBe(0)
  })

  it('a memory matches an observation of its own turn with enough words in common, not another turn', () => {
    const score = scoreObservations(conversation, [
      { content: 'Caroline went to an LGBTQ support group', sourceTurnIds: ['D1:3'] },
      // The right words from the wrong turn: no match.
      { content: 'Melanie painted a lake sunrise', sourceTurnIds: ['D1:3'] },
      // Unrelated words from an annotated turn.
      { content: 'Melanie likes swimming', sourceTurnIds: ['D1:12'] },
      // A turn without observations.
      { content: 'Caroline enjoys pottery classes', sourceTurnIds: ['D9:9'] },
    ])
    expect(score).toEqual<ObservationScore>({
      recall: 1 / 3,
      precision: 1 / 4,
      precisionOnAnnotatedTurns: 1 / 3,
      memories: 4,
      observations: 3,
    })
  })

  it('chooses the settings with the best F1 of recall and precision', () => {
    const entry = (recall: number, precision: number) => ({
      score: { recall, precision, precisionOnAnnotatedTurns: 0, memories: 1, observations: 1 },
    })
    const best = entry(0.5, 0.5)
    expect(chooseSettings([entry(0.9, 0.1), best, entry(0.1, 1)])).toBe(best)
  })
})

describe('summary coverage', () => {
  const names = speakerNames(['Caroline', 'Melanie'])
  const reference =
    'Caroline attended an LGBTQ support group. Melanie painted a lake sunrise. They talked about adoption agencies.'

  it('counts a reference sentence covered when the summary holds half its words', () => {
    const coverage = summaryCoverage(
      reference,
      'Caroline: I went to a LGBTQ support group yesterday. Melanie: I painted that lake last year.',
      names,
    )
    // Sentence 1: attend ✗ lgbtq ✓ support ✓ group ✓ → 3/4; sentence 2: paint ✓ lake ✓ sunris ✗ → 2/3;
    // sentence 3: talk ✗ adopt ✗ agenc ✗.
    expect(coverage.sentences).toBeCloseTo(2 / 3)
    expect(coverage.words).toBeCloseTo(5 / 10)
  })

  it('an empty summary covers nothing and an identical one everything', () => {
    expect(summaryCoverage(reference, '', names)).toEqual({ sentences: 0, words: 0 })
    expect(summaryCoverage(reference, reference, names)).toEqual({ sentences: 1, words: 1 })
  })
})

describe('questions through memories', () => {
  const ranked = [
    { content: 'a', sourceTurnIds: ['D1:1'] },
    { content: 'b', sourceTurnIds: ['D1:2', 'D1:3'] },
    { content: 'c', sourceTurnIds: ['D1:4'] },
  ]

  it('reaches the source turns of the first k memories', () => {
    expect(recallThroughMemories(ranked, ['D1:3', 'D1:4'], 2)).toBe(0.5)
    expect(recallThroughMemories(ranked, ['D1:3', 'D1:4'], 3)).toBe(1)
    expect(recallThroughMemories(ranked, ['D1:9'], 3)).toBe(0)
  })

  it('a question is covered only when every evidence turn is some memory source', () => {
    const sources = new Set(['D1:1', 'D1:2'])
    expect(evidenceCovered(['D1:1', 'D1:2'], sources)).toBe(true)
    expect(evidenceCovered(['D1:1', 'D1:5'], sources)).toBe(false)
    expect(evidenceCovered([], sources)).toBe(false)
  })

  it('reads the session number from a turn id', () => {
    expect(sessionOf('D12:4')).toBe(12)
    expect(sessionOf('x')).toBeNaN()
  })
})
