import { describe, expect, it } from 'vitest'
import {
  createTokenCounter,
  DEFAULT_TOKENIZER,
  heuristicTokenCount,
  MAX_BPE_RUN_CHARS,
  TOKENIZER_NAMES,
} from './tokenizer.ts'

describe('token counting', () => {
  it('uses a real BPE tokenizer by default (o200k_base)', () => {
    const counter = createTokenCounter()
    expect(counter.name).toBe('o200k_base')
    expect(counter.count('hello world')).toBe(2)
    expect(counter.count('')).toBe(0)
  })

  it('offers cl100k_base and the spec heuristic ceil(len / 4)', () => {
    expect(createTokenCounter('cl100k_base').count('hello world')).toBe(2)
    expect(heuristicTokenCount('abcd')).toBe(1)
    expect(heuristicTokenCount('abcde')).toBe(2)
    expect(createTokenCounter('heuristic').count('x'.repeat(401))).toBe(101)
  })

  it('differs from the heuristic on real text', () => {
    const json = JSON.stringify({
      users: [
        { id: 1, name: 'Ada' },
        { id: 2, name: 'Grace' },
      ],
    })
    expect(createTokenCounter().count(json)).not.toBe(heuristicTokenCount(json))
  })

  it('counts long runs without white space in pieces, matching whole-text counts on normal text', () => {
    const counter = createTokenCounter()
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(40)
    const long = 'ab'.repeat(MAX_BPE_RUN_CHARS) // one run of 1,024 characters
    const text = `${prose}${long} tail`
    const pieces =
      counter.count(prose) + counter.count(long.slice(0, MAX_BPE_RUN_CHARS)) * 2 + counter.count(' tail')
    expect(Math.abs(counter.count(text) - pieces)).toBeLessThanOrEqual(2)
    expect(counter.count('x'.repeat(100_000))).toBeGreaterThan(10_000)
  })

  it('counts special-token markers inside stored text as plain text instead of throwing', () => {
    for (const name of ['o200k_base', 'cl100k_base'] as const) {
      const counter = createTokenCounter(name)
      const marker = counter.count('<|endoftext|>')
      // As plain text the marker is several tokens; as the special token it would be one.
      expect(marker).toBeGreaterThan(1)
      expect(counter.count('before <|endoftext|> after')).toBeGreaterThan(marker)
    }
  })

  it('reports the tokenizer it uses', () => {
    expect(TOKENIZER_NAMES.map((name) => createTokenCounter(name).name)).toEqual([...TOKENIZER_NAMES])
    expect(DEFAULT_TOKENIZER).toBe('o200k_base')
  })
})
