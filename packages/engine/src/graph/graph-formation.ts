import {
  buildGraphPrompt,
  type Clock,
  chatForObject,
  DEFAULT_EXCLUSIVE_RELATIONS,
  DEFAULT_GRAPH_LIMITS,
  DEFAULT_RESOLUTION_SETTINGS,
  type EntityType,
  type ExclusiveRelation,
  type ExtractedRelation,
  edgesContradictedBy,
  extractGraphOffline,
  GRAPH_ANSWER_JSON_SCHEMA,
  GraphAnswerSchema,
  type GraphExtraction,
  type GraphLimits,
  type LlmProvider,
  lookupWords,
  MAX_KNOWN_NAMES,
  type NewJob,
  nameTokens,
  normalizeEntityName,
  normalizeGraphAnswer,
  type ResolutionCandidate,
  type ResolutionSettings,
  reinforcedConfidence,
  resolveEntity,
  restoreKnownNames,
} from '@engram/core'
import type { JobWorker } from '../jobs/job-worker.ts'
import { isCircuitOpen } from '../llm/circuit-open.ts'
import type { AgentLanguageModels } from '../llm/with-model.ts'
import type { MemoryItemChange } from '../memory-items/memory-item-service.ts'
import type {
  GraphEntityRecord,
  GraphRelationshipRecord,
  GraphRepository,
  GraphSource,
} from '../ports/graph.ts'
import type { Job, JobQueue } from '../ports/job-queue.ts'
import type { Logger } from '../ports/logger.ts'
import type { MemoryItemView } from '../ports/memory-items.ts'

/** Forms the graph from one memory: extract, resolve, write edges with their evidence (issue 15). */
export const GRAPH_JOB = 'graph'
/** Memories one claim takes: each is formed on its own; a batch saves claims after an import. */
export const GRAPH_JOB_BATCH = 16
export const GRAPH_JOB_MAX_ATTEMPTS = 5
/** Candidates read per name from the token index and from the name's first letters. */
const CANDIDATES_PER_NAME = 20
/** Letters of a name's longest word that find candidates a typo keeps no whole word of ("Carolin" → "caro"). */
const PREFIX_LOOKUP_CHARS = 4
/** Current edges of one relation read per anchor when checking a contradiction. */
const CURRENT_EDGES_READ = 1_000
/** Edges of exclusive relations read when looking for ones a deleted edge had ended. */
const REOPEN_SCAN = 5_000
/** Memories read per page when the graph of a whole agent is (re)formed. */
const MEMORY_PAGE = 500

export function graphJobKey(memoryId: string): string {
  return `${GRAPH_JOB}:${memoryId}`
}

export function graphJob(agentId: string, memoryId: string, runAfter: Date, refresh = false): NewJob {
  // Only the memory's id: the job reads the memory as it is when it runs (an edit before then is
  // formed once), and a deleted memory leaves no copy of its text in the queue. `refresh`: an
  // edited memory, whose earlier edges may have ended others.
  return { kind: GRAPH_JOB, agentId, key: graphJobKey(memoryId), payload: { memoryId, refresh }, runAfter }
}

export type GraphExtractor = 'offline' | 'llm' | 'offline-fallback'

/** What forming one memory did. */
export interface GraphFormationResult {
  memoryId: string
  /** Null when the memory was gone: its evidence was dropped and nothing formed. */
  extractor: GraphExtractor | null
  entitiesCreated: number
  /** Mentions that resolved to an entity the graph had. */
  entitiesResolved: number
  relationshipsCreated: number
  /** The same (source, relation, target) again: confidence reinforced, evidence added. */
  relationshipsConfirmed: number
  /** Current edges whose validity a new contradicting edge ended. */
  relationshipsEnded: number
  /** Entities not created because the agent is at `maxEntitiesPerAgent`. */
  entitiesOverLimit: number
  /** Relationships not created because an end is at `maxEdgesPerEntity` (or an end was not created). */
  relationshipsOverLimit: number
  /** Items of a model's answer that did not validate. */
  dropped: number
}

