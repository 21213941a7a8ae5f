import type { Database } from '../db/client.ts'

/** The full-text tables search reads, each with the table whose rows it indexes. */
export const FULL_TEXT_TABLES = {
  MessageSearch: 'Message',
  MemorySearch: 'MemoryItem',
  KnowledgeSearch: 'Knowledge',
} as const
export type FullTextTable = keyof typeof FULL_TEXT_TABLES

/** How long a count is trusted: frequencies drift slowly, and only decide which terms select. */
export const TERM_STATISTICS_TTL_MS = 60_000
/** Terms remembered per process at most; beyond it the oldest are forgotten. */
export const MAX_CACHED_TERMS = 20_000

/**
 * Document counts for query planning (planLexicalQuery), cached: counting a common term walks its
 * whole posting list (~1 ms for a term in 36k documents), and the same words come back in query
 * after query. Counts are over all agents, as FTS5's own BM25 statistics are.
 */
export class TermStatistics {
  private readonly terms = new Map<string, { count: number; at: number }>()
  private readonly totals = new Map<FullTextTable, { count: number; at: number }>()

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
    private readonly ttlMs = TERM_STATISTICS_TTL_MS,
  ) {}

  /** Forgets every count: rows were deleted in bulk (an agent, a clear, a restore). */
  clear(): void {
    this.terms.clear()
    this.totals.clear()
  }

  /** Rows the table indexes. */
  async documents(table: FullTextTable): Promise<number> {
    const cached = this.totals.get(table)
    if (cached && this.now() - cached.at < this.ttlMs) return cached.count
    const [row] = await this.db.$queryRawUnsafe<{ n: number | bigint }[]>(
      `SELECT count(*) AS n FROM "${FULL_TEXT_TABLES[table]}"`,
    )
    const count = Number(row?.n ?? 0)
    this.totals.set(table, { count, at: this.now() })
    return count
  }

  /** Documents containing `term` (as FTS5 tokenises it: the stemmed form is what is counted). */
  async frequency(table: FullTextTable, term: string): Promise<number> {
    const key = `${table}\u0000${term}`
    const cached = this.terms.get(key)
    if (cached && this.now() - cached.at < this.ttlMs) return cached.count
    const [row] = await this.db.$queryRawUnsafe<{ n: number | bigint }[]>(
      `SELECT count(*) AS n FROM "${table}" WHERE "${table}" MATCH ?`,
      `"${term.replaceAll('"', '""')}"`,
    )
    const count = Number(row?.n ?? 0)
    // Re-inserted at the end, so the Map's order is oldest first.
    this.terms.delete(key)
    this.terms.set(key, { count, at: this.now() })
    if (this.terms.size > MAX_CACHED_TERMS) this.terms.delete(this.terms.keys().next().value as string)
    return count
  }
}
