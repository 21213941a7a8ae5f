import {
  ftsMatchExpression,
  type Limits,
  NotFoundError,
  type StoredMessage,
  ValidationError,
} from '@engram/core'
import type { Database } from '../db/client.ts'
import { toMessage } from './mappers.ts'

export interface MessageHit {
  message: StoredMessage
  conversationId: string
  score: number
  components: { bm25: number }
}

export const MAX_QUERY_CHARS = 2_000

/**
 * Search over an agent's conversation messages, turn by turn (spec 003's chunks). Lexical scoring
 * is SQLite FTS5's bm25() over the "MessageSearch" index (porter stemming); the score is its
 * negation, so higher is better.
 */
export class SearchService {
  constructor(
    private readonly db: Database,
    private readonly limits: Limits,
  ) {}

  async messages(
    scope: string,
    query: string,
    options: { limit: number; conversationId?: string | null },
  ): Promise<MessageHit[]> {
    if (query.trim().length === 0 || query.length > MAX_QUERY_CHARS) {
      throw new ValidationError([
        { field: 'query', message: `must be 1 to ${MAX_QUERY_CHARS} characters`, limit: MAX_QUERY_CHARS },
      ])
    }
    if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > this.limits.maxSearchLimit) {
      throw new ValidationError([
        {
          field: 'limit',
          message: `must be an integer from 1 to ${this.limits.maxSearchLimit}`,
          limit: this.limits.maxSearchLimit,
        },
      ])
    }
    const match = ftsMatchExpression(query)
    if (!match) return []
    let sessionId: string | null = null
    if (options.conversationId) {
      const session = await this.db.session.findUnique({
        where: { agentId_conversationId: { agentId: scope, conversationId: options.conversationId } },
      })
      if (!session) throw new NotFoundError('Session', options.conversationId)
      sessionId = session.id
    }
    const ranked = await this.db.$queryRawUnsafe<{ id: number; rank: number }[]>(
      `SELECT m."id" AS id, bm25("MessageSearch") AS rank
         FROM "MessageSearch" JOIN "Message" m ON m."id" = "MessageSearch"."rowid"
        WHERE "MessageSearch" MATCH ? AND m."agentId" = ?${sessionId ? ' AND m."sessionId" = ?' : ''}
        ORDER BY rank LIMIT ?`,
      ...[match, scope, ...(sessionId ? [sessionId] : []), options.limit],
    )
    if (ranked.length === 0) return []
    const rows = await this.db.message.findMany({
      where: { id: { in: ranked.map((r) => Number(r.id)) } },
      include: { session: { select: { conversationId: true } } },
    })
    const byId = new Map(rows.map((row) => [row.id, row]))
    return ranked.flatMap((r) => {
      const row = byId.get(Number(r.id))
      if (!row) return []
      const bm25 = -Number(r.rank)
      return [
        {
          message: toMessage(row),
          conversationId: row.session.conversationId,
          score: bm25,
          components: { bm25 },
        },
      ]
    })
  }
}