export interface GraphFormationDeps {
  graph: GraphRepository
  /** Where a job reads its memory (by id, scoped to the job's agent) and an agent's memories are paged. */
  memories: {
    find(agentId: string, id: string): Promise<MemoryItemView | null>
    page(agentId: string, offset: number, limit: number): Promise<MemoryItemView[]>
  }
  queue: JobQueue
  clock: Clock
  log: Logger
  /** The model an agent's formation calls (its extractor setting); the offline extractor without one. */
  models?: AgentLanguageModels | null
  /** Name embeddings for resolution by similarity; none: names and letters only. */
  embeddings?: {
    embedTexts(agentId: string, texts: readonly string[]): Promise<(Float32Array | null)[]>
  } | null
  limits?: GraphLimits
  resolution?: ResolutionSettings
  exclusiveRelations?: readonly ExclusiveRelation[]
  /** Off: memories written queue no graph job (a door or test forms one by hand); deletions still forget. */
  automatic?: boolean
  /** The agent's switch of automatic formation (off: its jobs form nothing); always on when not given. */
  enabled?: (agentId: string) => Promise<boolean>
}

interface Mention {
  name: string
  type: EntityType
  embedding: Float32Array | null
}

/**
 * Graph formation (issue 15): every memory written (formation, createMemory, an edit, an import)
 * queues a durable job keyed by the memory; the job extracts entities and relations (the agent's
 * model when its formation uses one, core's offline extractor otherwise or while the model's
 * circuit is open, or when the model failed on the job's last attempt), resolves each name to an
 * entity the agent has or a new one, and writes relationships with the memory (and its source turn)
 * as evidence: the same edge again is a confirmation, a contradicting one ends the current edge's
 * validity. Deleting a memory drops its evidence at once, in the deletion's path.
 */
export class GraphFormation {
  private readonly limits: GraphLimits
  private readonly resolution: ResolutionSettings
  private readonly exclusive: readonly ExclusiveRelation[]
  /** Limit stops in this process, per agent: formation says so instead of throwing. */
  private readonly overLimit = new Map<string, { entities: number; relationships: number }>()

  constructor(private readonly deps: GraphFormationDeps) {
    this.limits = deps.limits ?? DEFAULT_GRAPH_LIMITS
    this.resolution = deps.resolution ?? DEFAULT_RESOLUTION_SETTINGS
    this.exclusive = deps.exclusiveRelations ?? DEFAULT_EXCLUSIVE_RELATIONS
  }

  // --- following the memories -----------------------------------------------------------------

  /**
   * After memories were stored, changed or deleted (MemoryItemService.onChange): a deleted memory's
   * evidence goes now, with what only it supported; a new memory, or one whose words or user
   * changed, queues its job. A supersession or an eviction (validity only) changes no edge: the
   * graph's own contradiction rules end what a newer fact replaces.
   */
  async memoriesChanged(agentId: string, changes: readonly MemoryItemChange[]): Promise<void> {
    const deleted = changes.filter((c) => c.kind === 'deleted').map((c) => c.item.id)
    if (deleted.length > 0) {
      await this.forget(this.deps.graph, agentId, { memoryIds: deleted })
      await this.deps.queue.cancel(agentId, deleted.map(graphJobKey))
    }
    if (this.deps.automatic === false) return
    const now = this.deps.clock.now()
    const jobs = changes
      .filter(
        (c) =>
          c.kind === 'created' ||
          (c.kind === 'updated' &&
            c.before !== undefined &&
            (c.before.content !== c.item.content || c.before.userId !== c.item.userId)),
      )
      .map((c) => graphJob(agentId, c.item.id, now, c.kind === 'updated'))
    if (jobs.length === 0) return
    try {
      await this.deps.queue.enqueue(jobs)
    } catch (error) {
      // The memory is written; a lost graph job must not fail its write (it forms on the next edit or import).
      this.deps.log.error(`[graph] ${agentId}: graph jobs not queued:`, error)
    }
  }

  /** Messages were deleted (a conversation, a privacy request): what only they supported goes. */
  async messagesDeleted(agentId: string, messageIds: readonly string[]): Promise<void> {
    for (let start = 0; start < messageIds.length; start += MEMORY_PAGE)
      await this.forget(this.deps.graph, agentId, {
        messageIds: messageIds.slice(start, start + MEMORY_PAGE),
      })
  }

