import {
  buildExtractionPrompt,
  type CandidateMemory,
  type Clock,
  type ConversationTurn,
  chatForObject,
  classifyTurn,
  contentWords,
  DEFAULT_IMPORTANCE_WEIGHTS,
  EXTRACTION_ANSWER_JSON_SCHEMA,
  EXTRACTION_LIMITS,
  type ExtractedItem,
  ExtractionAnswerSchema,
  interpretRememberThis,
  isExplicitRememberRequest,
  type Limits,
  type LlmProvider,
  type MemoryEntryType,
  type NewJob,
  OfflineExtractorSettingsSchema,
  type PromptTurn,
  parseExtractionAnswer,
  parseWith,
  roughSentences,
  type Session,
  type SpeakerRole,
  type StoredMessage,
  scoreImportance,
  type TurnClassification,
  ValidationError,
} from '@engram/core'
import { z } from 'zod'
import { yieldToRequests } from '../jobs/job-worker.ts'
import { DEFAULT_DEBOUNCE_GRANULARITY_MS, ScheduledJobs } from '../jobs/scheduled-jobs.ts'
import { isCircuitOpen } from '../llm/circuit-open.ts'
import { withModel } from '../llm/with-model.ts'
import type { MemoryItemService } from '../memory-items/memory-item-service.ts'
import { inProcessExtractor, type OfflineExtractor } from '../ports/extractor.ts'
import type { FormationRepository } from '../ports/formation.ts'
import type { JobQueue } from '../ports/job-queue.ts'
import type { Logger } from '../ports/logger.ts'
import type { MemoryItemRepository, MemoryItemView, StoredMemorySettings } from '../ports/memory-items.ts'
import { extractJob, extractJobKey } from './formation-jobs.ts'
import { type FormationWorkTracker, untracked } from './formation-stats.ts'

/** The engine-wide dials of automatic extraction (the door's configuration, not an agent's). */
export const FormationConfigSchema = z.object({
  /**
   * Whether stored turns queue their extraction (off: memories form only on syncMemory). For
   * measuring writes without extraction, and suites about other background work.
   */
  automatic: z.boolean().default(true),
  /**
   * A conversation's extraction runs this long after its last turn: a burst of turns is read in
   * one extractor call, and a chat that is still going is not extracted turn by turn. 5 s keeps
   * memories close behind the conversation; a minute bounds it (syncMemory skips the wait).
   */
  extractionDebounceMs: z.number().int().min(0).max(60_000).default(5_000),
  /** How late a pending debounced job may run before a turn rewrites it (ScheduledJobs; 0: every turn). */
  debounceGranularityMs: z.number().int().min(0).max(60_000).default(DEFAULT_DEBOUNCE_GRANULARITY_MS),
  /** Turns per extractor call: what an LLM prompt holds comfortably (each turn is cut at 4,000 characters). */
  turnsPerCall: z.number().int().min(1).max(200).default(20),
  /**
   * Extractor calls one job makes before it hands the rest of a long backlog (an imported
   * history) to a follow-up job: a job stays well inside its lease, and other conversations get
   * their turn in between.
   */
  callsPerJob: z.number().int().min(1).max(1_000).default(10),
  /**
   * The offline extractor's dials (core's defaults unless given): the memory-formation bench
   * runs the engine with the settings it chose on another conversation (cross-validation).
   */
  offlineExtractor: OfflineExtractorSettingsSchema.default(OfflineExtractorSettingsSchema.parse({})),
})
export type FormationConfig = z.infer<typeof FormationConfigSchema>
export const DEFAULT_FORMATION_CONFIG: FormationConfig = FormationConfigSchema.parse({})

/** The extractors an agent may choose (issue 13 §5): the deterministic one, or the language model. */
export const EXTRACTOR_CHOICES = ['offline', 'llm'] as const
export type ExtractorChoice = (typeof EXTRACTOR_CHOICES)[number]

/** A core model's name as the OpenAI-compatible endpoint takes it. */
export const MAX_MODEL_NAME_CHARS = 200

