import {
  type Clock,
  CONTEXT_SUMMARY_PREFIX,
  type LlmProvider,
  type MessageToStore,
  parseWith,
  type Session,
  type StoredMessage,
  SUMMARY_STRATEGIES,
  type SummarySettings,
  SummarySettingsSchema,
  type SummaryStrategy,
  type SummaryTurn,
  summaryDue,
  summaryExpiresAt,
  type TokenCounter,
  ValidationError,
} from '@engram/core'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { EpisodicLayer } from '../episodic/episodic-layer.ts'
import { type FormationWorkTracker, untracked } from '../formation/formation-stats.ts'
import { type JobWorker, yieldToRequests } from '../jobs/job-worker.ts'
import type { ScheduledJobs } from '../jobs/scheduled-jobs.ts'
import type { AgentLanguageModels } from '../llm/with-model.ts'
import type { ConversationHistory } from '../ports/conversation-history.ts'
import { inProcessSummarizer, type OfflineSummarizer } from '../ports/extractor.ts'
import type { Job, JobQueue, NewJob } from '../ports/job-queue.ts'
import type { Logger } from '../ports/logger.ts'
import type { MemoryItemRepository, StoredMemorySettings } from '../ports/memory-items.ts'
import type {
  RemovedSummary,
  StoredSummary,
  StoredSummaryTrigger,
  SummaryRepository,
  TurnRecorder,
  TurnToRecord,
} from '../ports/summaries.ts'
import { type WrittenSummary, writeSummary } from './summary-writer.ts'

/** Summarises a conversation when its summary is due (debounce, switch, threshold). */
export const SUMMARY_JOB = 'summarize'
/** Removes an agent's summaries older than its retention, then schedules itself for the next expiry. */
export const SUMMARY_RETENTION_JOB = 'summary-retention'

/** How long stored turns reuse an agent's settings before reading them again (ms, engine clock). */
export const SETTINGS_CACHE_MS = 5_000
/** Agents whose settings are kept at most. */
const SETTINGS_CACHE_MAX = 10_000

/** Summaries a list returns at most. */
export const MAX_SUMMARY_LIST = 100

/** The conversations' sessions as the summary service needs them (core's PersistentSessionManager). */
export interface SummarySessions {
  find(scope: string, conversationId: string): Promise<Session | null>
}

export interface SummaryServiceDeps {
  repository: SummaryRepository
  history: ConversationHistory
  /** Spec 002's L2 layer, read before the history when replicas share one (Redis). */
  episodic?: Pick<EpisodicLayer, 'uncompressedMessages'> | null
  sessions: SummarySessions
  queue: JobQueue
  /** Where the agent's summary settings are kept (beside its memory settings). */
  settingsStore: Pick<MemoryItemRepository, 'settings' | 'saveSettings'>
  clock: Clock
  tokenCounter: TokenCounter
  log: Logger
  /** The model summaries are written by; null: the extractive summariser. */
  llm: LlmProvider | null
  /** The model an agent's work calls (its extractor and core model settings); `llm` for every agent when not given. */
  models?: AgentLanguageModels
  /** Context caches follow the agent's write version: a new summary must show. */
  writes?: AgentWrites
  /** Counts each summary written in the processing statistics (none when not given). */
  activity?: FormationWorkTracker
  /** Where summaries without a model are written (a server's worker-thread pool); in process when none is given. */
  offline?: OfflineSummarizer
  /**
   * The summaries' vectors (the embedding service): a stored summary queues its embed job, a
   * removed one's vector, cache entry and job go. None: summaries are searched by their words only.
   */
  vectors?: SummaryVectors
  /** What this process knows of pending debounce jobs: a burst of turns writes the job about once per granularity. */
  scheduled?: ScheduledJobs
}

