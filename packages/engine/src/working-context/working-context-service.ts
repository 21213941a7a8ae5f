import { randomUUID } from 'node:crypto'
import {
  appendWorkingMessages,
  type Clock,
  ConflictError,
  emptyWorkingContext,
  type FlushBatch,
  flushDue,
  type Limits,
  type NewToolResult,
  type NewWorkingMessage,
  newestWorkingItems,
  putBackAfterFailedFlush,
  recordWorkingToolResult,
  type SessionRepository,
  type StoredMessage,
  setWorkingScratchpad,
  stampWorkingContext,
  type TakenForFlush,
  type TokenCounter,
  takeForFlush,
  ValidationError,
  type WorkingContextItem,
  type WorkingContextRules,
  type WorkingContextState,
  workingContextBytes,
} from '@engram/core'
import { LRUCache } from 'lru-cache'
import type { EpisodicLayer } from '../episodic/episodic-layer.ts'
import type { ConversationHistory } from '../ports/conversation-history.ts'
import type { Telemetry } from '../ports/telemetry.ts'
import type { WorkingContextStore } from '../ports/working-context.ts'

/** Why a flush ran: past the threshold after an append, or asked for. */
export type FlushReason = 'threshold' | 'request'

/** What a flush moved into the stored conversations. */
export interface WorkingContextFlush {
  reason: FlushReason
  /** Messages stored, tool results included (as TOOL messages). */
  messages: number
  toolResults: number
  tokens: number
  conversationIds: string[]
}

/** Where recentMemory read an item: spec 002's L1, its Redis L2, or the database. */
export type RecentSource = 'WORKING_CONTEXT' | 'L2' | 'DATABASE'

/** An item of recentMemory: the working context's shape, wherever it was read, and where. */
export type RecentItem = Omit<WorkingContextItem, 'at'> & { source: RecentSource; at: Date }

export interface WorkingContextServiceDeps {
  rules: WorkingContextRules
  limits: Limits
  clock: Clock
  tokenCounter: TokenCounter
  telemetry: Telemetry
  /** Shared by the replicas (Redis) when configured; the LRU alone otherwise. */
  store: WorkingContextStore | null
  /** Stores one conversation's batch through the stored conversation's path (addMessages). */
  storeBatch(agentId: string, batch: FlushBatch): Promise<void>
  /** What recentMemory reads past the working context. */
  history: ConversationHistory
  sessions: Pick<SessionRepository, 'findSession'>
  episodic: EpisodicLayer | null
}

// Past this many refused writes in a row (other replicas writing the same agent's context at
// once), the caller is told to try again rather than spinning.
const MAX_WRITE_ATTEMPTS = 16

/**
 * Spec 002's WorkingMemoryManager: each agent's working context in an LRU (max agents, max bytes
 * by a size calculation, TTL from the last write, on the injected clock), shared through the
 * WorkingContextStore when replicas run, flushed into the stored conversation past the threshold.
 */
export class WorkingContextService {
  readonly rules: WorkingContextRules
  private readonly cache: LRUCache<string, WorkingContextState>
  /** The last change queued per agent (see mutate). */
  private readonly writing = new Map<string, Promise<void>>()

  constructor(private readonly deps: WorkingContextServiceDeps) {
    this.rules = deps.rules
    const { clock } = deps
    this.cache = new LRUCache<string, WorkingContextState>({
      max: deps.rules.maxAgents,
      maxSize: deps.rules.maxBytes,
      // The size check of core runs before the write's stamp (time, expiry, version) is added: a
      // little room for it, or the LRU would silently refuse a context at the limit.
      maxEntrySize: Math.min(deps.rules.maxBytes, deps.rules.maxContextBytes + 1_024),
      sizeCalculation: (state) => Math.max(1, workingContextBytes(state)),
      ttl: deps.rules.ttlMs,
      // Time is the engine's clock (tests move it); 0: read it on every check, never a cached now.
      perf: { now: () => clock.now().getTime() },
      ttlResolution: 0,
      updateAgeOnGet: false,
    })
  }

  /** The agent's working context (an empty one when none is held). */
  async get(agentId: string): Promise<WorkingContextState> {
    return this.load(agentId)
  }

  /**
   * Appends messages; past the flush threshold the context then flushes into the stored
   * conversation (returned with the context it left).
   */
  async append(
    agentId: string,
    messages: readonly NewWorkingMessage[],
    conversationId?: string | null,
  ): Promise<{ context: WorkingContextState; flush: WorkingContextFlush | null }> {
    const { rules, tokenCounter, limits } = { ...this.deps, rules: this.rules }
    const target = conversationId ?? rules.defaultConversationId
    const context = await this.mutate(agentId, (state) =>
      appendWorkingMessages(state, messages, target, this.deps.clock.now(), tokenCounter, rules, limits),
    )
    if (!flushDue(context, rules)) return { context, flush: null }
    const flushed = await this.flush(agentId, 'threshold')
    return { context: flushed.context, flush: flushed.flush }
  }

