import { describe, expect, it } from 'vitest'
import { indexLexeme, MAX_LEXEME_BYTES, quoteLexeme, searchTokens, tokensForWrite } from './search-tokens.ts'

describe('searchTokens', () => {
  it("writes FTS5's stems with positions running on across columns, and the exact length", () => {
    // Porter stems (runs, running -> run), stop words kept, positions from 1 across both columns.
    expect(searchTokens(['The runner runs', 'running'])).toEqual({
      searchTokens: "'the':1 'runner':2 'run':3,4",
      searchLength: 4,
    })
    // Diacritics removed and compounds split as FTS5 does; JSON punctuation yields no token.
    expect(searchTokens(['Café well-known', '["tea"]'])).toEqual({
      searchTokens: "'cafe':1 'well':2 'known':3 'tea':4",
      searchLength: 4,
    })
    expect(searchTokens(['', '[]'])).toEqual({ searchTokens: '', searchLength: 0 })
  })

  it("keeps tsvector's 256 positions of a lexeme, with the exact count and length beside them", () => {
    const { searchTokens: written, searchLength } = searchTokens(['tea '.repeat(300)])
    expect(searchLength).toBe(300)
    const [counts, literal] = written.split('\n')
    expect(JSON.parse(counts ?? '')).toEqual({ tea: 300 })
    const positions = (literal ?? '').replace("'tea':", '').split(',')
    expect(positions).toHaveLength(256)
    expect(positions.at(-1)).toBe('256')
  })

  it("stands in for a term past Postgres's 2,046 bytes: a prefix of whole characters and the term's hash", () => {
    expect(indexLexeme('tea')).toBe('tea')
    expect(indexLexeme('y'.repeat(2_046))).toBe('y'.repeat(2_046))
    const long = indexLexeme('y'.repeat(10_000))
    expect(long).toMatch(/^y{1000} [0-9a-f]{64}$/)
    expect(indexLexeme('y'.repeat(10_001))).not.toBe(long)
    // Two-byte characters: 500 of them fit the 1,000-byte prefix, never half of one.
    const wide = indexLexeme('é'.repeat(1_500))
    expect(wide.split(' ')[0]).toBe('é'.repeat(500))
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(MAX_LEXEME_BYTES)
    expect(searchTokens(['y'.repeat(10_000)])).toEqual({ searchTokens: `'${long}':1`, searchLength: 1 })
  })

  it('quotes a lexeme for a literal: quotes and backslashes doubled', () => {
    expect(quoteLexeme("it's")).toBe("'it''s'")
    expect(quoteLexeme('a\\b')).toBe("'a\\\\b'")
  })
})

describe('tokensForWrite', () => {
  it('tokenises a create, the missing columns at their defaults', () => {
    expect(tokensForWrite('memoryItem', { content: 'green tea', category: 'fact' }, true)).toEqual({
      searchTokens: "'green':1 'tea':2",
      searchLength: 2,
    })
    expect(tokensForWrite('knowledge', { key: 'drink', value: 'green tea' }, true)).toEqual({
      searchTokens: "'drink':1 'green':2 'tea':3",
      searchLength: 3,
    })
  })

  it('tokenises an update that sets every indexed column', () => {
    expect(tokensForWrite('memoryItem', { content: 'tea', tags: '["hot"]' }, false)).toEqual({
      searchTokens: "'tea':1 'hot':2",
      searchLength: 2,
    })
    expect(tokensForWrite('message', { content: 'hello' }, false)?.searchLength).toBe(1)
  })

  it('gives none when an update sets only some indexed columns, or none of them', () => {
    // The row's other column is not in the write: the trigger marks it unindexed instead.
    expect(tokensForWrite('memoryItem', { tags: '["hot"]' }, false)).toBeNull()
    expect(tokensForWrite('knowledge', { value: 'green tea' }, false)).toBeNull()
    expect(tokensForWrite('memoryItem', { importance: 0.9 }, false)).toBeNull()
    expect(tokensForWrite('message', { isCompressed: true }, false)).toBeNull()
    // An increment or other operation object is not text the client can tokenise.
    expect(tokensForWrite('message', { content: { set: 'x' } }, false)).toBeNull()
  })
})