/**
 * An agent's formation settings as stored with its memory settings (only what differs from the
 * defaults). The extractor is stored only when the agent chose one: left unset it follows the
 * server (the model when one is configured, the offline extractor otherwise).
 */
export const FormationSettingsSchema = z.object({
  /** Off: nothing is queued or extracted for the agent; turns said meanwhile are never extracted. */
  enabled: z.boolean().default(true),
  extraction: z
    .object({
      extractor: z.enum(EXTRACTOR_CHOICES).nullable().default(null),
      /** The model the endpoint is asked for (null: the server's ENGRAM_LLM_MODEL). */
      model: z.string().trim().min(1).max(MAX_MODEL_NAME_CHARS).nullable().default(null),
    })
    .default({ extractor: null, model: null }),
})
type StoredFormationSettings = z.infer<typeof FormationSettingsSchema>

/** An agent's formation settings as they apply: the extractor resolved against the server's model. */
export interface FormationSettings {
  enabled: boolean
  extraction: { extractor: ExtractorChoice; model: string | null }
}

/** Changes to them; a field left out (or null for the extractor) keeps its value. */
export interface FormationSettingsChanges {
  enabled?: boolean | null
  extraction?: { extractor?: ExtractorChoice | null; model?: string | null } | null
}

/** Existing memories an LLM prompt shows for it to correct or supersede, most recently changed first. */
const EXISTING_IN_PROMPT = 30
/** Turns without a named speaker are restated about their role; a role names no person. */
const SPEAKER_ROLES = new Set(['user', 'assistant', 'tool', 'system'])
const MAX_SPEAKER_CHARS = 200
/** A restated item that holds at least this share of an explicit request's words is that request. */
const EXPLICIT_MATCH_SHARE = 0.6

export type Extractor = 'offline' | 'llm' | 'offline-fallback'

/** A candidate, and for an LLM correction the existing memory (one the prompt showed) it replaces. */
type FormedCandidate = CandidateMemory & { supersedes?: string | null }

/** What one extraction (a job, or a sync) formed. */
export interface FormationResult {
  conversations: number
  turns: number
  /** New memories (stored, or superseding an older one). */
  stored: MemoryItemView[]
  /** Candidates the verification pipeline found already known. */
  duplicates: number
  /** Older memories the new ones superseded. */
  superseded: number
  /** Candidates refused (a limit, the privacy policy, a user the turns do not share). */
  rejected: number
  /** Which extractor ran (per call: the last one when several did). */
  extractors: Extractor[]
}

export interface FormationDeps {
  repository: FormationRepository
  queue: JobQueue
  memoryItems: MemoryItemService
  /** Where the agent's formation settings are kept (beside its memory settings). */
  settingsStore: Pick<MemoryItemRepository, 'settings' | 'saveSettings'>
  clock: Clock
  log: Logger
  config: FormationConfig
  /** The language model; without one the offline extractor runs. */
  llm?: LlmProvider | null
  /** Where the offline extractor runs (a worker-thread pool in a server); in process when none is given. */
  offline?: OfflineExtractor
  /** Counts each extractor call in the processing statistics (none when not given). */
  activity?: FormationWorkTracker
}

/**
 * Automatic memory formation (issue 13 §2): every stored turn queues its conversation for
 * extraction (a durable job in the transaction of the messages, debounced per conversation); the
 * job reads the turns past the conversation's watermark, runs the extractor (an LLM when one is
 * configured, the offline extractor otherwise or while its circuit is open) and stores each
 * candidate through the same pipeline as createMemory. Conversation text and model answers are
 * data: a memory is only ever created for the agent and the user of the turns it comes from.
 */
export class FormationService {
  /** Agents known (in this process) to have formation off: their turns queue nothing. */
  private readonly disabled = new Set<string>()
  /** Extractions of one conversation never overlap in this process (a job and a sync). */
  private readonly running = new Map<string, Promise<unknown>>()
  /** The debounced jobs (extraction's and the summaries') this process knows pending, and until when. */
  readonly scheduled: ScheduledJobs

  constructor(private readonly deps: FormationDeps) {
    this.scheduled = new ScheduledJobs(deps.clock, deps.config.debounceGranularityMs)
  }