/** What summaries need of the embedding service. */
export interface SummaryVectors {
  enqueue(agentId: string, kind: 'summary', ownerIds: readonly number[]): Promise<void>
  discard(agentId: string, kind: 'summary', owners: readonly { id: string; text: string }[]): Promise<void>
}

/** A conversation's summaries read at most when it is deleted, to remove their vectors first. */
const CONVERSATION_SUMMARIES_MAX = 10_000

/** A turn's cursor write, planned before its messages are stored. */
interface TurnPlan {
  /** Null: formation is off for the agent, nothing is recorded. */
  turn: TurnToRecord | null
  /** The store wrote it in the messages' transaction (its turn recorder took it). */
  inAppend: boolean
  /** After the write committed: the debounce job it queued is known pending. */
  committed: () => void
}

function tokensOf(messages: readonly { tokenCount: number }[]): number {
  return messages.reduce((sum, message) => sum + message.tokenCount, 0)
}

interface SummaryPayload {
  conversationId: string
  trigger?: StoredSummaryTrigger
}

/**
 * Automatic conversation summaries (issue 13 §3, spec 002). Every stored turn records the
 * conversation's activity on its cursor and queues the conversation's summary job for after the
 * debounce; the job asks core's `summaryDue` and, when the turn was not the last (the debounce
 * moved on), queues itself for the new due time. A turn in another conversation of the same agent
 * (a switch) or a conversation past the token threshold queues the summary at once. Summaries are
 * rows of their own (never messages of the conversation), kept `summaryRetentionDays` from when
 * Engram stored them and then removed by the retention job.
 */
export class SummaryService {
  /** Turns being stored, by the array given to the store: their cursor write, planned before the append. */
  private readonly plans = new WeakMap<readonly MessageToStore[], TurnPlan>()
  private readonly settingsCache = new Map<string, { at: number; stored: StoredMemorySettings }>()
  private readonly offline: OfflineSummarizer

  constructor(private readonly deps: SummaryServiceDeps) {
    this.offline = deps.offline ?? inProcessSummarizer(deps.tokenCounter)
  }

  // --- settings -------------------------------------------------------------------------------

  async settings(agentId: string): Promise<SummarySettings> {
    return resolveSettings(await this.deps.settingsStore.settings(agentId))
  }

