import { ftsMatchExpression, queryTerms } from '@engram/core'

/** A statement and its parameters, in `?` placeholders. */
export interface Statement {
  sql: string
  params: unknown[]
}

/**
 * The few SQL fragments the shared Prisma repositories write differently per database. Everything
 * else is one statement both accept (`ON CONFLICT DO NOTHING`, quoted aliases, `TRUE`, explicit
 * casts SQLite ignores); only what truly differs lives here: JSON functions, the full-text index
 * (FTS5 tables on SQLite, where CROSS JOIN pins the join order its planner misjudges), row locks.
 * SQLite's fragments are exactly the statements it ran before this hook existed.
 */
export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres'
  /**
   * Appended to the select of jobs a claim takes. SQLite runs the claim under its one write lock,
   * so nothing is needed; on Postgres two replicas' claims run at once and each must pass over
   * the rows the other is taking (`FOR UPDATE SKIP LOCKED`), or both would take them.
   */
  readonly claimLock: string
  /** A field of a JSON object held as text, as text (a payload field counted by value). */
  jsonField(column: string, field: string): string
  /** A JSON object (as text) from field names and SQL expressions giving their values. */
  jsonObject(fields: readonly (readonly [name: string, expression: string])[]): string
  /** A subquery of the integers in one bound JSON array (any number of ids, one statement). */
  integersOf(placeholder: string): string
  /** The size in bytes of a text column's UTF-8 encoding. */
  byteLength(expression: string): string
  /**
   * A column compared on rows another index found (their primary key), never used to find them:
   * SQLite's planner, without statistics for the rows written since the connection opened,
   * takes `"agentId" = ?` as selective and walks the agent's whole index for `"id" IN (...) AND
   * "agentId" = ?` (issue 18: 4.3 ms per search's memory rows at 10K memories, growing with the
   * agent). SQLite's unary `+` takes a term out of index use; Postgres has the statistics.
   */
  checkedOnRows(column: string): string
  /**
   * A tie-break for conversations created at the same instant, in creation order. SQLite has
   * the rowid; Postgres has no insertion order, so the conversation whose first turn came first.
   */
  sessionOrder(alias: string): string
  /**
   * Messages of the agent (`o`) the full-text index finds holding the words as one phrase, with
   * `where` ANDed after the match; null when the words have no terms. A candidate filter: the
   * caller checks the text itself.
   */
  messagesWithPhrase(words: string): { from: string; where: string; param: string } | null
  /** The agent's memory items sharing a word with `text`, best BM25 first, at most `limit`. */
  memoriesSharingWords(agentId: string, text: string, limit: number): Statement | null
  /**
   * The turns beside each candidate turn (`candidates`: the placeholders of their ids) on one side
   * in its own conversation, at most `reach` of them, as rows (origin, id, ts, side): seeks on the
   * (sessionId, timestamp, id) index, not a window over whole conversations.
   */
  turnsBeside(candidates: string, side: 'before' | 'after', reach: number): string
  /**
   * Search's episode spans in one statement whose text is the same for any number of spans: one
   * parameter, a JSON array of `[sessionId, fromTurnId, toTurnId]`, rows (sessionId, id, ts) of
   * each span's first `limit` turns in span order. Null: a compound SELECT of one seek per span
   * (SQLite, which plans it in microseconds; Postgres plans each of its terms on every call).
   */
  turnSpans(limit: number): string | null
  /**
   * A Prisma text filter (`contains`, `startsWith`, `endsWith`, also under `not`) matching as
   * SQLite's does: Prisma writes them there as LIKE, which ignores the case of ASCII letters, so a
   * search for "ALICE" finds "alice". SQLite's is the filter as given (its connector rejects
   * `mode`); Postgres's LIKE minds case, so its filter asks for ILIKE (`mode: 'insensitive'`).
   */
  ignoringCase<F extends object>(filter: F): F
}

/** The comparison and order that walk a conversation's turns away from a turn on one side. */
export function besideOrder(side: 'before' | 'after'): { cmp: '<' | '>'; order: 'DESC' | 'ASC' } {
  return side === 'before' ? { cmp: '<', order: 'DESC' } : { cmp: '>', order: 'ASC' }
}

/** SQLite's statements: FTS5 tables, json1, the rowid. */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  claimLock: '',
  jsonField: (column, field) => `json_extract(${column}, '$.${field}')`,
  jsonObject: (fields) => `json_object(${fields.map(([name, value]) => `'${name}', ${value}`).join(', ')})`,
  integersOf: (placeholder) => `SELECT value FROM json_each(${placeholder})`,
  byteLength: (expression) => `LENGTH(CAST(${expression} AS BLOB))`,
  checkedOnRows: (column) => `+${column}`,
  sessionOrder: (alias) => `${alias}.rowid`,
  ignoringCase: (filter) => filter,
  turnSpans: () => null,
  messagesWithPhrase(words) {
    const terms = queryTerms(words)
    if (terms.length === 0) return null
    return {
      from: `"MessageSearch" CROSS JOIN "Message" o ON o."id" = "MessageSearch"."rowid"`,
      where: `"MessageSearch" MATCH ?`,
      param: `"${terms.join(' ')}"`,
    }
  },
  memoriesSharingWords(agentId, text, limit) {
    const match = ftsMatchExpression(text)
    if (!match) return null
    return {
      sql: `SELECT o."id" AS id FROM "MemorySearch" CROSS JOIN "MemoryItem" o ON o."id" = "MemorySearch"."rowid"
          WHERE "MemorySearch" MATCH ? AND o."agentId" = ? ORDER BY bm25("MemorySearch") LIMIT ?`,
      params: [match, agentId, limit],
    }
  },
  // SQLite has no LATERAL; its planner runs the correlated IN once per candidate, as two seeks.
  turnsBeside(candidates, side, reach) {
    const { cmp, order } = besideOrder(side)
    return `SELECT c."id" AS origin, n."id" AS id, n."timestamp" AS ts, '${side}' AS side
          FROM "Message" c JOIN "Message" n ON n."id" IN (
            SELECT p."id" FROM "Message" p WHERE p."sessionId" = c."sessionId"
              AND (p."timestamp", p."id") ${cmp} (c."timestamp", c."id")
              ORDER BY p."timestamp" ${order}, p."id" ${order} LIMIT ${Math.trunc(reach)})
         WHERE c."id" IN (${candidates})`
  },
}