  get callsPerJob(): number {
    return this.deps.config.callsPerJob
  }

  /**
   * The jobs stored messages queue (the storage's message-job producer): one debounced extract
   * job for their conversation. Pure and synchronous: it runs inside the write's transaction.
   */
  jobsFor(agentId: string, messageIds: readonly number[], session: Session): NewJob[] {
    if (!this.deps.config.automatic || this.disabled.has(agentId)) return []
    const runAfter = new Date(this.deps.clock.now().getTime() + this.deps.config.extractionDebounceMs)
    const key = extractJobKey(session.conversationId)
    // A burst of turns: the pending job already runs late enough, and no queue write is needed.
    if (this.scheduled.covers(agentId, session.id, key, runAfter)) return []
    // Noted once the messages' transaction commits (turnsCommitted).
    if (messageIds[0] !== undefined)
      this.scheduled.writing(String(messageIds[0]), agentId, session.id, key, runAfter)
    return [extractJob(agentId, session.conversationId, runAfter)]
  }

  /** The turns' transaction committed: the extract job jobsFor gave it is pending as written. */
  turnsCommitted(stored: readonly { id: string }[]): void {
    if (stored[0]) this.scheduled.confirm(stored[0].id)
  }

  /**
   * Spec 002's router on one turn, as ingestion sees it (the `classify` operation): tier, category,
   * memory type, initial importance and the reasons. Stores nothing.
   */
  classify(
    turn: { content: string; role?: SpeakerRole },
    limits: Pick<Limits, 'maxContentChars'>,
  ): TurnClassification {
    if (turn.content.trim() === '')
      throw new ValidationError([{ field: 'content', message: 'must not be empty' }])
    if (turn.content.length > limits.maxContentChars)
      throw new ValidationError([
        {
          field: 'content',
          message: `must be at most ${limits.maxContentChars} characters`,
          limit: limits.maxContentChars,
        },
      ])
    const now = this.deps.clock.now()
    return classifyTurn({ content: turn.content, role: turn.role ?? 'user', timestamp: now }, { now })
  }

  // --- settings -------------------------------------------------------------------------------

  async settings(agentId: string): Promise<FormationSettings> {
    const resolved = this.resolve(await this.deps.settingsStore.settings(agentId))
    this.remember(agentId, resolved)
    return resolved
  }

  /**
   * The agent's stored settings record with these changes merged into its formation part,
   * validated whole (fields named under `formation`'s own keys: `extraction.extractor`). Writes
   * nothing: the settings service saves every part in one write, then calls settingsSaved.
   */
  mergeSettings(
    stored: StoredMemorySettings,
    changes: FormationSettingsChanges,
  ): { stored: StoredMemorySettings; settings: FormationSettings } {
    const current = storedFormation(stored)
    const extraction = changes.extraction ?? {}
    if (extraction.extractor === 'llm' && !this.deps.llm)
      throw new ValidationError([
        {
          field: 'extraction.extractor',
          message:
            'is llm, but no language model is configured on this server (ENGRAM_LLM_URL and ENGRAM_LLM_MODEL)',
        },
      ])
    const next = parseWith(FormationSettingsSchema, {
      enabled: changes.enabled ?? current.enabled,
      extraction: {
        extractor: extraction.extractor ?? current.extraction.extractor,
        // Null is a value here (back to the server's model); only a field left out keeps it.
        model: extraction.model !== undefined ? extraction.model : current.extraction.model,
      },
    })
    return {
      stored: { ...stored, formation: onlyChanged(next) },
      settings: this.resolve({ formation: next }),
    }
  }

  /**
   * After the settings record was written: the switch takes effect in this process, and turning
   * formation off drops the agent's pending extractions and moves every watermark past what was
   * said, so nothing said while it is off is ever extracted.
   */
  async settingsSaved(agentId: string, settings: FormationSettings): Promise<void> {
    this.remember(agentId, settings)
    if (!settings.enabled) await this.skipPending(agentId)
  }