  /**
   * forgetSources, then the edges a deleted edge had ended hold again: "moved to Lisbon" deleted
   * (wrong, or forgotten on request), "lives in Berlin" is current again instead of ended by a fact
   * nobody holds any more. The ended edges are read before (a SQL store clears supersededById when
   * the superseding row goes); bounded: the first REOPEN_SCAN edges of exclusive relations.
   * `reopen` false (a memory formed the first time has nothing to forget) skips the read.
   */
  private async forget(
    graph: GraphRepository,
    agentId: string,
    sources: { memoryIds?: readonly string[]; messageIds?: readonly string[] },
    reopen = true,
  ): Promise<void> {
    const ended = reopen
      ? (
          await graph.relationships(
            agentId,
            { relations: this.exclusive.map((rule) => rule.relation) },
            0,
            REOPEN_SCAN,
          )
        ).filter((edge) => edge.supersededById !== null)
      : []
    const forgotten = await graph.forgetSources(agentId, sources)
    if (forgotten.relationships === 0 || ended.length === 0) return
    const now = this.deps.clock.now()
    for (const edge of ended) {
      if (await graph.findRelationship(agentId, edge.supersededById as string)) continue
      if (!(await graph.findRelationship(agentId, edge.id))) continue
      await graph.updateRelationship(agentId, edge.id, {
        validUntil: null,
        supersededById: null,
        updatedAt: now,
      })
    }
  }

  /**
   * Queues every memory of the agent (after an import that brought memories but no graph): each is
   * formed by its job. Returns how many were queued.
   */
  async formAgent(agentId: string): Promise<number> {
    const now = this.deps.clock.now()
    let queued = 0
    for (let offset = 0; ; offset += MEMORY_PAGE) {
      const page = await this.deps.memories.page(agentId, offset, MEMORY_PAGE)
      if (page.length > 0)
        queued += await this.deps.queue.enqueue(page.map((m) => graphJob(agentId, m.id, now)))
      if (page.length < MEMORY_PAGE) return queued
    }
  }

  /** Limit stops counted in this process for the agent (entities and relationships not created). */
  limitStops(agentId: string): { entities: number; relationships: number } {
    return { ...(this.overLimit.get(agentId) ?? { entities: 0, relationships: 0 }) }
  }

  /** Runs a batch of graph jobs; returns the jobs that failed with their reason (retried by the worker). */
  async runJobs(jobs: readonly Job[], maxAttempts = GRAPH_JOB_MAX_ATTEMPTS): Promise<Map<number, string>> {
    const failed = new Map<number, string>()
    for (const job of jobs) {
      const { memoryId, refresh } = job.payload as { memoryId?: unknown; refresh?: unknown }
      // A payload naming no memory has nothing to do: done, not retried.
      if (typeof memoryId !== 'string' || memoryId.length === 0) continue
      try {
        if (this.deps.enabled && !(await this.deps.enabled(job.agentId))) continue
        // The agent is the job's, never the payload's: a job only reaches its own agent's memories.
        await this.formMemory(job.agentId, memoryId, {
          lastAttempt: job.attempts >= maxAttempts,
          refresh: refresh === true,
        })
      } catch (error) {
        failed.set(job.id, error instanceof Error ? error.message : String(error))
      }
    }
    return failed
  }

  // --- forming one memory ---------------------------------------------------------------------

  /**
   * Forms the graph of one memory now: its earlier evidence is dropped and it is read again, in one
   * transaction, so an edited memory leaves nothing of its old words. `lastAttempt`: a model that
   * fails now gives way to the offline extractor instead of failing the job for good. `refresh`
   * false (a memory formed the first time) skips looking for edges its old edges had ended.
   */
  async formMemory(
    agentId: string,
    memoryId: string,
    { lastAttempt = false, refresh = true } = {},
  ): Promise<GraphFormationResult> {
    const result = emptyResult(memoryId)
    const memory = await this.deps.memories.find(agentId, memoryId)
    if (!memory) {
      await this.forget(this.deps.graph, agentId, { memoryIds: [memoryId] })
      return result
    }
    const speaker = speakerOf(memory)
    const reference = memory.validFrom ?? memory.createdAt
    const { extraction, extractor, dropped } = await this.extract(
      agentId,
      memory,
      speaker,
      reference,
      lastAttempt,
    )
    result.extractor = extractor
    result.dropped = dropped
    const mentions = await this.mentions(agentId, extraction)
    const source: GraphSource = { memoryId: memory.id, messageId: memory.sourceMessageId }
    const now = this.deps.clock.now()
    await this.deps.graph.transaction(async (graph) => {
      // Before the writes: an edge this memory's old words had ended must be current again for
      // the new words' contradictions to see it.
      await this.forget(graph, agentId, { memoryIds: [memory.id] }, refresh)
      const ids = new Map<string, string>()
      for (const mention of mentions) {
        const id = await this.resolveOrCreate(graph, agentId, memory.userId, mention, source, now, result)
        if (id) ids.set(normalizeEntityName(mention.name), id)
      }
      for (const relation of extraction.relations) {
        const sourceId = ids.get(normalizeEntityName(relation.source))
        const targetId = ids.get(normalizeEntityName(relation.target))
        if (!sourceId || !targetId || sourceId === targetId) {
          if (!sourceId || !targetId) result.relationshipsOverLimit++
          continue
        }
        await this.writeRelationship(
          graph,
          agentId,
          memory,
          { ...relation, sourceId, targetId },
          source,
          now,
          result,
        )
      }
    })
    // Deleted while it was being read: its deletion dropped evidence that did not exist yet.
    if (!(await this.deps.memories.find(agentId, memoryId)))
      await this.forget(this.deps.graph, agentId, { memoryIds: [memoryId] })
    if (result.entitiesOverLimit + result.relationshipsOverLimit > 0) {
      const stops = this.overLimit.get(agentId) ?? { entities: 0, relationships: 0 }
      stops.entities += result.entitiesOverLimit
      stops.relationships += result.relationshipsOverLimit
      this.overLimit.set(agentId, stops)
      this.deps.log.warn(
        `[graph] ${agentId}: memory ${memoryId}: ${result.entitiesOverLimit} entities and ${result.relationshipsOverLimit} relationships not formed (limits: ${this.limits.maxEntitiesPerAgent} entities per agent, ${this.limits.maxEdgesPerEntity} edges per entity)`,
      )
    }
    return result
  }

