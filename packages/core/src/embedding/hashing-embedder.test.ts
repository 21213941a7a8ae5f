import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { cosineSimilarity } from '../vector/vector.ts'
import { createHashingEmbedder, type SynonymLexicon } from './hashing-embedder.ts'

describe('hashing embedder (offline default)', () => {
  const embedder = createHashingEmbedder()

  it('is deterministic, normalised and of the configured size', async () => {
    const [a, b] = await embedder.embed(['Camping by the lake', 'Camping by the lake'])
    expect(a).toEqual(b)
    expect(a?.length).toBe(384)
    expect(Math.hypot(...(a as Float32Array))).toBeCloseTo(1, 5)
    expect(embedder.model).toBe('engram-hashing-v1-384')
    expect(createHashingEmbedder({ dimensions: 64 }).embedOne('x').length).toBe(64)
  })

  it('puts word forms and shared words closer than unrelated text', () => {
    const query = embedder.embedOne('When did they go camping at the lake?')
    const related = embedder.embedOne('We went camping by the lake last summer')
    const unrelated = embedder.embedOne('The quarterly report is due on Friday')
    expect(cosineSimilarity(query, related)).toBeGreaterThan(cosineSimilarity(query, unrelated) + 0.2)
  })

  it('scores misspellings above unrelated words through character trigrams', () => {
    const word = embedder.embedOne('photography')
    expect(cosineSimilarity(word, embedder.embedOne('photograpy'))).toBeGreaterThan(
      cosineSimilarity(word, embedder.embedOne('gardening')),
    )
  })

  it('maps text without content words to the zero vector', () => {
    expect([...embedder.embedOne('the and of')].every((v) => v === 0)).toBe(true)
  })

  it('rejects a size out of range, naming the field', () => {
    expect(() => createHashingEmbedder({ dimensions: 8 })).toThrow(ValidationError)
  })
})

describe('hashing embedder with a synonym lexicon', () => {
  // A stand-in for WordNet: two words share a group where they share a meaning.
  const groups: Record<string, string[]> = {
    automobile: ['car'],
    car: ['car', 'railcar', 'cable-car'],
    broke: ['fail', 'penniless'],
    stopped: ['fail', 'halt'],
    working: ['function', 'labour'],
    report: ['report'],
  }
  const lexicon: SynonymLexicon = { id: 'fake', groupsOf: (word) => groups[word] ?? [] }
  const plain = createHashingEmbedder()
  const withSynonyms = createHashingEmbedder({ lexicon })
  const cosine = (embedder: typeof plain, a: string, b: string) =>
    cosineSimilarity(embedder.embedOne(a), embedder.embedOne(b))
  const statement = 'the automobile broke down'
  const paraphrase = 'my car stopped working'
  const unrelated = 'the quarterly report is due on friday'

  it('scores a paraphrase through synonyms higher than without them, and above unrelated text', () => {
    const synonymous = cosine(withSynonyms, statement, paraphrase)
    expect(synonymous).toBeGreaterThan(cosine(plain, statement, paraphrase) + 0.1)
    expect(synonymous).toBeGreaterThan(cosine(withSynonyms, statement, unrelated) + 0.1)
  })

  it('names another vector space, so its vectors are never compared with plain ones', () => {
    expect(withSynonyms.model).toBe('engram-hashing-v2-fake-384')
    expect(withSynonyms.model).not.toBe(plain.model)
  })

  it('is deterministic across calls and instances', () => {
    const again = createHashingEmbedder({ lexicon })
    expect(withSynonyms.embedOne(paraphrase)).toEqual(again.embedOne(paraphrase))
    expect(withSynonyms.embedOne(paraphrase)).not.toEqual(plain.embedOne(paraphrase))
  })

  it('adds nothing at synonymWeight 0, and more likeness as the weight grows', () => {
    const off = createHashingEmbedder({ lexicon, synonymWeight: 0 })
    expect(off.embedOne(paraphrase)).toEqual(plain.embedOne(paraphrase))
    const light = cosine(createHashingEmbedder({ lexicon, synonymWeight: 0.5 }), statement, paraphrase)
    expect(cosine(withSynonyms, statement, paraphrase)).toBeGreaterThan(light)
  })

  it("spreads a word's groups: nine meanings weigh no more than one", () => {
    const many: SynonymLexicon = {
      id: 'many',
      groupsOf: (word) => (word === 'alpha' ? ['g'] : word === 'beta' ? 'abcdefghi'.split('') : []),
    }
    const wordsOnly = { pairWeight: 0, trigramWeight: 0 }
    const bare = createHashingEmbedder(wordsOnly)
    const embedder = createHashingEmbedder({ ...wordsOnly, lexicon: many, synonymWeight: 2 })
    // The word's own feature keeps the same share, 1 / sqrt(1 + 2²), whatever its group count.
    for (const word of ['alpha', 'beta']) {
      expect(cosineSimilarity(embedder.embedOne(word), bare.embedOne(word))).toBeCloseTo(1 / Math.sqrt(5), 3)
    }
  })

  it('rejects a synonym weight out of range, naming the field', () => {
    expect(() => createHashingEmbedder({ lexicon, synonymWeight: -1 })).toThrow(ValidationError)
  })
})