  /** Merges changes into the agent's formation settings, validated whole, and saves them. */
  async updateSettings(agentId: string, changes: FormationSettingsChanges): Promise<FormationSettings> {
    const { stored, settings } = this.mergeSettings(await this.deps.settingsStore.settings(agentId), changes)
    await this.deps.settingsStore.saveSettings(agentId, stored)
    await this.settingsSaved(agentId, settings)
    return settings
  }

  /**
   * The language model the agent's formation work (extraction, its summaries and profile) calls:
   * none when the agent chose the offline extractor or the server has no model, else the server's
   * adapter asking for the agent's model when it named one.
   */
  async languageModel(agentId: string): Promise<LlmProvider | null> {
    const llm = this.deps.llm
    if (!llm) return null
    const { extraction } = await this.settings(agentId)
    if (extraction.extractor === 'offline') return null
    return extraction.model && extraction.model !== llm.model ? withModel(llm, extraction.model) : llm
  }

  /** Stored settings as they apply; unreadable ones (an older version's) fall back to the defaults. */
  private resolve(stored: StoredMemorySettings): FormationSettings {
    const { enabled, extraction } = storedFormation(stored)
    // Without a model on the server an agent's choice of llm cannot run: the offline one does.
    const extractor = this.deps.llm ? (extraction.extractor ?? 'llm') : 'offline'
    return { enabled, extraction: { extractor, model: extraction.model } }
  }

  // --- running --------------------------------------------------------------------------------

  /**
   * Runs everything pending for the agent now, ignoring the debounce (spec 003's "Sync Now"), and
   * returns what was formed. Pending jobs of these conversations find nothing left when they run.
   */
  async syncMemory(agentId: string): Promise<FormationResult> {
    const total = emptyResult()
    for (const conversation of await this.deps.repository.pendingConversations(agentId))
      addResult(total, await this.extractConversation(agentId, conversation.conversationId))
    return total
  }

  /**
   * Extracts one conversation's turns past its watermark, all of them, or at most `maxCalls`
   * extractor calls' worth (an extract job) with a follow-up job queued for the rest.
   */
  extractConversation(
    agentId: string,
    conversationId: string,
    maxCalls = Number.POSITIVE_INFINITY,
  ): Promise<FormationResult> {
    const key = `${agentId}\u0000${conversationId}`
    const previous = this.running.get(key) ?? Promise.resolve()
    const run = previous.catch(() => {}).then(() => this.extractNow(agentId, conversationId, maxCalls))
    this.running.set(key, run)
    const clear = () => {
      if (this.running.get(key) === run) this.running.delete(key)
    }
    run.then(clear, clear)
    return run
  }

  /** The conversation was deleted: its queued extraction goes too (the watermark went with the session). */
  async forgetConversation(agentId: string, conversationId: string): Promise<void> {
    this.scheduled.forget(agentId, [extractJobKey(conversationId)])
    await this.deps.queue.cancel(agentId, [extractJobKey(conversationId)])
  }

  private async extractNow(
    agentId: string,
    conversationId: string,
    maxCalls: number,
  ): Promise<FormationResult> {
    const result = emptyResult()
    const conversation = await this.deps.repository.conversation(agentId, conversationId)
    if (!conversation) return result
    // Off: the turns are passed over (the watermark moves), never extracted.
    const { enabled } = await this.settings(agentId)
    if (enabled) result.conversations = 1
    let after = conversation.extractedThroughId
    for (let calls = 0; ; calls++) {
      // Below request priority: between two extractor calls, requests waiting go first.
      if (calls > 0) await yieldToRequests()
      if (calls >= maxCalls) {
        // Not debounced: the backlog is already there; the key keeps it after this job.
        await this.deps.queue.enqueue([
          { ...extractJob(agentId, conversationId, this.deps.clock.now()), postpone: false },
        ])
        break
      }
      const turns = await this.deps.repository.messagesAfter(
        agentId,
        conversation.sessionId,
        after,
        this.deps.config.turnsPerCall,
      )
      const last = turns.at(-1)
      if (!last) break
      if (enabled) {
        result.turns += turns.length
        // One unit of the statistics: an extractor call and the storing of what it found.
        await (this.deps.activity ?? untracked).track(agentId, 'extraction', async () => {
          const { candidates, extractor } = await this.extract(agentId, turns)
          result.extractors.push(extractor)
          await this.store(agentId, conversationId, turns, candidates, result)
        })
      }
      // After the memories: a crash in between extracts these turns again, and verification
      // finds what was already stored a duplicate.
      after = Number(last.id)
      await this.deps.repository.advance(agentId, conversation.sessionId, after)
      if (turns.length < this.deps.config.turnsPerCall) break
    }
    return result
  }