  private async extract(
    agentId: string,
    memory: MemoryItemView,
    speaker: string | null,
    reference: Date,
    lastAttempt: boolean,
  ): Promise<{ extraction: GraphExtraction; extractor: GraphExtractor; dropped: number }> {
    // Names the graph already knows, so a lower-case "dana" is read as the Dana it has (the
    // offline extractor finds names by their capitals; the model needs no help).
    const knownNames = async () => {
      const known = await this.deps.graph.entitiesByTokens(
        agentId,
        lookupWords(memory.content),
        MAX_KNOWN_NAMES,
      )
      // A person is also met by their given name alone ("dana" for Dana Kim); resolution then
      // decides which Dana it is, as for a capitalised "Dana".
      return known.flatMap((entity) => [
        entity.name,
        ...entity.aliases,
        ...(entity.type === 'PERSON' ? [entity.name.split(/\s+/)[0] ?? ''] : []),
      ])
    }
    const offline = async () =>
      extractGraphOffline(restoreKnownNames(memory.content, await knownNames()), {
        speaker,
        reference,
        validUntil: memory.validUntil,
        confidence: memory.confidence,
      })
    const llm = (await this.deps.models?.languageModel(agentId)) ?? null
    if (!llm) return { extraction: await offline(), extractor: 'offline', dropped: 0 }
    try {
      const answer = await this.extractWithLlm(llm, memory, speaker, reference)
      return { extraction: answer, extractor: 'llm', dropped: answer.dropped }
    } catch (error) {
      // As memory extraction: an open circuit falls back at once; any other failure fails the job
      // (retried with backoff) until its last attempt, which forms the graph offline rather than never.
      if (!isCircuitOpen(error) && !lastAttempt) throw error
      this.deps.log.warn(`[graph] ${llm.model}: ${(error as Error).message}; offline extraction instead`)
      return { extraction: await offline(), extractor: 'offline-fallback', dropped: 0 }
    }
  }

  private async extractWithLlm(
    llm: LlmProvider,
    memory: MemoryItemView,
    speaker: string | null,
    reference: Date,
  ): Promise<GraphExtraction & { dropped: number }> {
    const { value } = await chatForObject(
      llm,
      {
        messages: buildGraphPrompt({ content: memory.content, speaker, reference }),
        jsonSchema: GRAPH_ANSWER_JSON_SCHEMA,
        temperature: 0,
      },
      GraphAnswerSchema,
    )
    const answer = normalizeGraphAnswer(value, this.limits)
    // The model dates only what the text dates: the rest holds from when the memory does.
    const relations: ExtractedRelation[] = answer.relations.map((r) => ({
      ...r,
      confidence: Math.min(r.confidence, memory.confidence),
      validFrom: r.validFrom ?? reference,
      validUntil: r.validUntil ?? memory.validUntil,
    }))
    return { entities: answer.entities, relations, dropped: answer.dropped }
  }