  /**
   * The agent's stored settings record with these changes merged into its summary part, validated
   * whole (a bad value throws, naming `summaries.<field>`). Writes nothing: see settingsSaved.
   */
  mergeSettings(
    stored: StoredMemorySettings,
    changes: Partial<SummarySettings>,
  ): { stored: StoredMemorySettings; settings: SummarySettings } {
    const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value != null))
    const next = parseWith(SummarySettingsSchema, { ...(stored.summaries ?? {}), ...defined }, 'summaries')
    return { stored: { ...stored, summaries: onlyChanged(next) }, settings: next }
  }

  /** Forgets the agent's kept settings (every agent's when null): another replica changed them. */
  forgetSettings(agentId: string | null): void {
    if (agentId === null) this.settingsCache.clear()
    else this.settingsCache.delete(agentId)
  }

  /** After the settings record was written with new summary settings: they apply at once. */
  async settingsSaved(agentId: string): Promise<void> {
    this.settingsCache.delete(agentId)
    // A shorter retention applies at once, and the next cleanup is scheduled by the new one.
    await this.removeExpired(agentId)
  }

  /** Merges changes into the agent's summary settings, validated whole: a bad value changes nothing. */
  async updateSettings(agentId: string, changes: Partial<SummarySettings>): Promise<SummarySettings> {
    const merged = this.mergeSettings(await this.deps.settingsStore.settings(agentId), changes)
    await this.deps.settingsStore.saveSettings(agentId, merged.stored)
    await this.settingsSaved(agentId)
    return merged.settings
  }

  // --- scheduling -----------------------------------------------------------------------------

  /**
   * Before turns are stored in a conversation: what their cursor write will be (the settings
   * read now), kept for the store's turn recorder to write in the messages' transaction.
   */
  async turnsStoring(session: Session, messages: readonly MessageToStore[]): Promise<void> {
    if (messages.length === 0) return
    this.plans.set(
      messages,
      await this.planTurn(session.scope, session.conversationId, session.id, tokensOf(messages)),
    )
  }

  /**
   * The store's turn recorder (called inside the messages' transaction, again if it is retried):
   * the planned cursor write, or null when nothing was planned for these messages.
   */
  readonly recordInAppend: TurnRecorder = (_session, messages) => {
    const plan = this.plans.get(messages)
    if (!plan?.turn) return null
    plan.inAppend = true
    return plan.turn
  }

  /**
   * After turns were stored in a conversation: its cursor moves to now (the engine's clock, not
   * the turns' own timestamps), its summary job is queued for after the debounce, and a switch
   * from another conversation or the token threshold queue a summary at once. Written with the
   * messages when the store recorded the plan in their transaction, else here, on its own.
   */
  async turnsStored(
    agentId: string,
    conversationId: string,
    messages: readonly StoredMessage[],
    appended?: readonly MessageToStore[],
  ): Promise<void> {
    if (messages.length === 0) return
    const planned = appended ? this.plans.get(appended) : undefined
    if (appended) this.plans.delete(appended)
    const plan =
      planned ??
      (await this.planTurn(
        agentId,
        conversationId,
        (messages[0] as StoredMessage).sessionId,
        tokensOf(messages),
      ))
    if (!plan.turn) return
    if (!plan.inAppend) {
      const { at, tokens, jobsFor } = plan.turn
      await this.deps.repository.recordTurn(agentId, conversationId, at, tokens, jobsFor)
    }
    plan.committed()
  }

  /** A turn's cursor write and the jobs it calls for, decided from the agent's settings now. */
  private async planTurn(
    agentId: string,
    conversationId: string,
    sessionId: string,
    tokens: number,
  ): Promise<TurnPlan> {
    const stored = await this.storedSettings(agentId)
    // The agent's master switch of automatic formation (FormationService's `enabled`): off, nothing is summarised.
    if (stored.formation?.enabled === false) return { turn: null, inAppend: false, committed: () => {} }
    const settings = resolveSettings(stored)
    const now = this.deps.clock.now()
    const dueAt = new Date(now.getTime() + settings.summaryDebounceSeconds * 1_000)
    const [debounceKey] = summaryJobKeys(conversationId)
    // The pending debounce job already runs late enough: no queue write (runDue moves it if early).
    const debounce = this.deps.scheduled?.covers(agentId, sessionId, debounceKey, dueAt)
      ? []
      : [summaryJob(agentId, conversationId, 'debounce', dueAt)]
    return {
      // The cursor and the jobs it calls for are written together.
      turn: {
        at: now,
        tokens,
        jobsFor: ({ cursor, previous }) => {
          const jobs: NewJob[] = [...debounce]
          // The agent moved on from a conversation with turns not yet summarised: summarise it now.
          if (previous && (previous.pendingTokens > 0 || pendingSince(previous)))
            jobs.push(summaryJob(agentId, previous.conversationId, 'switch', now))
          if (cursor.pendingTokens >= settings.summarizationThresholdTokens)
            jobs.push(summaryJob(agentId, conversationId, 'threshold', now))
          return jobs
        },
      },
      inAppend: false,
      committed: () => {
        if (debounce.length > 0) this.deps.scheduled?.committed(agentId, sessionId, debounceKey, dueAt)
      },
    }
  }

  /**
   * The agent's stored settings, kept SETTINGS_CACHE_MS on the engine's clock: every stored turn
   * reads them, and a change made through another service (formation's switch, memory settings)
   * reaches the scheduling within that time; this service's own changes at once.
   */
  private async storedSettings(agentId: string): Promise<StoredMemorySettings> {
    const now = this.deps.clock.now().getTime()
    const kept = this.settingsCache.get(agentId)
    if (kept && now - kept.at < SETTINGS_CACHE_MS) return kept.stored
    const stored = await this.deps.settingsStore.settings(agentId)
    if (this.settingsCache.size >= SETTINGS_CACHE_MAX) {
      const oldest = this.settingsCache.keys().next().value
      if (oldest !== undefined) this.settingsCache.delete(oldest)
    }
    this.settingsCache.set(agentId, { at: now, stored })
    return stored
  }

  /**
   * Runs a batch of summary jobs, one conversation at a time (two jobs of one conversation run
   * once); returns the jobs that failed with their reason (retried by the worker), the others done.
   */
  async runJobs(jobs: readonly Job[]): Promise<Map<number, string>> {
    const done = new Set<string>()
    const failed = new Map<number, string>()
    for (const job of jobs) {
      const { conversationId, trigger } = job.payload as Partial<SummaryPayload>
      // A payload that names no conversation has nothing to do: done, not retried.
      if (typeof conversationId !== 'string') continue
      const key = JSON.stringify([job.agentId, conversationId])
      if (done.has(key)) continue
      // Requests waiting go first between two summaries, as between two extractor calls.
      if (done.size > 0) await yieldToRequests()
      done.add(key)
      try {
        await this.runDue(job.agentId, conversationId, trigger ?? 'debounce')
      } catch (error) {
        failed.set(job.id, error instanceof Error ? error.message : String(error))
      }
    }
    return failed
  }

  /** Summarises the conversation if its summary is due now; otherwise queues the job for when it will be. */
  private async runDue(
    agentId: string,
    conversationId: string,
    trigger: StoredSummaryTrigger,
  ): Promise<void> {
    const cursor = await this.deps.repository.cursor(agentId, conversationId)
    // No cursor: the conversation (or its agent) was deleted since the job was queued.
    if (!cursor) return
    const settings = await this.settings(agentId)
    const session = await this.deps.sessions.find(agentId, conversationId)
    if (!session) {
      // The conversation went without its cursor (a crash between the two): the cursor follows it.
      await this.deps.repository.deleteConversation(agentId, conversationId)
      return
    }
    const pending = await this.unsummarised(agentId, conversationId, cursor.summarisedThroughId)
    if (!pending) return
    const now = this.deps.clock.now()
    const decision = summaryDue(
      {
        lastTurnAt: cursor.lastTurnAt,
        // The turns not yet summarised were just read: pending whatever the two times say (a
        // turn stored in the same millisecond as the last summary is still pending).
        lastSummaryAt: null,
        unsummarisedTokens: pending.messages.reduce((sum, m) => sum + m.tokenCount, 0),
        switchedAway: trigger === 'switch',
      },
      now,
      settings,
    )
    if (!decision.due) {
      // A later turn moved the debounce on (a job queued before postponing existed, or a turn
      // recorded while this one ran): this job comes back when that one is due.
      if (decision.dueAt && decision.dueAt.getTime() > now.getTime())
        await this.deps.queue.enqueue([summaryJob(agentId, conversationId, 'debounce', decision.dueAt)])
      return
    }
    await this.store(
      agentId,
      conversationId,
      pending.messages,
      settings,
      settings.strategy,
      decision.trigger ?? trigger,
    )
  }

  // --- the door's use cases -------------------------------------------------------------------

  /**
   * Summarises a conversation's turns not yet in a summary now, whatever the schedule says (a
   * door's request, syncMemory). The strategy is the call's, else the agent's setting. Null when
   * every turn is already summarised.
   */
  async summarize(
    agentId: string,
    conversationId: string,
    strategy?: SummaryStrategy | null,
  ): Promise<StoredSummary | null> {
    if (strategy != null && !(SUMMARY_STRATEGIES as readonly string[]).includes(strategy))
      throw new ValidationError([
        {
          field: 'strategy',
          message: `must be one of ${SUMMARY_STRATEGIES.join(', ')}`,
          limit: SUMMARY_STRATEGIES.length,
        },
      ])
    const cursor = await this.deps.repository.cursor(agentId, conversationId)
    const pending = await this.unsummarised(agentId, conversationId, cursor?.summarisedThroughId ?? null)
    if (!pending) return null
    const settings = await this.settings(agentId)
    if (!cursor) await this.deps.repository.recordTurn(agentId, conversationId, this.deps.clock.now(), 0)
    return this.store(
      agentId,
      conversationId,
      pending.messages,
      settings,
      strategy ?? settings.strategy,
      'request',
    )
  }

  /**
   * A summary of any turns (memories that overflowed a built context), written exactly as a stored
   * summary is (the agent's strategy and model, or the offline summary on the worker pool) but
   * stored nowhere: it belongs to the one prompt it was written for.
   */
  async write(agentId: string, turns: readonly SummaryTurn[], maxTokens: number): Promise<WrittenSummary> {
    const strategy = (await this.settings(agentId)).strategy
    return writeSummary(turns, {
      strategy,
      maxTokens,
      countTokens: (text) => this.deps.tokenCounter.count(text),
      llm: this.deps.models ? await this.deps.models.languageModel(agentId) : this.deps.llm,
      offline: (parts) =>
        this.offline.summarize(parts, { strategy, maxTokens, tokenizer: this.deps.tokenCounter.name }),
    })
  }

  /** Every conversation of the agent whose summary is due now or pending at all (syncMemory): summarised now. */
  async summarizePending(agentId: string): Promise<StoredSummary[]> {
    const formed: StoredSummary[] = []
    for (const conversationId of await this.deps.repository.conversationsWithPendingTurns(agentId)) {
      if (formed.length > 0) await yieldToRequests()
      const summary = await this.summarize(agentId, conversationId)
      if (summary) formed.push(summary)
    }
    return formed
  }

  /** The agent's summaries, newest first (of one conversation when named). */
  list(
    agentId: string,
    options: { conversationId?: string | null; since?: Date | null; limit?: number } = {},
  ) {
    const limit = options.limit ?? 20
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SUMMARY_LIST)
      throw new ValidationError([
        {
          field: 'limit',
          message: `must be an integer from 1 to ${MAX_SUMMARY_LIST}`,
          limit: MAX_SUMMARY_LIST,
        },
      ])
    return this.deps.repository.list(agentId, {
      conversationId: options.conversationId ?? null,
      since: options.since ?? null,
      limit,
    })
  }

  find(agentId: string, id: string): Promise<StoredSummary | null> {
    return this.deps.repository.find(agentId, id)
  }

  /**
   * Before a conversation is deleted: its summaries' vectors go (a store's cascade may remove the
   * summaries with the conversation, after which their ids and texts are no longer there to read).
   */
  async conversationDeleting(agentId: string, conversationId: string): Promise<void> {
    if (!this.deps.vectors) return
    const summaries = await this.deps.repository.list(agentId, {
      conversationId,
      since: null,
      limit: CONVERSATION_SUMMARIES_MAX,
    })
    await this.discardVectors(
      agentId,
      summaries.map((summary) => ({ id: summary.id, content: summary.content })),
    )
  }

  /** A deleted conversation's summaries, cursor and queued summary jobs. */
  async conversationDeleted(agentId: string, conversationId: string): Promise<void> {
    this.deps.scheduled?.forget(agentId, summaryJobKeys(conversationId))
    await this.deps.queue.cancel(agentId, summaryJobKeys(conversationId))
    const removed = await this.deps.repository.deleteConversation(agentId, conversationId)
    await this.discardVectors(agentId, removed)
    if (removed.length > 0) this.deps.writes?.touch(agentId)
  }

  // --- retention ------------------------------------------------------------------------------

  /**
   * Removes the agent's summaries stored more than `summaryRetentionDays` ago (from when Engram
   * stored them) and queues the next run for when the oldest remaining one expires.
   */
  async removeExpired(agentId: string): Promise<number> {
    const settings = await this.settings(agentId)
    const now = this.deps.clock.now()
    const cutoff = new Date(now.getTime() - settings.summaryRetentionDays * 86_400_000)
    const removed = await this.deps.repository.deleteStoredBefore(agentId, cutoff)
    await this.discardVectors(agentId, removed)
    if (removed.length > 0) this.deps.writes?.touch(agentId)
    const oldest = await this.deps.repository.oldestStoredAt(agentId)
    if (oldest) await this.deps.queue.enqueue([retentionJob(agentId, summaryExpiresAt(oldest, settings))])
    return removed.length
  }

  /** Removed summaries' vectors leave the vector store, the index in memory, the cache and the queue. */
  private async discardVectors(agentId: string, removed: readonly RemovedSummary[]): Promise<void> {
    if (removed.length === 0 || !this.deps.vectors) return
    await this.deps.vectors.discard(
      agentId,
      'summary',
      removed.map((summary) => ({ id: summary.id, text: summary.content })),
    )
  }

  // --- internals ------------------------------------------------------------------------------

  private async unsummarised(agentId: string, conversationId: string, throughId: string | null) {
    const session = await this.deps.sessions.find(agentId, conversationId)
    if (!session) return null
    const all = this.deps.episodic
      ? await this.deps.episodic.uncompressedMessages(session)
      : await this.deps.history.uncompressedMessages(session.id)
    const messages = throughId === null ? all : all.filter((message) => after(message.id, throughId))
    return messages.length > 0 ? { session, messages } : null
  }

  /** Writes and stores one summary: a unit of the processing statistics. */
  private store(
    agentId: string,
    conversationId: string,
    messages: readonly StoredMessage[],
    settings: SummarySettings,
    strategy: SummaryStrategy,
    trigger: StoredSummaryTrigger,
  ): Promise<StoredSummary> {
    return (this.deps.activity ?? untracked).track(agentId, 'summary', () =>
      this.storeNow(agentId, conversationId, messages, settings, strategy, trigger),
    )
  }

  private async storeNow(
    agentId: string,
    conversationId: string,
    messages: readonly StoredMessage[],
    settings: SummarySettings,
    strategy: SummaryStrategy,
    trigger: StoredSummaryTrigger,
  ): Promise<StoredSummary> {
    const countTokens = (text: string) => this.deps.tokenCounter.count(text)
    const turns = messages.map((message) => ({
      speaker: message.speaker ?? message.role,
      // A compressMessages summary inside the range is read as what it summarises.
      content: message.content.startsWith(CONTEXT_SUMMARY_PREFIX)
        ? message.content.slice(CONTEXT_SUMMARY_PREFIX.length).trim()
        : message.content,
    }))
    const maxTokens = settings.summaryMaxTokens
    const written = await writeSummary(turns, {
      strategy,
      maxTokens,
      countTokens,
      llm: this.deps.models ? await this.deps.models.languageModel(agentId) : this.deps.llm,
      offline: (parts) =>
        this.offline.summarize(parts, { strategy, maxTokens, tokenizer: this.deps.tokenCounter.name }),
    })
    const first = messages[0] as StoredMessage
    const last = messages[messages.length - 1] as StoredMessage
    const now = this.deps.clock.now()
    const stored = await this.deps.repository.insert({
      agentId,
      conversationId,
      // An empty summary (nothing but greetings) is still a summary: the turns are covered.
      content:
        written.text ||
        turns
          .map((turn) => `${turn.speaker}: ${turn.content}`)
          .join('\n')
          .slice(0, 2_000),
      strategy,
      writer: written.writer,
      trigger,
      firstMessageId: first.id,
      lastMessageId: last.id,
      messageCount: messages.length,
      tokenCount: countTokens(written.text),
      createdAt: now,
    })
    this.deps.writes?.touch(agentId)
    await this.deps.queue.enqueue([retentionJob(agentId, summaryExpiresAt(now, settings))])
    // Embedded off the request path like a memory: the embed job is the worker's (a search with a
    // local embedder fills it first).
    await this.deps.vectors?.enqueue(agentId, 'summary', [Number(stored.id)])
    return stored
  }
}