  private async extract(
    agentId: string,
    messages: readonly StoredMessage[],
  ): Promise<{ candidates: FormedCandidate[]; extractor: Extractor }> {
    const now = this.deps.clock.now()
    const turns = messages.map(toTurn)
    const offline = this.deps.offline ?? inProcessExtractor
    const offlineOptions = { now, settings: this.deps.config.offlineExtractor }
    const llm = await this.languageModel(agentId)
    if (llm) {
      try {
        return { candidates: await this.extractWithLlm(llm, agentId, turns), extractor: 'llm' }
      } catch (error) {
        // The provider's circuit breaker says the model is out for a while: the offline
        // extractor keeps memories forming meanwhile. Any other failure fails the job (retried).
        if (!isCircuitOpen(error)) throw error
        this.deps.log.warn(`[formation] ${llm.model}: circuit open; offline extraction meanwhile`)
        return { candidates: await offline.extract(turns, offlineOptions), extractor: 'offline-fallback' }
      }
    }
    return { candidates: await offline.extract(turns, offlineOptions), extractor: 'offline' }
  }

  /**
   * Spec 001/003's LLM extraction, with the agent's recent memories it may correct. An answer that
   * does not validate is corrected once (core's chatForObject), then the call fails whole: nothing
   * is half-applied.
   */
  private async extractWithLlm(
    llm: LlmProvider,
    agentId: string,
    turns: readonly ConversationTurn[],
  ): Promise<FormedCandidate[]> {
    const promptTurns: PromptTurn[] = turns.flatMap((turn) =>
      turn.role === 'system' ? [] : [{ ...turn, role: turn.role ?? 'user' } as PromptTurn],
    )
    if (promptTurns.length === 0) return []
    const list = await this.deps.memoryItems.list(agentId, {}, 'updatedAt')
    const existing = (await list.page(0, EXISTING_IN_PROMPT)).map((memory) => ({
      id: memory.id,
      type: typeof memory.metadata.memoryType === 'string' ? memory.metadata.memoryType : memory.category,
      content: memory.content,
    }))
    const messages = buildExtractionPrompt(promptTurns, { existing })
    const turnIds = new Set(promptTurns.map((turn) => turn.id))
    const memoryIds = new Set(existing.map((memory) => memory.id))
    // One correction for an answer that does not validate, then ModelAnswerError fails the job.
    const { value } = await chatForObject(
      llm,
      { messages, jsonSchema: EXTRACTION_ANSWER_JSON_SCHEMA, temperature: 0 },
      ExtractionAnswerSchema,
      // The checks beyond the schema: only turns and memories this prompt showed may be named.
      { check: (answer) => void parseExtractionAnswer(JSON.stringify(answer), turnIds, memoryIds) },
    )
    const byId = new Map(turns.map((turn) => [turn.id, turn]))
    return value.items.map((item) => this.fromLlmItem(item, byId))
  }

