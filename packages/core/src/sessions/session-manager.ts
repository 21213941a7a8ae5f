import { scoreRelevance } from '../analyzer/relevance.ts'
import type { TokenCounter } from '../budget/tokenizer.ts'
import { type FieldIssue, NotFoundError, ValidationError } from '../errors.ts'
import {
  CONVERSATION_ID_PATTERN,
  DEFAULT_LIMITS,
  jsonDepth,
  type Limits,
  MAX_SPEAKER_CHARS,
} from '../limits.ts'
import type { Clock, Role } from '../types.ts'
import { ROLES } from '../types.ts'

export const CONTEXT_SUMMARY_PREFIX = '[CONTEXT SUMMARY]'
const SUMMARY_PREFIX_LOWER = CONTEXT_SUMMARY_PREFIX.toLowerCase()

/**
 * Whether a turn's text is a conversation summary (the SUMMARIES set): it starts with the prefix in
 * any letter case, as the stores' set filter reads it (Prisma's LIKE / ILIKE, recall.messages).
 * The lexical index's and the turn timeline's summary flag use it too, so search can tell the sets
 * apart without reading a candidate's row.
 */
export function isSummaryText(text: string): boolean {
  return text.slice(0, SUMMARY_PREFIX_LOWER.length).toLowerCase() === SUMMARY_PREFIX_LOWER
}
// Sessions are looked up on every message; the cache keeps the hot ones without growing forever.
export const DEFAULT_MAX_CACHED_SESSIONS = 1_000

export type Metadata = Record<string, unknown>

export interface Session {
  id: string
  scope: string
  conversationId: string
  messageCount: number
  createdAt: Date
  updatedAt: Date
}

export interface NewMessage {
  role: Role
  /**
   * Who said it. Absent (or null), it is taken from `metadata.speaker`, else `metadata.name`
   * (see speakerOf); the role never stands in for it: several people can share the user role.
   */
  speaker?: string | null
  content: string
  tokenCount?: number | null
  timestamp?: Date | null
  metadata?: Metadata | null
}

/** A message ready to persist: its token count is computed once here and stored with it. */
export interface MessageToStore {
  role: Role
  speaker: string | null
  content: string
  tokenCount: number
  timestamp: Date
  metadata: Metadata
  isCompressed: boolean
  /** The relevance its short-term memory entry starts with. */
  initialRelevance: number
}

export interface StoredMessage {
  id: string
  sessionId: string
  role: Role
  /** The participant who said it, trimmed; null when neither the writer nor its metadata named one. */
  speaker: string | null
  content: string
  tokenCount: number
  isCompressed: boolean
  timestamp: Date
  metadata: Metadata
}

/** What the session manager needs from storage; every method is scoped and atomic. */
export interface SessionRepository {
  findSession(scope: string, conversationId: string): Promise<Session | null>
  /** Idempotent: returns the existing session when one was created concurrently. */
  createSession(scope: string, conversationId: string, now: Date): Promise<Session>
  /** Appends in one transaction, with a short-term memory entry per message, and bumps the counter. */
  appendMessages(
    session: Session,
    messages: MessageToStore[],
  ): Promise<{ session: Session; messages: StoredMessage[] }>
  /** Uncompressed messages strictly older than `olderThanId`, oldest first; NotFoundError if it is not in the session. */
  listMessagesBefore(session: Session, olderThanId: string): Promise<StoredMessage[]>
  /** Marks those messages compressed and inserts the summary, in one transaction. */
  compressMessagesBefore(
    session: Session,
    olderThanId: string,
    summary: MessageToStore,
  ): Promise<{ session: Session; compressedCount: number; summaryMessage: StoredMessage }>
  deleteSession(scope: string, conversationId: string): Promise<boolean>
}

export interface SessionManagerDeps {
  repository: SessionRepository
  clock: Clock
  tokenCounter: TokenCounter
  summarize: (messages: { role: Role; content: string }[]) => string
  limits?: Limits
  maxCachedSessions?: number
}

export interface CompressionResult {
  compressedCount: number
  summaryMessage: StoredMessage | null
}

