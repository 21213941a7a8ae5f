import { randomUUID } from 'node:crypto'
import {
  type MessageToStore,
  NotFoundError,
  type Session,
  type SessionRepository,
  type StoredMessage,
  ValidationError,
} from '@engram/core'
import type { Database, Transaction } from '../db/client.ts'
import { parseRowId, toMessage, toSession } from './mappers.ts'

/**
 * The session manager's storage in SQLite. Every message also becomes a short-term memory entry
 * (spec data flow, steps 2-4), written in the same transaction.
 */
export class PrismaSessionRepository implements SessionRepository {
  constructor(private readonly db: Database) {}

  async findSession(scope: string, conversationId: string): Promise<Session | null> {
    const row = await this.db.session.findUnique({
      where: { agentId_conversationId: { agentId: scope, conversationId } },
    })
    return row ? toSession(row) : null
  }

  async createSession(scope: string, conversationId: string, now: Date): Promise<Session> {
    const row = await this.db.session.upsert({
      where: { agentId_conversationId: { agentId: scope, conversationId } },
      create: { id: randomUUID(), agentId: scope, conversationId, createdAt: now },
      update: {},
    })
    return toSession(row)
  }

  async appendMessages(session: Session, messages: MessageToStore[]) {
    return this.db.$transaction(async (tx) => {
      // Two multi-row inserts, not two per message. SQLite does not promise RETURNING order;
      // autoincrement ids do follow insertion order, so sorting by id restores it.
      const inserted = await tx.message.createManyAndReturn({
        data: messages.map((message) => ({
          sessionId: session.id,
          agentId: session.scope,
          role: message.role,
          content: message.content,
          tokenCount: message.tokenCount,
          isCompressed: message.isCompressed,
          metadata: JSON.stringify(message.metadata),
          timestamp: message.timestamp,
        })),
      })
      const rows = inserted.sort((a, b) => a.id - b.id)
      await tx.memoryEntry.createMany({
        data: rows.map((row, i) => ({
          agentId: session.scope,
          sessionId: session.id,
          messageId: row.id,
          type: 'short_term',
          role: row.role,
          content: row.content,
          tokenCount: row.tokenCount,
          relevance: (messages[i] as MessageToStore).initialRelevance,
          metadata: row.metadata,
          timestamp: row.timestamp,
        })),
      })
      const updated = await tx.session.update({
        where: { id: session.id },
        data: { messageCount: { increment: messages.length } },
      })
      return { session: toSession(updated), messages: rows.map(toMessage) }
    })
  }

  async listMessagesBefore(session: Session, olderThanId: string): Promise<StoredMessage[]> {
    const pivot = await this.pivot(this.db, session, olderThanId)
    const rows = await this.db.message.findMany({
      where: { sessionId: session.id, isCompressed: false, ...olderThan(pivot) },
      orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
    })
    return rows.map(toMessage)
  }

  async compressMessagesBefore(session: Session, olderThanId: string, summary: MessageToStore) {
    return this.db.$transaction(async (tx) => {
      const pivot = await this.pivot(tx, session, olderThanId)
      const { count } = await tx.message.updateMany({
        where: { sessionId: session.id, isCompressed: false, ...olderThan(pivot) },
        data: { isCompressed: true },
      })
      const row = await tx.message.create({
        data: {
          sessionId: session.id,
          agentId: session.scope,
          role: summary.role,
          content: summary.content,
          tokenCount: summary.tokenCount,
          metadata: JSON.stringify(summary.metadata),
          timestamp: summary.timestamp,
        },
      })
      const updated = await tx.session.update({
        where: { id: session.id },
        data: { messageCount: { increment: 1 } },
      })
      return { session: toSession(updated), compressedCount: count, summaryMessage: toMessage(row) }
    })
  }

  async deleteSession(scope: string, conversationId: string): Promise<boolean> {
    const { count } = await this.db.session.deleteMany({ where: { agentId: scope, conversationId } })
    return count > 0
  }

  private async pivot(db: Database | Transaction, session: Session, olderThanId: string) {
    const id = parseRowId(olderThanId)
    if (id == null)
      throw new ValidationError([
        { field: 'olderThanId', message: 'must be a message id (a positive integer)' },
      ])
    const row = await db.message.findFirst({ where: { id, sessionId: session.id } })
    if (!row) throw new NotFoundError('Message', olderThanId)
    return row
  }
}

/** Messages sort by (timestamp, id): imported histories carry their own times. */
function olderThan(pivot: { id: number; timestamp: Date }) {
  return {
    OR: [{ timestamp: { lt: pivot.timestamp } }, { timestamp: pivot.timestamp, id: { lt: pivot.id } }],
  }
}
