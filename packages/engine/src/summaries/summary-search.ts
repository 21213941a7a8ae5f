import { bm25Scores, queryTerms } from '@engram/core'
import type { StoredSummary, SummaryRepository } from '../ports/summaries.ts'

/** Automatic summaries a search reads at most per agent: retention keeps them few (a week's by default). */
export const SUMMARY_SEARCH_SCAN = 2_000

export interface ScoredSummary {
  summary: StoredSummary
  /** BM25 over the agent's automatic summaries (FTS5's formula, core's bm25Scores). */
  bm25: number
  /** Cosine similarity of the summary's vector to the query's (0 without one). */
  vector: number
}

/**
 * The SUMMARIES scope's automatic summaries (issue 13 §3): rows of their own, not in the messages'
 * full-text index, scored here with BM25 over the agent's summaries (those of the conversation and
 * period asked) and, when the query has a vector, by their own vectors' similarity (`similarity`:
 * the agent's summary index, searched by the caller). Like the other scopes, each side proposes
 * its best `limit`: a summary that shares no word with the query is still found by its meaning. A
 * query with no content word and no vector scores every summary 0 (the recency and importance
 * strategies still rank them).
 */
export async function searchAutomaticSummaries(
  repository: Pick<SummaryRepository, 'list'>,
  agentId: string,
  query: string,
  options: {
    conversationId?: string | null
    since?: Date | null
    limit: number
    similarity?: ReadonlyMap<string, number>
  },
): Promise<ScoredSummary[]> {
  const rows = await repository.list(agentId, {
    conversationId: options.conversationId ?? null,
    since: options.since ?? null,
    limit: SUMMARY_SEARCH_SCAN,
  })
  if (rows.length === 0) return []
  const words = new Map(rows.map((row) => [row.id, row.content.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []]))
  const terms = queryTerms(query).map((term) => {
    const frequencies = new Map<string, number>()
    for (const [id, tokens] of words) {
      const count = tokens.filter((token) => token === term).length
      if (count > 0) frequencies.set(id, count)
    }
    return { documentFrequency: frequencies.size, frequencies }
  })
  const lengths = [...words.values()].map((tokens) => tokens.length)
  const scores = bm25Scores(words.keys(), terms, (id) => words.get(id)?.length ?? 0, {
    documents: rows.length,
    averageLength: lengths.reduce((sum, n) => sum + n, 0) / rows.length,
  })
  const scored = rows.map((summary) => ({
    summary,
    bm25: scores.get(summary.id) ?? 0,
    vector: Math.max(0, options.similarity?.get(summary.id) ?? 0),
  }))
  const newer = (a: ScoredSummary, b: ScoredSummary) =>
    b.summary.createdAt.getTime() - a.summary.createdAt.getTime()
  const byWords = [...scored].sort((a, b) => b.bm25 - a.bm25 || newer(a, b)).slice(0, options.limit)
  const byMeaning = scored
    .filter((s) => s.vector > 0)
    .sort((a, b) => b.vector - a.vector || newer(a, b))
    .slice(0, options.limit)
  return [...new Set([...byWords, ...byMeaning])]
}