/** Registers the summary and retention job kinds on the worker. */
export function registerSummaryJobs(worker: JobWorker, summaries: SummaryService): void {
  worker.register(
    SUMMARY_JOB,
    async (jobs) => ({ failed: await summaries.runJobs(jobs) }),
    // A summary may call a model: few at a time, retried like any model call.
    { batchSize: 8, maxAttempts: 5, backoffBaseMs: 30_000, backoffMaxMs: 30 * 60_000 },
  )
  worker.register(
    SUMMARY_RETENTION_JOB,
    async (jobs) => {
      for (const agentId of new Set(jobs.map((job) => job.agentId))) await summaries.removeExpired(agentId)
      return undefined
    },
    { batchSize: 32 },
  )
}

/**
 * A conversation's summary job. The debounce is postponed by each turn (its run-at moves to the
 * new turn's debounce, never earlier) and has its own key: while it waits, a switch or the
 * threshold still run at once.
 */
function summaryJob(
  agentId: string,
  conversationId: string,
  trigger: StoredSummaryTrigger,
  runAfter: Date,
): NewJob {
  const [debounceKey, nowKey] = summaryJobKeys(conversationId)
  const payload = { conversationId, trigger }
  return trigger === 'debounce'
    ? { kind: SUMMARY_JOB, agentId, key: debounceKey, payload, runAfter, postpone: true }
    : { kind: SUMMARY_JOB, agentId, key: nowKey, payload, runAfter }
}

