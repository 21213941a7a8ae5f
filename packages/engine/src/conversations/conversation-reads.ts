import {
  NotFoundError,
  type PersistentSessionManager,
  planContextWindow,
  type StoredMessage,
  type TokenBudgetConfig,
  TokenBudgetConfigSchema,
  validationErrorFromZod,
} from '@engram/core'
import type { EpisodicLayer } from '../episodic/episodic-layer.ts'
import type { TimeIdPageQuery } from '../paging/cursor.ts'
import type { ParameterStore } from '../parameters/parameter-store.ts'
import type { ConversationHistory } from '../ports/conversation-history.ts'
import type { MessageTokenCounts } from './message-token-counts.ts'

/**
 * What a door reads of conversations: the session list, a session's messages page by page, and the
 * context window (spec 000's token-budgeted view of one conversation, tuned by the agent's learned
 * parameters unless the caller overrides them).
 */
export class ConversationReads {
  constructor(
    private readonly history: ConversationHistory,
    private readonly sessions: PersistentSessionManager,
    private readonly parameters: ParameterStore,
    /** The tokenizer's counts of messages, kept between calls. */
    private readonly messageTokens: MessageTokenCounts,
    /** Spec 002's L2 layer shared by replicas, read before the database when configured. */
    private readonly episodic: EpisodicLayer | null = null,
  ) {}

  /** Every agent's sessions are counted when agentId is null (an admin listing). */
  sessionCount(agentId: string | null): Promise<number> {
    return this.history.countSessions(agentId)
  }

  /** Most recently active first; every agent's when agentId is null. */
  sessionPage(agentId: string | null, page: { offset: number; limit: number }) {
    return this.history.sessions(agentId, page)
  }

  messagePage(
    sessionId: string,
    includeCompressed: boolean,
    query: TimeIdPageQuery,
  ): Promise<StoredMessage[]> {
    return this.history.messages(sessionId, includeCompressed, query)
  }

  /**
   * Plans the context window of a conversation. `overrides` are the caller's budget fields (null or
   * missing ones keep the learned or default value); an invalid budget is a ValidationError naming
   * `budget.<field>`.
   */
  async contextWindow(
    agentId: string,
    conversationId: string,
    overrides: Partial<Record<keyof TokenBudgetConfig, unknown>>,
  ) {
    const session = await this.sessions.find(agentId, conversationId)
    if (!session) throw new NotFoundError('Session', conversationId)
    const learned = await this.parameters.load(agentId)
    const given = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v != null))
    const parsed = TokenBudgetConfigSchema.safeParse({
      fullMessageWindow: learned.fullMessageWindow,
      compressionTriggerRatio: learned.compressionTrigger,
      ...given,
    })
    if (!parsed.success) throw validationErrorFromZod(parsed.error, 'budget')
    const messages = this.episodic
      ? await this.episodic.uncompressedMessages(session)
      : await this.history.uncompressedMessages(session.id)
    const plan = planContextWindow(messages, parsed.data, {
      countTokens: (text) => this.messageTokens.tokenCounter.count(text),
      countMessage: (message) =>
        this.messageTokens.count(agentId, conversationId, message.id, 'content', message.content),
    })
    return { ...plan, budget: parsed.data }
  }
}