/**
 * The spec's PersistentSessionManager: get-or-create, add, compress, delete, with an in-memory
 * cache of recent sessions. Validation lives here so that every adapter enforces the same limits.
 */
export class PersistentSessionManager {
  private readonly cache = new Map<string, Session>()
  private readonly limits: Limits
  private readonly maxCached: number

  constructor(private readonly deps: SessionManagerDeps) {
    this.limits = deps.limits ?? DEFAULT_LIMITS
    this.maxCached = deps.maxCachedSessions ?? DEFAULT_MAX_CACHED_SESSIONS
  }

  /** Forgets cached sessions (one agent's, or all) after their rows changed behind the manager. */
  forgetCached(scope?: string): void {
    if (scope === undefined) this.cache.clear()
    else for (const [key, session] of this.cache) if (session.scope === scope) this.cache.delete(key)
  }

  /** Sessions of a scope held in the cache (to verify that a deleted agent left none behind). */
  cachedCount(scope: string): number {
    let count = 0
    for (const session of this.cache.values()) if (session.scope === scope) count++
    return count
  }

  async getOrCreate(scope: string, conversationId: string): Promise<Session> {
    assertConversationId(conversationId)
    const cached = this.cache.get(cacheKey(scope, conversationId))
    if (cached) return this.remember(cached)
    const found =
      (await this.deps.repository.findSession(scope, conversationId)) ??
      (await this.deps.repository.createSession(scope, conversationId, this.deps.clock.now()))
    return this.remember(found)
  }

  /** Cached or stored session, never creating one. */
  async find(scope: string, conversationId: string): Promise<Session | null> {
    assertConversationId(conversationId)
    const cached = this.cache.get(cacheKey(scope, conversationId))
    if (cached) return cached
    const found = await this.deps.repository.findSession(scope, conversationId)
    return found ? this.remember(found) : null
  }

  async addMessage(scope: string, conversationId: string, message: NewMessage): Promise<StoredMessage> {
    const [stored] = await this.addMessages(scope, conversationId, [message], 'message')
    if (!stored) throw new Error('appendMessages returned no message')
    return stored
  }

  /** Validates the whole batch before writing any of it, then appends it atomically. */
  async addMessages(
    scope: string,
    conversationId: string,
    messages: NewMessage[],
    fieldPrefix = 'messages',
  ): Promise<StoredMessage[]> {
    assertConversationId(conversationId)
    if (messages.length === 0) {
      throw new ValidationError([
        { field: fieldPrefix, message: 'at least one message is required', limit: 1 },
      ])
    }
    if (messages.length > this.limits.maxBatchMessages) {
      throw new ValidationError([
        {
          field: fieldPrefix,
          message: `at most ${this.limits.maxBatchMessages} messages per batch (got ${messages.length})`,
          limit: this.limits.maxBatchMessages,
        },
      ])
    }
    const now = this.deps.clock.now()
    // Everything is checked before anything is counted: a rejected batch costs no tokenizing.
    const issues = messages.flatMap((message, index) =>
      validateMessage(
        message,
        fieldPrefix === 'message' ? 'message' : `${fieldPrefix}.${index}`,
        this.limits,
      ),
    )
    if (issues.length > 0) throw new ValidationError(issues)
    const prepared = messages.map((message) => this.prepare(message, now))
    const session = await this.getOrCreate(scope, conversationId)
    const result = await this.deps.repository.appendMessages(session, prepared)
    this.remember(this.newest(result.session))
    return result.messages
  }