  /** An LLM item as a candidate: its speaker and importance come from its source turns, not the model. */
  private fromLlmItem(item: ExtractedItem, turns: ReadonlyMap<string, ConversationTurn>): FormedCandidate {
    const sources = item.sourceMessageIds.flatMap((id) => turns.get(id) ?? [])
    const first = sources[0] as ConversationTurn
    const explicit = sources.some((turn) => restatesExplicitRequest(item.content, turn.content))
    const now = this.deps.clock.now()
    // An explicit request weighs the same whichever extractor read it (as rememberThis).
    const importance = explicit
      ? DEFAULT_IMPORTANCE_WEIGHTS.explicitRequest
      : Math.max(
          ...sources.map(
            (turn) =>
              scoreImportance(
                {
                  content: sentenceSaying(item.content, turn.content),
                  kind: turn.role === 'tool' ? 'tool_result' : 'message',
                  timestamp: turn.timestamp,
                },
                now,
              ).importance,
          ),
        )
    return {
      type: item.type,
      category: item.category,
      content: item.content,
      confidence: item.confidence,
      tags: item.tags,
      validFrom: item.validFrom ? new Date(item.validFrom) : null,
      validUntil: item.validUntil ? new Date(item.validUntil) : null,
      importance,
      sourceMessageIds: item.sourceMessageIds,
      speaker: first.speaker,
      family: 'llm',
      supersedes: item.supersedesMemoryId,
    }
  }

  /**
   * Stores candidates through createMemory's pipeline (verification, privacy policy, embedding).
   * Whoever the text or a model names, a memory belongs to the job's agent and to the user of its
   * source turns; candidates are held to the extraction limits whatever produced them.
   */
  private async store(
    agentId: string,
    conversationId: string,
    turns: readonly StoredMessage[],
    candidates: readonly FormedCandidate[],
    result: FormationResult,
  ): Promise<void> {
    const byId = new Map(turns.map((turn) => [turn.id, turn]))
    for (const [index, candidate] of candidates.slice(0, EXTRACTION_LIMITS.maxItems).entries()) {
      // Each memory is verified, embedded and written on the request thread: requests waiting
      // go first between two of them (the bench: the pipeline, not the extractor, is most of it).
      if (index > 0) await yieldToRequests()
      const sources = candidate.sourceMessageIds
        .slice(0, EXTRACTION_LIMITS.maxSourceIds)
        .flatMap((id) => byId.get(id) ?? [])
      const users = new Set(sources.map(userOf))
      const content = candidate.content.trim()
      if (
        sources.length === 0 ||
        users.size !== 1 ||
        content.length === 0 ||
        content.length > EXTRACTION_LIMITS.maxContentChars
      ) {
        result.rejected++
        continue
      }
      try {
        const written = await this.deps.memoryItems.create(
          agentId,
          {
            content,
            category: candidate.category,
            tags: candidate.tags
              .map((tag) => tag.trim().slice(0, EXTRACTION_LIMITS.maxTagChars))
              .filter((tag) => tag.length > 0)
              .slice(0, EXTRACTION_LIMITS.maxTags),
            importance: clamp01(candidate.importance),
            confidence: clamp01(candidate.confidence),
            userId: [...users][0] ?? null,
            sourceConversationId: conversationId,
            sourceMessageId: (sources[0] as StoredMessage).id,
            validFrom: candidate.validFrom,
            validUntil: candidate.validUntil,
            metadata: {
              memoryType: candidate.type satisfies MemoryEntryType,
              sourceMessageIds: sources.map((turn) => turn.id),
              formedBy: candidate.family.startsWith('llm') ? 'llm' : 'offline',
              family: candidate.family.slice(0, 80),
              // Who said it (a named speaker, not a bare role): the knowledge graph's person for "I".
              ...(candidate.speaker && !SPEAKER_ROLES.has(candidate.speaker)
                ? { speaker: candidate.speaker.slice(0, MAX_SPEAKER_CHARS) }
                : {}),
            },
            // Chat says many distinct things about one speaker in similar words: only a real
            // replacement (a correction, a denial, a new value for the same attribute) supersedes.
          },
          'replacement',
        )
        if (written.outcome === 'DUPLICATE') result.duplicates++
        else {
          result.stored.push(written.item)
          if (written.superseded) result.superseded++
          // The model named the memory this corrects (only ids its prompt showed get this far).
          if (
            candidate.supersedes &&
            candidate.supersedes !== written.superseded?.id &&
            (await this.deps.memoryItems.supersede(agentId, candidate.supersedes, written.item.id))
          )
            result.superseded++
        }
      } catch (error) {
        // A limit or the agent's privacy policy refused this one; the others still form.
        if (!(error instanceof ValidationError)) throw error
        result.rejected++
        this.deps.log.warn(`[formation] ${agentId}: a candidate was refused: ${error.message}`)
      }
    }
  }