function summaryJobKeys(conversationId: string): [debounce: string, now: string] {
  // `summarize…`, never `summary:<id>`: that is a summary's embed job key (a conversation named "12"
  // must not share a key, and so a lease and a dedupe, with summary 12's embedding).
  return [`summarize:${conversationId}`, `summarize-now:${conversationId}`]
}

/**
 * The cleanup for summaries expiring at `runAfter`. Keyed by the hour: one job per agent and hour
 * of expiry, so a shorter retention set later gets its own, earlier job instead of waiting behind
 * the one already queued; each run schedules the next for the oldest summary left.
 */
function retentionJob(agentId: string, runAfter: Date): NewJob {
  const hour = runAfter.toISOString().slice(0, 13)
  return { kind: SUMMARY_RETENTION_JOB, agentId, key: `summary-retention:${hour}`, payload: {}, runAfter }
}

function pendingSince(cursor: { lastTurnAt: Date; lastSummaryAt: Date | null }): boolean {
  return cursor.lastSummaryAt === null || cursor.lastSummaryAt.getTime() < cursor.lastTurnAt.getTime()
}

/** Message ids are the store's row ids: numbers compare as numbers, anything else as text. */
function after(id: string, throughId: string): boolean {
  const [a, b] = [Number(id), Number(throughId)]
  if (Number.isSafeInteger(a) && Number.isSafeInteger(b)) return a > b
  return id > throughId
}

/** Unreadable stored settings (an older version's) fall back to the defaults, like memory settings. */
function resolveSettings(stored: StoredMemorySettings): SummarySettings {
  const parsed = SummarySettingsSchema.safeParse(stored.summaries ?? {})
  return parsed.success ? parsed.data : SummarySettingsSchema.parse({})
}

function onlyChanged(settings: SummarySettings): Record<string, unknown> {
  const defaults = SummarySettingsSchema.parse({}) as Record<string, unknown>
  return Object.fromEntries(Object.entries(settings).filter(([key, value]) => defaults[key] !== value))
}
