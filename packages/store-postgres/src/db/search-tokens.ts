import { createHash } from 'node:crypto'
import { FullTextTokenizer } from '@engram/store-sqlite'

/**
 * The columns each searchable table indexes, in FTS5's column order (the SQLite migrations'
 * MessageSearch, MemorySearch and KnowledgeSearch): positions run on across columns, so a
 * document's length and each term's count are FTS5's totals over its columns.
 */
export const SEARCH_COLUMNS = {
  message: ['content'],
  memoryItem: ['content', 'tags'],
  knowledge: ['key', 'value'],
} as const
export type SearchModel = keyof typeof SEARCH_COLUMNS

/** What a create leaves a column at when it is not given (the schema's defaults). */
const COLUMN_DEFAULTS: Record<string, string> = { tags: '[]' }

/** A document's tokens as Postgres stores them: a tsvector literal and the exact token count. */
export interface SearchTokens {
  searchTokens: string
  searchLength: number
}

let shared: FullTextTokenizer | null = null
/** One tokenizer per process: an in-memory FTS5 table, synchronous, so calls never interleave. */
export function fullTextTokenizer(): FullTextTokenizer {
  shared ??= new FullTextTokenizer()
  return shared
}

/** A lexeme quoted for a tsvector or tsquery literal (quotes and backslashes doubled). */
export function quoteLexeme(term: string): string {
  return `'${term.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
}

/** Positions a tsvector keeps per lexeme at most (Postgres's MAXNUMPOS); the rest are dropped. */
export const MAX_LEXEME_POSITIONS = 256
/** The highest position a tsvector stores (MAXENTRYPOS - 1); later ones are clamped to it and merge. */
export const MAX_LEXEME_POSITION = 16_383
/** The longest lexeme a tsvector takes, in UTF-8 bytes: a longer one fails the write ("word is too long"). */
export const MAX_LEXEME_BYTES = 2_046
/** What a stand-in keeps of an over-long term before its hash (bytes, on a character boundary). */
const STAND_IN_PREFIX_BYTES = 1_000

/**
 * The lexeme Postgres stores for an FTS5 term: the term itself, or for a term over 2,046 bytes
 * (FTS5 has no limit: one long unbroken word, a pasted blob) a stand-in, its first 1,000 bytes, a
 * space and its SHA-256. A space never occurs in an FTS5 term (unicode61 splits on it), so a
 * stand-in cannot meet a real term, and the hash keeps two long terms apart. Documents and
 * queries both go through here, so the stand-in finds exactly the documents the term is in.
 */
export function indexLexeme(term: string): string {
  if (Buffer.byteLength(term, 'utf8') <= MAX_LEXEME_BYTES) return term
  let prefix = ''
  let bytes = 0
  for (const character of term) {
    bytes += Buffer.byteLength(character, 'utf8')
    if (bytes > STAND_IN_PREFIX_BYTES) break
    prefix += character
  }
  return `${prefix} ${createHash('sha256').update(term).digest('hex')}`
}

/**
 * FTS5's tokens of a document's columns as a tsvector literal (`'gener':1 'run':2,7`). Positions
 * are FTS5's offsets + 1 (tsvector positions start at 1), written as Postgres keeps them: clamped
 * to 16,383, duplicates merged, the first 256. Where that leaves fewer positions than the term's
 * count (a term over 256 times, or repeated past position 16,383), the exact counts go first, as
 * a line of JSON the trigger stores in `searchCounts` (`{"the":300}` + newline + literal). The
 * length is always exact: it is counted here.
 */
export function searchTokens(columns: readonly string[], tokenizer = fullTextTokenizer()): SearchTokens {
  const positions = new Map<string, number[]>()
  let position = 0
  for (const text of columns) {
    for (const token of tokenizer.documentTerms(text)) {
      position++
      const lexeme = indexLexeme(token)
      const at = positions.get(lexeme)
      if (at) at.push(position)
      else positions.set(lexeme, [position])
    }
  }
  const lexemes: string[] = []
  const counts: Record<string, number> = {}
  let overflow = false
  for (const [lexeme, at] of positions) {
    const kept: number[] = []
    for (const p of at) {
      const stored = Math.min(p, MAX_LEXEME_POSITION)
      if (kept.at(-1) !== stored) kept.push(stored)
      if (kept.length === MAX_LEXEME_POSITIONS) break
    }
    if (kept.length !== at.length) {
      counts[lexeme] = at.length
      overflow = true
    }
    lexemes.push(`${quoteLexeme(lexeme)}:${kept.join(',')}`)
  }
  const literal = lexemes.join(' ')
  return {
    searchTokens: overflow ? `${JSON.stringify(counts)}\n${literal}` : literal,
    searchLength: position,
  }
}

/**
 * The tokens for a write's data, when it sets every indexed column (a create falls back to the
 * defaults); null when it sets none of them, or only some on an update: the trigger then marks
 * the row unindexed and search tokenises it from the stored text before reading.
 */
export function tokensForWrite(
  model: SearchModel,
  data: Record<string, unknown> | undefined,
  creating: boolean,
): SearchTokens | null {
  if (!data) return null
  const columns: string[] = []
  let given = 0
  for (const column of SEARCH_COLUMNS[model]) {
    const value = data[column]
    if (typeof value === 'string') {
      given++
      columns.push(value)
    } else if (creating && value === undefined && COLUMN_DEFAULTS[column] !== undefined) {
      columns.push(COLUMN_DEFAULTS[column] as string)
    } else {
      columns.push('')
      if (!creating || value !== undefined) return null
    }
  }
  if (given === 0) return null
  return searchTokens(columns)
}
