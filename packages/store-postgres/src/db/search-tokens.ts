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

/**
 * FTS5's tokens of a document's columns as a tsvector literal (`'gener':1 'run':2,7`). Positions
 * are FTS5's offsets + 1 (tsvector positions start at 1); Postgres keeps at most 256 positions of
 * a lexeme and positions up to 16,383, so a term's count is exact below that (the length is
 * always exact: it is counted here).
 */
export function searchTokens(columns: readonly string[], tokenizer = fullTextTokenizer()): SearchTokens {
  const positions = new Map<string, number[]>()
  let position = 0
  for (const text of columns) {
    for (const term of tokenizer.documentTerms(text)) {
      position++
      const at = positions.get(term)
      if (at) at.push(position)
      else positions.set(term, [position])
    }
  }
  const lexemes: string[] = []
  for (const [term, at] of positions) {
    lexemes.push(
      `${quoteLexeme(term)}:${at
        .slice(0, 256)
        .map((p) => Math.min(p, 16_383))
        .join(',')}`,
    )
  }
  return { searchTokens: lexemes.join(' '), searchLength: position }
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