  /** The extraction's entities with their names' embeddings (none when the embedder fails). */
  private async mentions(agentId: string, extraction: GraphExtraction): Promise<Mention[]> {
    const entities = extraction.entities.filter(
      (e) => e.name.length <= this.limits.maxEntityNameChars && normalizeEntityName(e.name).length > 0,
    )
    let vectors: (Float32Array | null)[] = []
    if (this.deps.embeddings && this.resolution.embeddingWeight > 0 && entities.length > 0) {
      try {
        vectors = await this.deps.embeddings.embedTexts(
          agentId,
          entities.map((e) => e.name),
        )
      } catch (error) {
        this.deps.log.warn(`[graph] ${agentId}: names not embedded, resolved by their letters only:`, error)
      }
    }
    return entities.map((e, i) => ({ name: e.name, type: e.type, embedding: vectors[i] ?? null }))
  }

  /** The candidates a name may be: same name or alias, a shared word, or the same first letters. */
  private async candidates(graph: GraphRepository, agentId: string, userId: string | null, name: string) {
    const tokens = nameTokens(name)
    const longest = [...tokens].sort((a, b) => b.length - a.length)[0] ?? ''
    const found = new Map<string, GraphEntityRecord>()
    const add = (rows: GraphEntityRecord[]) => {
      for (const row of rows) if (row.userId === userId && !found.has(row.id)) found.set(row.id, row)
    }
    add(await graph.entitiesByName(agentId, normalizeEntityName(name)))
    add(await graph.entitiesByTokens(agentId, tokens, CANDIDATES_PER_NAME))
    if (longest.length >= PREFIX_LOOKUP_CHARS)
      add(
        await graph.searchEntities(
          agentId,
          { nameContains: longest.slice(0, PREFIX_LOOKUP_CHARS), userId },
          0,
          CANDIDATES_PER_NAME,
        ),
      )
    return [...found.values()]
  }

  private async resolveOrCreate(
    graph: GraphRepository,
    agentId: string,
    userId: string | null,
    mention: Mention,
    source: GraphSource,
    now: Date,
    result: GraphFormationResult,
  ): Promise<string | null> {
    const rows = await this.candidates(graph, agentId, userId, mention.name)
    const candidates: ResolutionCandidate[] = rows.map((row) => ({
      id: row.id,
      name: row.name,
      aliases: row.aliases,
      type: row.type,
      embedding: row.embedding,
    }))
    const resolved = resolveEntity(mention, candidates, this.resolution)
    const evidence = (entityId: string) =>
      graph.addEvidence(agentId, [{ entityId, relationshipId: null, ...source }], now)
    if (resolved.id) {
      const row = rows.find((r) => r.id === resolved.id) as GraphEntityRecord
      const key = normalizeEntityName(mention.name)
      // The name as written becomes an alias (the resolution's memory of it), up to the limit.
      const known = [row.normalizedName, ...row.aliases.map(normalizeEntityName)].includes(key)
      const aliases =
        known || row.aliases.length >= this.limits.maxAliasesPerEntity
          ? row.aliases
          : [...row.aliases, mention.name]
      await graph.updateEntity(agentId, row.id, {
        aliases,
        mentionCount: row.mentionCount + 1,
        lastSeenAt: now,
        // A cue found now types an entity no cue had typed.
        ...(row.type === 'CONCEPT' && mention.type !== 'CONCEPT' ? { type: mention.type } : {}),
        ...(row.embedding === null && mention.embedding ? { embedding: mention.embedding } : {}),
        updatedAt: now,
      })
      await evidence(row.id)
      result.entitiesResolved++
      return row.id
    }
    if ((await graph.countEntities(agentId, {})) >= this.limits.maxEntitiesPerAgent) {
      result.entitiesOverLimit++
      return null
    }
    const created = await graph.createEntity(agentId, {
      userId,
      type: mention.type,
      name: mention.name,
      aliases: [],
      summary: null,
      embedding: mention.embedding,
      mentionCount: 1,
      origin: 'FORMED',
      firstSeenAt: now,
      lastSeenAt: now,
      createdAt: now,
    })
    await evidence(created.id)
    result.entitiesCreated++
    return created.id
  }

