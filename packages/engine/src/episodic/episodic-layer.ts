import type { Session, SessionRepository, StoredMessage } from '@engram/core'
import type { ContextSources, ContextTurn } from '../ports/context-sources.ts'
import type { ConversationHistory } from '../ports/conversation-history.ts'
import type { EpisodicStore } from '../ports/episodic-store.ts'

/**
 * The engine's side of spec 002's L2 episodic layer: the paths that read a conversation's newest
 * messages (memoryContext's recent turns, the context window) ask the shared store first and
 * read the database when it cannot answer exactly, filling it for the next reader; every write
 * to a conversation's messages keeps it exact (see EpisodicStore for the protocol).
 */
export class EpisodicLayer {
  constructor(
    private readonly store: EpisodicStore,
    private readonly history: ConversationHistory,
    /** The database's sessions (not the session manager's cache, which another replica may have made stale). */
    private readonly sessions: Pick<SessionRepository, 'findSession'>,
  ) {}

  /**
   * The conversation's newest `limit` uncompressed turns, newest first, as the database's
   * ContextSources.recentTurns answers them; null when the agent has no such conversation.
   */
  async recentTurns(agentId: string, conversationId: string, limit: number): Promise<ContextTurn[] | null> {
    const recent = await this.recentMessages(agentId, conversationId, limit)
    return recent ? recent.messages.map(turnOf) : null
  }

  /**
   * The conversation's newest `limit` uncompressed messages, newest first, and where they were
   * read (`L2` when the shared set answered, `DATABASE` otherwise, filling the set); null when the
   * agent has no such conversation. `onLookup` hears whether the set answered (metrics).
   */
  async recentMessages(
    agentId: string,
    conversationId: string,
    limit: number,
    onLookup?: (hit: boolean) => void,
  ): Promise<{ source: 'L2' | 'DATABASE'; messages: StoredMessage[] } | null> {
    const held = await this.store.newest(agentId, conversationId, limit)
    onLookup?.(held !== null)
    if (held) return { source: 'L2', messages: held }
    const session = await this.sessions.findSession(agentId, conversationId)
    if (!session) return null
    const ticket = await this.store.ticket(agentId, conversationId)
    // One read serves the answer and the fill: the newest the set may hold, plus one to learn
    // whether those are all of them.
    const newest = await this.newestFromDatabase(session, Math.max(limit, this.store.maxMessages + 1))
    await this.fill(agentId, conversationId, ticket, newest)
    return { source: 'DATABASE', messages: newest.slice(0, limit) }
  }

  /** The session's uncompressed messages, oldest first (ConversationHistory.uncompressedMessages). */
  async uncompressedMessages(session: Session): Promise<StoredMessage[]> {
    const held = await this.store.whole(session.scope, session.conversationId)
    if (held) return held
    const ticket = await this.store.ticket(session.scope, session.conversationId)
    const all = await this.history.uncompressedMessages(session.id)
    // Only a whole conversation is kept from here: a longer one would be refilled (its newest
    // part) on every context window and still never answer one.
    if (all.length <= this.store.maxMessages)
      await this.fill(session.scope, session.conversationId, ticket, all.slice().reverse())
    return all
  }

  /** Every episodic key of the agent (every agent's when none is named): its rows are gone or replaced. */
  forgetAgent(agentId: string | null): Promise<void> {
    return this.store.forgetAgent(agentId)
  }

  /** Keys naming the agent in the shared store; null when it cannot be asked. */
  keysOf(agentId: string): Promise<number | null> {
    return this.store.keysOf(agentId)
  }

  /** The session repository, keeping the store exact around each write to a conversation's messages. */
  writesThrough(repository: SessionRepository): SessionRepository {
    const store = this.store
    // Announced before, settled after, whether the write committed or not.
    async function around<T>(
      agentId: string,
      conversationId: string,
      write: () => Promise<T>,
      settle: (token: string | null, result: T | undefined) => Promise<void>,
    ): Promise<T> {
      const token = await store.writing(agentId, conversationId)
      let result: T | undefined
      try {
        result = await write()
        return result
      } finally {
        await settle(token, result)
      }
    }
    return {
      findSession: (scope, conversationId) => repository.findSession(scope, conversationId),
      createSession: (scope, conversationId, now) => repository.createSession(scope, conversationId, now),
      appendMessages: (session, messages) =>
        around(
          session.scope,
          session.conversationId,
          () => repository.appendMessages(session, messages),
          (token, result) =>
            store.appended(
              session.scope,
              session.conversationId,
              token,
              // The set holds what a context reads: uncompressed messages only.
              (result?.messages ?? []).filter((message) => !message.isCompressed),
            ),
        ),
      listMessagesBefore: (session, olderThanId) => repository.listMessagesBefore(session, olderThanId),
      // Compression hides messages and adds the summary: the set is dropped, not edited.
      compressMessagesBefore: (session, olderThanId, summary) =>
        around(
          session.scope,
          session.conversationId,
          () => repository.compressMessagesBefore(session, olderThanId, summary),
          (token) => store.changed(session.scope, session.conversationId, token),
        ),
      deleteSession: (scope, conversationId) =>
        around(
          scope,
          conversationId,
          () => repository.deleteSession(scope, conversationId),
          (token) => store.changed(scope, conversationId, token),
        ),
    }
  }

  /** memoryContext's sources with the recent turns read through the layer. */
  contextSources(sources: ContextSources): ContextSources {
    return {
      memories: (agentId, query) => sources.memories(agentId, query),
      summaries: (agentId, options) => sources.summaries(agentId, options),
      recentTurns: (agentId, conversationId, limit) => this.recentTurns(agentId, conversationId, limit),
    }
  }

  private newestFromDatabase(session: Session, take: number): Promise<StoredMessage[]> {
    return this.history.messages(session.id, false, { range: {}, direction: 'desc', take })
  }

  private async fill(
    agentId: string,
    conversationId: string,
    ticket: string | null,
    newestFirst: StoredMessage[],
  ): Promise<void> {
    // An empty answer is not kept: a missing conversation reads as empty too, and must stay null.
    if (ticket === null || newestFirst.length === 0) return
    const { maxMessages } = this.store
    const whole = newestFirst.length <= maxMessages
    await this.store.fill(agentId, conversationId, ticket, newestFirst.slice(0, maxMessages), whole)
  }
}

function turnOf(message: StoredMessage): ContextTurn {
  return { id: message.id, role: message.role, content: message.content }
}
