import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { cosineSimilarity } from '../vector/vector.ts'
import { createHashingEmbedder } from './hashing-embedder.ts'

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