  private async writeRelationship(
    graph: GraphRepository,
    agentId: string,
    memory: MemoryItemView,
    incoming: ExtractedRelation & { sourceId: string; targetId: string },
    source: GraphSource,
    now: Date,
    result: GraphFormationResult,
  ): Promise<void> {
    const { sourceId, targetId, relation } = incoming
    const evidence = (relationshipId: string) =>
      graph.addEvidence(agentId, [{ entityId: null, relationshipId, ...source }], now)
    const believed = (
      await graph.relationships(
        agentId,
        { entityIds: [sourceId], relations: [relation] },
        0,
        CURRENT_EDGES_READ,
      )
    ).filter((edge) => edge.retiredAt === null)
    // The same edge, still valid when this one starts: a confirmation, not a new edge.
    const same = believed.find(
      (edge) =>
        edge.sourceId === sourceId &&
        edge.targetId === targetId &&
        (edge.validUntil === null || (incoming.validFrom !== null && incoming.validFrom < edge.validUntil)),
    )
    if (same) {
      await graph.updateRelationship(agentId, same.id, {
        confidence: reinforcedConfidence(Math.max(same.confidence, incoming.confidence)),
        updatedAt: now,
      })
      await evidence(same.id)
      result.relationshipsConfirmed++
      return
    }
    for (const end of [sourceId, targetId])
      if ((await graph.countEdgesOf(agentId, end)) >= this.limits.maxEdgesPerEntity) {
        result.relationshipsOverLimit++
        return
      }
    const rule = this.exclusive.find((r) => r.relation === relation)
    const current = rule
      ? (
          await graph.relationships(
            agentId,
            { entityIds: [rule.per === 'source' ? sourceId : targetId], relations: [relation] },
            0,
            CURRENT_EDGES_READ,
          )
        ).filter((edge) => edge.retiredAt === null && edge.validUntil === null)
      : []
    const contradicted = edgesContradictedBy({ sourceId, relation, targetId }, current, this.exclusive)
    // A fact older than the current one it contradicts ("moved to Berlin in 2023", read after
    // "moved to Lisbon in 2025") is history: it ends where the current one begins.
    const newer = contradicted.filter(
      (edge) => edge.validFrom !== null && incoming.validFrom !== null && incoming.validFrom < edge.validFrom,
    )
    const earliestNewer = newer.sort(
      (a, b) => (a.validFrom as Date).getTime() - (b.validFrom as Date).getTime(),
    )[0]
    const created = await graph.createRelationship(agentId, {
      userId: memory.userId,
      sourceId,
      relation,
      targetId,
      confidence: incoming.confidence,
      validFrom: incoming.validFrom,
      validUntil: earliestNewer ? earliestNewer.validFrom : incoming.validUntil,
      learntAt: now,
      origin: 'FORMED',
      createdAt: now,
    })
    if (earliestNewer)
      await graph.updateRelationship(agentId, created.id, {
        supersededById: earliestNewer.id,
        updatedAt: now,
      })
    await evidence(created.id)
    result.relationshipsCreated++
    for (const old of contradicted) {
      if (newer.includes(old)) continue
      // Ended, never overwritten: "as of" a date before this one still answers with it.
      await graph.updateRelationship(agentId, old.id, {
        validUntil: endOf(old, incoming.validFrom ?? now),
        supersededById: created.id,
        updatedAt: now,
      })
      result.relationshipsEnded++
    }
  }
}

/** An edge's validity can end no earlier than it began (a same-day contradiction ends it at once). */
function endOf(edge: GraphRelationshipRecord, at: Date): Date {
  return edge.validFrom && at < edge.validFrom ? edge.validFrom : at
}

/**
 * Who "I" is in a memory: the speaker formation recorded, else its user. A memory with neither
 * (an agent's own note) restates no first person.
 */
function speakerOf(memory: MemoryItemView): string | null {
  const speaker = memory.metadata.speaker
  if (typeof speaker === 'string' && speaker.trim().length > 0) return speaker
  return memory.userId
}

function emptyResult(memoryId: string): GraphFormationResult {
  return {
    memoryId,
    extractor: null,
    entitiesCreated: 0,
    entitiesResolved: 0,
    relationshipsCreated: 0,
    relationshipsConfirmed: 0,
    relationshipsEnded: 0,
    entitiesOverLimit: 0,
    relationshipsOverLimit: 0,
    dropped: 0,
  }
}

/** Registers the graph kind on the worker: each job forms its memory's part of the graph. */
export function registerGraphJobs(worker: JobWorker, formation: GraphFormation): void {
  worker.register(
    GRAPH_JOB,
    async (jobs) => ({ failed: await formation.runJobs(jobs, GRAPH_JOB_MAX_ATTEMPTS) }),
    {
      batchSize: GRAPH_JOB_BATCH,
      maxAttempts: GRAPH_JOB_MAX_ATTEMPTS,
      backoffBaseMs: 5_000,
      backoffMaxMs: 15 * 60_000,
    },
  )
}
