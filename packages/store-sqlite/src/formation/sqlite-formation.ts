import type { StoredMessage } from '@engram/core'
import type {
  ConversationToExtract,
  FormationRepository,
  MessageJobProducer,
  TurnRecorder,
} from '@engram/engine'
import type { Database } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import { toMessage } from '../mappers.ts'
import type { PrismaSessionRepository } from '../sessions/prisma-session-repository.ts'

/**
 * Memory formation's storage on SQLite: the watermark is a column of the conversation's Session
 * row (it goes with the row when the conversation or its agent is deleted), and its jobs ride on
 * the session repository's transaction.
 */
export class SqliteFormation implements FormationRepository {
  constructor(
    private readonly db: Database,
    private readonly sessions: PrismaSessionRepository,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {}

  addMessageJobs(producer: MessageJobProducer): void {
    this.sessions.addMessageJobs(producer)
  }

  addTurnRecorder(recorder: TurnRecorder): void {
    this.sessions.addTurnRecorder(recorder)
  }

  async conversation(agentId: string, conversationId: string): Promise<ConversationToExtract | null> {
    const row = await this.db.session.findUnique({
      where: { agentId_conversationId: { agentId, conversationId } },
      select: { id: true, conversationId: true, extractedThroughId: true },
    })
    return row ? toConversation(row) : null
  }

  async pendingConversations(agentId: string): Promise<ConversationToExtract[]> {
    // The (sessionId, id) reach of the Message index answers "any message past the watermark".
    const rows = await this.db.$queryRawUnsafe<
      { id: string; conversationId: string; extractedThroughId: number | bigint | null }[]
    >(
      `SELECT s."id", s."conversationId", s."extractedThroughId" FROM "Session" s
        WHERE s."agentId" = ? AND EXISTS (
          SELECT 1 FROM "Message" m WHERE m."sessionId" = s."id" AND m."id" > COALESCE(s."extractedThroughId", 0))
        ORDER BY s."createdAt", ${this.dialect.sessionOrder('s')}`,
      agentId,
    )
    return rows.map(toConversation)
  }

  async messagesAfter(
    agentId: string,
    sessionId: string,
    afterId: number | null,
    limit: number,
  ): Promise<StoredMessage[]> {
    const rows = await this.db.message.findMany({
      where: { agentId, sessionId, ...(afterId !== null ? { id: { gt: afterId } } : {}) },
      orderBy: { id: 'asc' },
      take: limit,
    })
    return rows.map(toMessage)
  }

  async advance(agentId: string, sessionId: string, messageId: number): Promise<void> {
    await this.db.$executeRawUnsafe(
      `UPDATE "Session" SET "extractedThroughId" = ? WHERE "id" = ? AND "agentId" = ?
        AND ("extractedThroughId" IS NULL OR "extractedThroughId" < ?)`,
      messageId,
      sessionId,
      agentId,
      messageId,
    )
  }
}

function toConversation(row: {
  id: string
  conversationId: string
  extractedThroughId: number | bigint | null
}): ConversationToExtract {
  return {
    sessionId: row.id,
    conversationId: row.conversationId,
    extractedThroughId: row.extractedThroughId === null ? null : Number(row.extractedThroughId),
  }
}
