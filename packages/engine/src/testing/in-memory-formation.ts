import type { InMemorySessionRepository, StoredMessage } from '@engram/core'
import type { ConversationToExtract, FormationRepository, MessageJobProducer } from '../ports/formation.ts'
import type { JobQueue } from '../ports/job-queue.ts'

/**
 * Memory formation's storage in memory (test-only), over core's in-memory session repository:
 * watermarks per session id (a deleted session's is dropped with it, as SQLite's column goes with
 * its row), and jobs queued right after the messages are stored (one process, no crash to survive).
 */
export class InMemoryFormation implements FormationRepository {
  private readonly producers: MessageJobProducer[] = []
  private readonly watermarks = new Map<string, number>()

  constructor(
    private readonly sessions: InMemorySessionRepository,
    private readonly jobs: JobQueue,
  ) {
    const append = sessions.appendMessages.bind(sessions)
    sessions.appendMessages = async (session, messages) => {
      const result = await append(session, messages)
      await this.queueFor(
        result.session,
        result.messages.map((m) => Number(m.id)),
      )
      return result
    }
    const deleteSession = sessions.deleteSession.bind(sessions)
    sessions.deleteSession = async (scope, conversationId) => {
      const session = sessions.sessions.get(`${scope}/${conversationId}`)
      const deleted = await deleteSession(scope, conversationId)
      if (deleted && session) this.watermarks.delete(session.id)
      return deleted
    }
  }

  addMessageJobs(producer: MessageJobProducer): void {
    this.producers.push(producer)
  }

  async conversation(agentId: string, conversationId: string): Promise<ConversationToExtract | null> {
    const session = this.sessions.sessions.get(`${agentId}/${conversationId}`)
    return session ? this.toConversation(session.id, session.conversationId) : null
  }

  async pendingConversations(agentId: string): Promise<ConversationToExtract[]> {
    return [...this.sessions.sessions.values()]
      .filter((s) => s.scope === agentId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
      .map((s) => this.toConversation(s.id, s.conversationId))
      .filter((c) =>
        this.sessions.messages.some(
          (m) => m.sessionId === c.sessionId && Number(m.id) > (c.extractedThroughId ?? 0),
        ),
      )
  }

  async messagesAfter(
    agentId: string,
    sessionId: string,
    afterId: number | null,
    limit: number,
  ): Promise<StoredMessage[]> {
    const owned = [...this.sessions.sessions.values()].some((s) => s.id === sessionId && s.scope === agentId)
    if (!owned) return []
    return this.sessions.messages
      .filter((m) => m.sessionId === sessionId && Number(m.id) > (afterId ?? 0))
      .sort((a, b) => Number(a.id) - Number(b.id))
      .slice(0, limit)
      .map((m) => ({ ...m }))
  }

  async advance(agentId: string, sessionId: string, messageId: number): Promise<void> {
    const owned = [...this.sessions.sessions.values()].some((s) => s.id === sessionId && s.scope === agentId)
    if (!owned) return
    this.watermarks.set(sessionId, Math.max(this.watermarks.get(sessionId) ?? 0, messageId))
  }

  /** The agent is gone: so are its watermarks (its sessions went with it). */
  forgetAgent(agentId: string): void {
    for (const session of this.sessions.sessions.values())
      if (session.scope === agentId) this.watermarks.delete(session.id)
  }

  private toConversation(sessionId: string, conversationId: string): ConversationToExtract {
    return { sessionId, conversationId, extractedThroughId: this.watermarks.get(sessionId) ?? null }
  }

  private async queueFor(session: Parameters<MessageJobProducer>[2], ids: number[]): Promise<void> {
    const jobs = this.producers.flatMap((produce) => produce(session.scope, ids, session))
    if (jobs.length > 0) await this.jobs.enqueue(jobs)
  }
}
