import { BM25_B, BM25_K1, queryTerms } from '@engram/core'
import { besideOrder, type SqlDialect } from '@engram/store-sqlite'
import { fullTextTokenizer, indexLexeme, quoteLexeme } from './search-tokens.ts'

// FTS5's floor for a non-positive IDF (as packages/core's bm25Idf, which keeps it private).
const MIN_IDF = 1e-6

/** The query's words as the index holds them: FTS5 stems a MATCH's words, tsquery does not. */
function stemmedTerms(text: string): string[] {
  const tokenizer = fullTextTokenizer()
  return queryTerms(text).flatMap((word) => tokenizer.terms(word))
}

/**
 * The shared repositories' dialect fragments on Postgres: JSON through json/json_build_object,
 * the full-text index as the tables' own tsvector column (full-text/), and claims that pass over
 * the rows another replica's claim is taking.
 */
export const postgresDialect: SqlDialect = {
  name: 'postgres',
  claimLock: 'FOR UPDATE SKIP LOCKED',
  jsonField: (column, field) => `(CAST(${column} AS json) ->> '${field}')`,
  jsonObject: (fields) =>
    `CAST(json_build_object(${fields.map(([name, value]) => `'${name}', ${value}`).join(', ')}) AS text)`,
  integersOf: (placeholder) =>
    `SELECT CAST(json_array_elements_text(CAST(${placeholder} AS json)) AS integer)`,
  byteLength: (expression) => `octet_length(${expression})`,
  checkedOnRows: (column) => column,
  // A pending conversation has turns, and its first turn's id follows the order turns came in.
  // `+ 0`: a bare min(id) is planned as a walk of the primary key from the table's first row,
  // filtered on the conversation, so a conversation begun after every other agent's turns read the
  // whole table; this way it reads its own turns from the (sessionId, timestamp, id) index.
  sessionOrder: (alias) => `(SELECT min(m."id" + 0) FROM "Message" m WHERE m."sessionId" = ${alias}."id")`,
  // ILIKE folds the letters the database's ctype knows: ASCII as SQLite's LIKE does, and under a
  // UTF-8 locale the others too (a search for "ÉTÉ" finds "été" there, not on SQLite).
  ignoringCase: (filter) => ({ ...filter, mode: 'insensitive' }),
  messagesWithPhrase(words) {
    const terms = stemmedTerms(words)
    if (terms.length === 0) return null
    return {
      from: `"Message" o`,
      // Rows written without tokens (raw SQL) have no vector yet: they stay candidates, and the
      // caller's check on the text decides, so nothing is missed before search catches them up.
      where: `(o."searchVector" @@ CAST(? AS tsquery) OR o."searchVector" IS NULL)`,
      param: terms.map(quoteLexeme).join(' <-> '),
    }
  },
  /**
   * FTS5's bm25 over the GIN-found documents: each matching term's count from its positions (or
   * the exact count the tsvector could not keep), the
   * document length from searchLength, N and the mean length over the agent's memories (SQLite's
   * bm25() counts the whole table; per agent is what the engine's own search uses).
   */
  memoriesSharingWords(agentId, text, limit) {
    // As stored: an over-long term's stand-in (search-tokens.ts).
    const terms = [...new Set(stemmedTerms(text).map(indexLexeme))]
    if (terms.length === 0) return null
    return {
      sql: `WITH hits AS (
              SELECT o."id" AS id, o."searchLength" AS len, u.lexeme AS term,
                     coalesce(CAST(o."searchCounts" ->> u.lexeme AS integer), cardinality(u.positions)) AS tf
                FROM "MemoryItem" o CROSS JOIN LATERAL unnest(o."searchVector") u
               WHERE o."agentId" = ? AND o."searchVector" @@ CAST(? AS tsquery) AND u.lexeme = ANY(CAST(? AS text[]))),
            corpus AS (SELECT count(*) AS n, avg("searchLength") AS mean FROM "MemoryItem" WHERE "agentId" = ?),
            frequency AS (SELECT term, count(*) AS df FROM hits GROUP BY term)
          SELECT h.id AS id FROM hits h JOIN frequency f ON f.term = h.term CROSS JOIN corpus c
           GROUP BY h.id
           ORDER BY sum(
               (CASE WHEN ln((c.n - f.df + 0.5) / (f.df + 0.5)) > 0 THEN ln((c.n - f.df + 0.5) / (f.df + 0.5)) ELSE ${MIN_IDF} END)
               * h.tf * ${BM25_K1 + 1} / (h.tf + ${BM25_K1} * (${1 - BM25_B} + ${BM25_B} * h.len / c.mean))) DESC, h.id
           LIMIT ?`,
      params: [agentId, terms.map(quoteLexeme).join(' | '), terms, agentId, limit],
    }
  },
  /**
   * One LIMIT-ed backward or forward seek on the (sessionId, timestamp, id) index per candidate.
   * SQLite's `n.id IN (correlated subquery … LIMIT n)` is no join to Postgres's planner: it runs
   * the subquery for every row of the whole Message table times each candidate (a sequential scan;
   * 2.3 s for 10 candidates over 20,000 turns, against 0.2 ms this way).
   */
  // The compound SELECT of one seek per span took Postgres 8-44 ms to plan on every search (its
  // text changes with the span count, and the client sends no prepared statement) for 2-9 ms of
  // execution: the spans as one JSON parameter and one LATERAL seek plan once, in under a ms.
  turnSpans(limit) {
    return `SELECT n."sessionId" AS "sessionId", n."id" AS id, n."timestamp" AS ts
          FROM json_array_elements(CAST(? AS json)) WITH ORDINALITY AS s(span, at) CROSS JOIN LATERAL (
            SELECT p."sessionId", p."id", p."timestamp" FROM "Message" p
             WHERE p."sessionId" = s.span ->> 0
               AND p."timestamp" >= (SELECT b."timestamp" FROM "Message" b WHERE b."id" = CAST(s.span ->> 1 AS integer))
               AND p."timestamp" <= (SELECT b."timestamp" FROM "Message" b WHERE b."id" = CAST(s.span ->> 2 AS integer))
             ORDER BY p."timestamp" ASC, p."id" ASC LIMIT ${Math.trunc(limit)}) n
         ORDER BY s.at, n."timestamp", n."id"`
  },
  turnsBeside(candidates, side, reach) {
    const { cmp, order } = besideOrder(side)
    return `SELECT c."id" AS origin, n."id" AS id, n."timestamp" AS ts, '${side}' AS side
          FROM "Message" c CROSS JOIN LATERAL (
            SELECT p."id", p."timestamp" FROM "Message" p WHERE p."sessionId" = c."sessionId"
              AND (p."timestamp", p."id") ${cmp} (c."timestamp", c."id")
              ORDER BY p."timestamp" ${order}, p."id" ${order} LIMIT ${Math.trunc(reach)}) n
         WHERE c."id" IN (${candidates})`
  },
}