  /**
   * Marks every message older than `olderThanId` as compressed and inserts a
   * `[CONTEXT SUMMARY]` system message. Without a summary, one is built from the messages.
   */
  async compressMessages(
    scope: string,
    conversationId: string,
    olderThanId: string,
    summary?: string | null,
  ): Promise<CompressionResult> {
    const session = await this.find(scope, conversationId)
    if (!session) throw new NotFoundError('Session', conversationId)
    if (summary != null && summary.length > this.limits.maxSummaryChars) {
      throw new ValidationError([
        {
          field: 'summary',
          message: `must be at most ${this.limits.maxSummaryChars} characters (got ${summary.length})`,
          limit: this.limits.maxSummaryChars,
        },
      ])
    }
    const older = await this.deps.repository.listMessagesBefore(session, olderThanId)
    if (older.length === 0) return { compressedCount: 0, summaryMessage: null }
    const body = summary?.trim() ? summary.trim() : this.deps.summarize(older)
    const content = `${CONTEXT_SUMMARY_PREFIX}\n${body}`
    const last = older[older.length - 1] as StoredMessage
    const summaryMessage: MessageToStore = {
      role: 'system',
      // A summary speaks for everyone it covers, so for no one participant.
      speaker: null,
      content,
      tokenCount: this.deps.tokenCounter.count(content),
      // Sorted where the compressed messages were, so the context keeps its chronology.
      timestamp: last.timestamp,
      metadata: { summaryOf: older.length, olderThanId },
      isCompressed: false,
      initialRelevance: 1,
    }
    const result = await this.deps.repository.compressMessagesBefore(session, olderThanId, summaryMessage)
    this.remember(result.session)
    return { compressedCount: result.compressedCount, summaryMessage: result.summaryMessage }
  }

  async delete(scope: string, conversationId: string): Promise<boolean> {
    assertConversationId(conversationId)
    this.cache.delete(cacheKey(scope, conversationId))
    return this.deps.repository.deleteSession(scope, conversationId)
  }

  /** Drops cached sessions of a scope, e.g. when its agent is deleted. */
  forgetScope(scope: string): void {
    for (const [key, session] of this.cache) if (session.scope === scope) this.cache.delete(key)
  }

  private prepare(message: NewMessage, now: Date): MessageToStore {
    const timestamp = message.timestamp ?? now
    return {
      role: message.role,
      speaker: speakerOf(message).speaker,
      content: message.content,
      tokenCount: message.tokenCount ?? this.deps.tokenCounter.count(message.content),
      timestamp,
      metadata: message.metadata ?? {},
      isCompressed: false,
      initialRelevance: scoreRelevance({ content: message.content, role: message.role, timestamp }, now),
    }
  }

  /**
   * The session as an append left it, unless a concurrent append of the same conversation already
   * reported a later state: on a server with concurrent writers (Postgres) appends finish in any
   * order, and the count only grows by appends.
   */
  private newest(session: Session): Session {
    const cached = this.cache.get(cacheKey(session.scope, session.conversationId))
    if (!cached || cached.id !== session.id || cached.messageCount <= session.messageCount) return session
    return cached
  }

  private remember(session: Session): Session {
    const key = cacheKey(session.scope, session.conversationId)
    // Re-inserting moves the key to the end, so the Map's first key is the least recently used.
    this.cache.delete(key)
    this.cache.set(key, session)
    if (this.cache.size > this.maxCached) {
      const oldest = this.cache.keys().next().value
      if (oldest !== undefined) this.cache.delete(oldest)
    }
    return session
  }
}

function cacheKey(scope: string, conversationId: string): string {
  return `${scope}\u0000${conversationId}`
}

export function assertConversationId(conversationId: string, field = 'conversationId'): void {
  if (!CONVERSATION_ID_PATTERN.test(conversationId)) {
    throw new ValidationError([
      {
        field,
        message:
          'must be 1 to 128 characters: letters, digits and . _ : @ / - (starting with a letter or digit)',
        limit: 128,
      },
    ])
  }
}