  async setScratchpad(agentId: string, scratchpad: string): Promise<WorkingContextState> {
    return this.mutate(agentId, (state) =>
      setWorkingScratchpad(state, scratchpad, this.deps.tokenCounter, this.rules),
    )
  }

  /** Records a tool result; past the flush threshold the context flushes as after an append. */
  async recordToolResult(
    agentId: string,
    result: NewToolResult,
  ): Promise<{ context: WorkingContextState; flush: WorkingContextFlush | null }> {
    const context = await this.mutate(agentId, (state) =>
      recordWorkingToolResult(
        state,
        result,
        this.deps.clock.now(),
        this.deps.tokenCounter,
        this.rules,
        this.rules.defaultConversationId,
      ),
    )
    if (!flushDue(context, this.rules)) return { context, flush: null }
    return this.flush(agentId, 'threshold')
  }

  /**
   * Moves the messages and tool results into their stored conversations (the scratchpad stays).
   * They leave the context first, so two replicas flushing at once store each message once; if
   * storing fails they are put back and the error is raised.
   */
  async flush(
    agentId: string,
    reason: FlushReason,
  ): Promise<{ context: WorkingContextState; flush: WorkingContextFlush | null }> {
    let taken: TakenForFlush | null = null
    const context = await this.mutate(agentId, (state) => {
      const out = takeForFlush(state)
      taken = out.taken.batches.length > 0 ? out.taken : null
      return taken ? out.rest : null
    })
    const moved = taken as TakenForFlush | null
    if (!moved) return { context, flush: null }
    try {
      for (const batch of moved.batches) await this.deps.storeBatch(agentId, batch)
    } catch (error) {
      await this.mutate(agentId, (state) => putBackAfterFailedFlush(state, moved))
      throw error
    }
    this.deps.telemetry.workingContextFlushed(reason, moved.tokens)
    return {
      context,
      flush: {
        reason,
        messages: moved.messages.length + moved.toolResults.length,
        toolResults: moved.toolResults.length,
        tokens: moved.tokens,
        conversationIds: moved.batches.map((b) => b.conversationId),
      },
    }
  }

  /** Empties the agent's working context, scratchpad included, without storing anything. */
  async clear(agentId: string): Promise<WorkingContextState> {
    this.cache.delete(agentId)
    await this.deps.store?.remove(agentId)
    return emptyWorkingContext(agentId)
  }

  /**
   * Spec 002's strategy 1: the newest items from the working context first, then the conversation's
   * newest stored messages from the Redis L2 when configured, else the database; each says where
   * it came from, and none appears twice. Without a conversation, the agent's most recently
   * active conversations are read (the newest `limit` messages can only be in the `limit` most
   * recently active ones) and merged.
   */
  async recent(
    agentId: string,
    conversationId: string | null | undefined,
    limit: number,
  ): Promise<RecentItem[]> {
    const max = this.rules.maxRecentLimit
    if (!Number.isInteger(limit) || limit < 1 || limit > max)
      throw new ValidationError([
        { field: 'limit', message: `must be an integer from 1 to ${max}`, limit: max },
      ])
    const state = await this.load(agentId)
    const items: RecentItem[] = newestWorkingItems(state, conversationId, limit).map((item) => ({
      ...item,
      source: 'WORKING_CONTEXT',
      at: new Date(item.at),
    }))
    const remaining = limit - items.length
    if (remaining <= 0) return items
    const stored: RecentItem[] = []
    if (conversationId != null) {
      stored.push(...(await this.storedRecent(agentId, conversationId, remaining)))
    } else {
      const sessions = await this.deps.history.sessions(agentId, { offset: 0, limit: remaining })
      for (const session of sessions)
        stored.push(...(await this.storedRecent(agentId, session.conversationId, remaining)))
      stored.sort((a, b) => b.at.getTime() - a.at.getTime() || compareIds(b.id, a.id))
    }
    const seen = new Set(items.map((i) => i.id))
    for (const item of stored) {
      if (items.length >= limit) break
      if (seen.has(item.id)) continue
      seen.add(item.id)
      items.push(item)
    }
    return items
  }

  /** The agent's context leaves this process (and the shared store): deleted, cleared or replaced. */
  async forgetAgent(agentId: string | null): Promise<void> {
    if (agentId === null) this.cache.clear()
    else this.cache.delete(agentId)
    await this.deps.store?.forgetAgent(agentId)
  }

  /** Drops this process's copy only (another replica changed the agent). */
  dropCached(agentId?: string): void {
    if (agentId === undefined) this.cache.clear()
    else this.cache.delete(agentId)
  }