  /**
   * Forgets what this process knows of the agent's settings (another replica may have changed
   * them): its turns queue extraction again until the settings are read, and the job checks them.
   */
  forgetSettings(agentId: string | null): void {
    if (agentId === null) this.disabled.clear()
    else this.disabled.delete(agentId)
    // Another process may have cancelled the agent's jobs (formation off, a reset): ask the queue again.
    this.scheduled.forgetAgent(agentId)
  }

  private remember(agentId: string, settings: FormationSettings): void {
    if (settings.enabled) this.disabled.delete(agentId)
    else this.disabled.add(agentId)
  }

  /** Formation went off: pending work is dropped and the watermarks move past what was said. */
  private async skipPending(agentId: string): Promise<void> {
    const pending = await this.deps.repository.pendingConversations(agentId)
    this.scheduled.forgetAgent(agentId)
    await this.deps.queue.cancel(
      agentId,
      pending.map((conversation) => extractJobKey(conversation.conversationId)),
    )
    for (const conversation of pending) await this.extractConversation(agentId, conversation.conversationId)
  }
}

function storedFormation(stored: StoredMemorySettings): StoredFormationSettings {
  const parsed = FormationSettingsSchema.safeParse(stored.formation ?? {})
  return parsed.success ? parsed.data : FormationSettingsSchema.parse({})
}

/** Only what differs from the defaults is stored, as the other parts of the record do. */
function onlyChanged(settings: StoredFormationSettings): Record<string, unknown> {
  const changed: Record<string, unknown> = {}
  if (!settings.enabled) changed.enabled = false
  const extraction = Object.fromEntries(Object.entries(settings.extraction).filter(([, v]) => v !== null))
  if (Object.keys(extraction).length > 0) changed.extraction = extraction
  return changed
}

function toTurn(message: StoredMessage): ConversationTurn {
  return {
    id: message.id,
    // Who said it restates "I": the speaker given, else the role ("User", "Assistant").
    speaker: message.speaker ?? message.role,
    role: message.role,
    content: message.content,
    timestamp: message.timestamp,
  }
}

/**
 * The user a turn belongs to: `metadata.userId` when the door recorded one, else none (the
 * agent's shared memory). Never what the text or a model says.
 */
function userOf(message: StoredMessage): string | null {
  const userId = message.metadata.userId
  return typeof userId === 'string' && userId.trim().length > 0 ? userId : null
}

/** Whether `content` restates an explicit request ("remember that…") made in `turnText`. */
function restatesExplicitRequest(content: string, turnText: string): boolean {
  const words = contentWords(content)
  return roughSentences(turnText).some((sentence) => {
    if (!isExplicitRememberRequest(sentence)) return false
    const asked = contentWords(interpretRememberThis(sentence).content)
    if (asked.size === 0) return false
    let shared = 0
    for (const word of asked) if (words.has(word)) shared++
    return shared / asked.size >= EXPLICIT_MATCH_SHARE
  })
}

/**
 * The sentence of a turn an item restates (most content words in common): spec 002's signals
 * ("my name is", "I prefer", "decided") are in what was said, not in the model's restatement.
 */
function sentenceSaying(content: string, turnText: string): string {
  const words = contentWords(content)
  let best = turnText
  let bestShared = -1
  for (const sentence of roughSentences(turnText)) {
    let shared = 0
    for (const word of contentWords(sentence)) if (words.has(word)) shared++
    if (shared > bestShared) {
      best = sentence
      bestShared = shared
    }
  }
  return best
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0
}

function emptyResult(): FormationResult {
  return { conversations: 0, turns: 0, stored: [], duplicates: 0, superseded: 0, rejected: 0, extractors: [] }
}

function addResult(total: FormationResult, part: FormationResult): void {
  total.conversations += part.conversations
  total.turns += part.turns
  total.stored.push(...part.stored)
  total.duplicates += part.duplicates
  total.superseded += part.superseded
  total.rejected += part.rejected
  total.extractors.push(...part.extractors)
}
