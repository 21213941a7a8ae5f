import { NotFoundError, ValidationError } from '../errors.ts'
import type { MessageToStore, Session, SessionRepository, StoredMessage } from './session-manager.ts'

/**
 * A SessionRepository kept in memory: the reference behaviour the SQLite adapter must match, and
 * what core tests run against (no I/O).
 */
export class InMemorySessionRepository implements SessionRepository {
  readonly sessions = new Map<string, Session>()
  readonly messages: StoredMessage[] = []
  private nextId = 1
  calls = { findSession: 0 }

  async findSession(scope: string, conversationId: string): Promise<Session | null> {
    this.calls.findSession++
    return this.sessions.get(`${scope}/${conversationId}`) ?? null
  }

  async createSession(scope: string, conversationId: string, now: Date): Promise<Session> {
    const key = `${scope}/${conversationId}`
    const existing = this.sessions.get(key)
    if (existing) return existing
    const session: Session = {
      id: `s${this.sessions.size + 1}`,
      scope,
      conversationId,
      messageCount: 0,
      createdAt: now,
      updatedAt: now,
    }
    this.sessions.set(key, session)
    return session
  }

  async appendMessages(session: Session, messages: MessageToStore[]) {
    const stored = messages.map((m) => this.store(session, m))
    const newest = stored.reduce<Date | undefined>(
      (at, m) => (at && at > m.timestamp ? at : m.timestamp),
      undefined,
    )
    return { session: this.bump(session, messages.length, newest), messages: stored }
  }

  async listMessagesBefore(session: Session, olderThanId: string): Promise<StoredMessage[]> {
    const pivot = this.pivot(session, olderThanId)
    return this.ordered(session).filter((m) => !m.isCompressed && before(m, pivot))
  }

  async compressMessagesBefore(session: Session, olderThanId: string, summary: MessageToStore) {
    const older = await this.listMessagesBefore(session, olderThanId)
    for (const m of older) m.isCompressed = true
    const summaryMessage = this.store(session, summary)
    return { session: this.bump(session, 1), compressedCount: older.length, summaryMessage }
  }

  async deleteSession(scope: string, conversationId: string): Promise<boolean> {
    const session = this.sessions.get(`${scope}/${conversationId}`)
    if (!session) return false
    this.sessions.delete(`${scope}/${conversationId}`)
    for (let i = this.messages.length - 1; i >= 0; i--)
      if (this.messages[i]?.sessionId === session.id) this.messages.splice(i, 1)
    return true
  }

  ordered(session: Session): StoredMessage[] {
    return this.messages
      .filter((m) => m.sessionId === session.id)
      .sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime() || Number(a.id) - Number(b.id))
  }

  private pivot(session: Session, id: string): StoredMessage {
    if (!/^\d+$/.test(id))
      throw new ValidationError([{ field: 'olderThanId', message: 'must be a message id' }])
    const pivot = this.messages.find((m) => m.id === id && m.sessionId === session.id)
    if (!pivot) throw new NotFoundError('Message', id)
    return pivot
  }

  private store(session: Session, m: MessageToStore): StoredMessage {
    const stored: StoredMessage = {
      id: String(this.nextId++),
      sessionId: session.id,
      role: m.role,
      speaker: m.speaker,
      content: m.content,
      tokenCount: m.tokenCount,
      isCompressed: m.isCompressed,
      timestamp: m.timestamp,
      metadata: m.metadata,
    }
    this.messages.push(stored)
    return stored
  }

  /** Counts new messages; the session was last active when its newest message was written. */
  private bump(session: Session, count: number, newest?: Date): Session {
    const key = `${session.scope}/${session.conversationId}`
    const current = this.sessions.get(key) ?? session
    const updatedAt = newest && newest > current.updatedAt ? newest : current.updatedAt
    const updated = { ...current, messageCount: current.messageCount + count, updatedAt }
    this.sessions.set(key, updated)
    return updated
  }
}

function before(m: StoredMessage, pivot: StoredMessage): boolean {
  const dt = m.timestamp.getTime() - pivot.timestamp.getTime()
  return dt < 0 || (dt === 0 && Number(m.id) < Number(pivot.id))
}