  /** Contexts of the agent held in this process (0 or 1; the deletion report). */
  held(agentId: string): number {
    return this.cache.has(agentId) ? 1 : 0
  }

  /** Keys of the agent in the shared store; null without one or when it cannot be asked. */
  async sharedKeys(agentId: string): Promise<number | null> {
    return this.deps.store ? this.deps.store.keysOf(agentId) : null
  }

  /** What the LRU holds: contexts and bytes by its size calculation. */
  stats(): { agents: number; bytes: number } {
    return { agents: this.cache.size, bytes: this.cache.calculatedSize }
  }

  private async storedRecent(agentId: string, conversationId: string, limit: number): Promise<RecentItem[]> {
    const { episodic, telemetry } = this.deps
    let read: { source: 'L2' | 'DATABASE'; messages: StoredMessage[] } | null
    if (episodic) {
      read = await episodic.recentMessages(agentId, conversationId, limit, (hit) =>
        telemetry.cacheLookup('episodic', hit),
      )
    } else {
      const session = await this.deps.sessions.findSession(agentId, conversationId)
      read = session
        ? {
            source: 'DATABASE',
            messages: await this.deps.history.messages(session.id, false, {
              range: {},
              direction: 'desc',
              take: limit,
            }),
          }
        : null
    }
    if (!read) return []
    const source = read.source
    return read.messages.map((m) => ({
      id: m.id,
      source,
      conversationId,
      role: m.role,
      content: m.content,
      name: m.speaker,
      toolCallId: typeof m.metadata?.toolCallId === 'string' ? m.metadata.toolCallId : null,
      tokenCount: m.tokenCount,
      at: m.timestamp,
    }))
  }

  /** The current context: this process's copy when it is current, the shared store's otherwise. */
  private async load(agentId: string): Promise<WorkingContextState> {
    const cached = this.cache.get(agentId)
    const { store, telemetry } = this.deps
    if (!store) {
      telemetry.cacheLookup('working_context', cached !== undefined)
      return cached ?? emptyWorkingContext(agentId)
    }
    const read = await store.read(agentId, cached?.version ?? null)
    telemetry.cacheLookup('working_context', read === 'unchanged')
    if (read === 'unchanged' && cached) return cached
    if (read === null || read === 'unchanged') {
      this.cache.delete(agentId)
      return emptyWorkingContext(agentId)
    }
    this.hold(read)
    return read
  }

  /**
   * Applies a change to the current context and writes it with a new version; with a shared store
   * the write names the version it changed, and a refused one is re-applied to what is there now.
   * A change returning null changes nothing.
   */
  private mutate(
    agentId: string,
    change: (state: WorkingContextState) => WorkingContextState | null,
  ): Promise<WorkingContextState> {
    // One change of an agent's context at a time in this process: version checks then only race
    // other replicas, so a burst of calls here never exhausts the attempts.
    const previous = this.writing.get(agentId) ?? Promise.resolve()
    const run = previous.then(
      () => this.tryMutate(agentId, change),
      () => this.tryMutate(agentId, change),
    )
    const settled = run.then(
      () => undefined,
      () => undefined,
    )
    this.writing.set(agentId, settled)
    void settled.then(() => {
      if (this.writing.get(agentId) === settled) this.writing.delete(agentId)
    })
    return run
  }

  private async tryMutate(
    agentId: string,
    change: (state: WorkingContextState) => WorkingContextState | null,
  ): Promise<WorkingContextState> {
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const current = await this.load(agentId)
      const changed = change(current)
      if (changed === null) return current
      const now = this.deps.clock.now()
      const next = stampWorkingContext(changed, now, this.rules.ttlMs, randomUUID())
      const { store } = this.deps
      if (!store) {
        // Another call of this process may have written since this one loaded (a load awaits):
        // the same version check as the shared store's, with nothing awaited between it and the set.
        if ((this.cache.get(agentId)?.version ?? null) !== current.version) continue
        this.hold(next)
        return next
      }
      if (await store.write(agentId, current.version, next, this.rules.ttlMs)) {
        this.hold(next)
        return next
      }
    }
    throw new ConflictError(
      `the working context of ${agentId} is being changed by other writers: try again`,
      'agentId',
    )
  }

  private hold(state: WorkingContextState): void {
    this.cache.set(state.agentId, state)
  }
}

/** Stored ids are row numbers (SQLite, Postgres) or uuids (in memory): numeric order when both are numbers. */
function compareIds(a: string, b: string): number {
  const x = Number(a)
  const y = Number(b)
  if (Number.isFinite(x) && Number.isFinite(y)) return x - y
  return a < b ? -1 : a > b ? 1 : 0
}