/** Checks one message against the limits; returns every issue so a client can fix them at once. */
export function validateMessage(
  message: NewMessage,
  field: string,
  limits: Limits = DEFAULT_LIMITS,
): FieldIssue[] {
  const issues: FieldIssue[] = []
  if (!(ROLES as readonly string[]).includes(message.role)) {
    issues.push({ field: `${field}.role`, message: `must be one of ${ROLES.join(', ')}` })
  }
  if (typeof message.content !== 'string' || message.content.length === 0) {
    issues.push({ field: `${field}.content`, message: 'must not be empty', limit: 1 })
  } else if (message.content.length > limits.maxContentChars) {
    issues.push({
      field: `${field}.content`,
      message: `must be at most ${limits.maxContentChars} characters (got ${message.content.length})`,
      limit: limits.maxContentChars,
    })
  }
  if (message.tokenCount != null) {
    if (
      !Number.isInteger(message.tokenCount) ||
      message.tokenCount < 0 ||
      message.tokenCount > limits.maxTokenCount
    ) {
      issues.push({
        field: `${field}.tokenCount`,
        message: `must be an integer from 0 to ${limits.maxTokenCount}`,
        limit: limits.maxTokenCount,
      })
    }
  }
  if (message.timestamp != null && Number.isNaN(message.timestamp.getTime())) {
    issues.push({ field: `${field}.timestamp`, message: 'must be a valid ISO 8601 date-time' })
  }
  if (message.metadata != null)
    issues.push(...validateMetadata(message.metadata, `${field}.metadata`, limits))
  const { issue } = speakerOf(message, field)
  if (issue) issues.push(issue)
  return issues
}

/** Where a message's speaker may come from, in order: the field itself, then these metadata keys. */
export const SPEAKER_METADATA_KEYS = ['speaker', 'name'] as const

/**
 * A message's speaker: its own `speaker`, else `metadata.speaker`, else `metadata.name` (chat APIs
 * put the participant's name there), trimmed. An explicit speaker must be 1 to MAX_SPEAKER_CHARS
 * characters. A metadata value past the limit is refused too (cutting a name would make another
 * name), naming the key it came from; a blank or non-string metadata value names no one, so the
 * next key is tried: metadata is the writer's own and did not have to mean a speaker.
 */
export function speakerOf(
  message: Pick<NewMessage, 'speaker' | 'metadata'>,
  field = 'message',
): { speaker: string | null; issue?: FieldIssue } {
  if (message.speaker != null) {
    const speaker = typeof message.speaker === 'string' ? message.speaker.trim() : ''
    if (speaker.length === 0)
      return {
        speaker: null,
        issue: { field: `${field}.speaker`, message: 'must not be blank', limit: 1 },
      }
    return fitting(speaker, `${field}.speaker`)
  }
  const metadata = message.metadata
  if (metadata == null || typeof metadata !== 'object' || Array.isArray(metadata)) return { speaker: null }
  for (const key of SPEAKER_METADATA_KEYS) {
    const value = metadata[key]
    if (typeof value !== 'string') continue
    const speaker = value.trim()
    if (speaker.length > 0) return fitting(speaker, `${field}.metadata.${key}`)
  }
  return { speaker: null }
}

function fitting(speaker: string, field: string): { speaker: string | null; issue?: FieldIssue } {
  if (speaker.length <= MAX_SPEAKER_CHARS) return { speaker }
  return {
    speaker: null,
    issue: {
      field,
      message: `must be at most ${MAX_SPEAKER_CHARS} characters after trimming (got ${speaker.length})`,
      limit: MAX_SPEAKER_CHARS,
    },
  }
}

export function validateMetadata(
  metadata: unknown,
  field: string,
  limits: Limits = DEFAULT_LIMITS,
): FieldIssue[] {
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
    return [{ field, message: 'must be a JSON object' }]
  }
  // Depth first: JSON.stringify of hostile nesting is itself recursive.
  const depth = jsonDepth(metadata, limits.maxMetadataDepth)
  if (depth > limits.maxMetadataDepth) {
    return [
      {
        field,
        message: `must nest at most ${limits.maxMetadataDepth} levels deep (got ${depth} or more)`,
        limit: limits.maxMetadataDepth,
      },
    ]
  }
  const bytes = new TextEncoder().encode(JSON.stringify(metadata)).length
  if (bytes > limits.maxMetadataBytes) {
    return [
      {
        field,
        message: `must be at most ${limits.maxMetadataBytes} bytes of JSON (got ${bytes})`,
        limit: limits.maxMetadataBytes,
      },
    ]
  }
  return []
}
