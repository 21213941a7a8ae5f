import type { Clock, Embedder } from '@engram/core'
import type { AgentWrites } from '../agents/agent-writes.ts'
import {
  EMBEDDING_KINDS,
  type EmbeddingKind,
  type EmbeddingRepository,
  type OwnerToFill,
} from '../ports/embeddings.ts'
import type { EmbeddingProgressEvent, EventBus } from '../ports/event-bus.ts'
import type { Logger } from '../ports/logger.ts'
import type { Telemetry } from '../ports/telemetry.ts'
import type { SearchableVectors, VectorStore } from '../ports/vector-store.ts'
import { CachedEmbedder } from './cached-embedder.ts'
import { contentHash } from './content-hash.ts'

/** Rows embedded per batch: one embedder call and one transaction each. */
export const EMBEDDING_BATCH_SIZE = 256

/**
 * The durable queue's side of embedding (embed-jobs.ts): writes queue their rows instead of
 * embedding them in the request, and a search runs what its agent still has queued.
 */
export interface EmbeddingJobs {
  enqueue(agentId: string, kind: EmbeddingKind, ownerIds: readonly number[]): Promise<unknown>
  /** Queues every row (of an agent, or all) with no vector of the current model. */
  enqueueMissing(agentId: string | null): Promise<number>
  /** Runs the agent's due embedding jobs now; returns how many ran. */
  runFor(agentId: string): Promise<number>
  /** Embed jobs per kind of row: queued (pending or running) and dead-lettered. */
  counts(agentId: string | null): Promise<Map<EmbeddingKind, { queued: number; failed: number }>>
  /** Removes the rows' embed jobs that no worker holds (the rows were deleted). */
  cancel(agentId: string, kind: EmbeddingKind, ownerIds: readonly number[]): Promise<number>
}

export interface EmbeddingCoverage {
  kind: EmbeddingKind
  total: number
  embedded: number
  queued: number
  failed: number
}

/** An owner an embed job is about. */
export interface OwnerToEmbed {
  jobId: number
  agentId: string
  kind: EmbeddingKind
  ownerId: number
}

export interface EmbeddingServiceDeps {
  /** The vectors of the embedder's model (the adapter keeps the per-(agent, kind) indexes). */
  vectors: VectorStore
  /** Owner texts, the vector cache, other models' vectors. */
  repository: EmbeddingRepository
  embedder: Embedder
  clock: Clock
  /** Where re-embedding progress is published (`embedding:progress`). */
  events: EventBus
  log?: Logger
  /** The agents' write counters: a search with nothing written since skips every check. */
  writes?: AgentWrites
  /** Where the vector cache's hits and misses are reported (issue 17's metrics). */
  telemetry?: Telemetry
}

/**
 * Vectors for everything searchable, stored per model with a cache by content hash, and kept in
 * memory per agent and kind for search by the VectorStore. Embedding never blocks a write: writes
 * queue an embed job (durable, retried with backoff) and the job worker embeds them in batches; a
 * search first runs what its agent still has queued, and falls back to keywords for whatever has
 * no vector yet (a provider outage).
 */
export class EmbeddingService {
  readonly embedder: Embedder
  private readonly vectors: VectorStore
  private readonly repository: EmbeddingRepository
  private readonly cached: CachedEmbedder
  private readonly clock: Clock
  private readonly events: EventBus
  private readonly log: Logger
  private readonly writes: AgentWrites | undefined
  private progressState: EmbeddingProgressEvent
  private job: Promise<void> | null = null
  /** The job queue, once wired (null: writes are embedded by search fills only). */
  private jobs: EmbeddingJobs | null = null
  /**
   * Per agent and kind, the owner id up to which every owner has a vector: fill() looks only past
   * it instead of scanning every owner for a missing vector (ids are AUTOINCREMENT, never reused).
   */
  private readonly filledUpTo = new Map<string, number>()

  constructor(deps: EmbeddingServiceDeps) {
    this.embedder = deps.embedder
    this.vectors = deps.vectors
    this.repository = deps.repository
    this.clock = deps.clock
    this.events = deps.events
    this.log = deps.log ?? console
    this.writes = deps.writes
    this.cached = new CachedEmbedder(deps.embedder, deps.repository, deps.clock, this.log, deps.telemetry)
    this.progressState = idleProgress(deps.embedder.model)
  }

  /** Hands over the job queue (it needs this service to run embed jobs, so it comes after). */
  useJobs(jobs: EmbeddingJobs): void {
    this.jobs = jobs
  }

  /** Queues rows to be embedded off the request path. */
  async enqueue(agentId: string, kind: EmbeddingKind, ownerIds: readonly number[]): Promise<void> {
    if (ownerIds.length > 0) await this.jobs?.enqueue(agentId, kind, ownerIds)
  }

  /** Queues every row (of an agent, or all) still without a vector of the current model. */
  async enqueueMissing(agentId: string | null): Promise<number> {
    return (await this.jobs?.enqueueMissing(agentId)) ?? 0
  }

  get model(): string {
    return this.embedder.model
  }

  /** See CachedEmbedder.isLocal: an in-process embedder fills inside a search. */
  get isLocal(): boolean {
    return this.cached.isLocal
  }

  get progress(): EmbeddingProgressEvent {
    return this.progressState
  }

  /** Vectors for an agent's texts, from its cache where present; null where the embedder failed. */
  async embedTexts(agentId: string, texts: readonly string[]): Promise<(Float32Array | null)[]> {
    return (await this.cached.embed(texts.map((text) => ({ agentId, text })))).vectors
  }

  /**
   * The embed jobs' work: gives each owner a vector of the current model, with one provider call
   * for the whole batch (whatever the agents and kinds). An owner that is gone, belongs to another
   * agent than its job, or already has a vector of its current text needs nothing. Returns the
   * jobs that failed (the provider's error), to be retried.
   */
  async embedOwners(owners: readonly OwnerToEmbed[]): Promise<Map<number, string>> {
    const failed = new Map<number, string>()
    const todo: { owner: OwnerToEmbed; text: string }[] = []
    for (const kind of EMBEDDING_KINDS) {
      const ofKind = owners.filter((o) => o.kind === kind)
      if (ofKind.length === 0) continue
      const rows = await this.repository.ownerTexts(
        kind,
        this.model,
        ofKind.map((o) => o.ownerId),
      )
      const byId = new Map(rows.map((row) => [row.id, row]))
      for (const owner of ofKind) {
        const row = byId.get(owner.ownerId)
        if (!row || row.agentId !== owner.agentId) continue
        if (row.embeddedHash === contentHash(row.text)) continue
        todo.push({ owner, text: row.text })
      }
    }
    if (todo.length === 0) return failed
    const { vectors, error } = await this.cached.embed(
      todo.map((t) => ({ agentId: t.owner.agentId, text: t.text })),
    )
    const groups = new Map<
      string,
      { agentId: string; kind: EmbeddingKind; owners: { id: number; text: string; vector: Float32Array }[] }
    >()
    for (const [i, { owner, text }] of todo.entries()) {
      const vector = vectors[i]
      if (!vector) {
        failed.set(owner.jobId, error ?? `${this.model} returned no vector`)
        continue
      }
      const key = indexKey(owner.agentId, owner.kind)
      const group = groups.get(key) ?? { agentId: owner.agentId, kind: owner.kind, owners: [] }
      group.owners.push({ id: owner.ownerId, text, vector })
      groups.set(key, group)
    }
    for (const group of groups.values()) await this.store(group.agentId, group.kind, group.owners)
    return failed
  }

  /** A query's vector; null when the embedder fails (search then uses keywords only). */
  async embedQuery(agentId: string, text: string): Promise<Float32Array | null> {
    return (await this.embedTexts(agentId, [text]))[0] ?? null
  }

  /** Embeds owners and stores their vectors; returns how many got one. */
  async store(
    agentId: string,
    kind: EmbeddingKind,
    owners: { id: number; text: string; vector?: Float32Array }[],
  ): Promise<number> {
    if (owners.length === 0) return 0
    // A vector the caller already computed (a write checks it for semantic duplicates first) is
    // not computed again.
    const missing = owners.filter((o) => !o.vector)
    const computed = await this.embedTexts(
      agentId,
      missing.map((o) => o.text),
    )
    const byOwner = new Map(missing.map((o, i) => [o, computed[i] ?? null]))
    const stored = owners.flatMap((owner) => {
      const vector = owner.vector ?? byOwner.get(owner) ?? null
      return vector ? [{ id: String(owner.id), vector, contentHash: contentHash(owner.text) }] : []
    })
    if (stored.length === 0) return 0
    await this.vectors.upsert(agentId, kind, stored)
    return stored.length
  }

  /**
   * Owners that were deleted (summaries past their retention or of a deleted conversation): their
   * vectors leave every store — the vector rows (a trigger removed them already in SQLite), the
   * in-memory index, the agent's cache of vectors by text, and the embed jobs still queued for them.
   */
  async discard(
    agentId: string,
    kind: EmbeddingKind,
    owners: readonly { id: number | string; text: string }[],
  ): Promise<void> {
    if (owners.length === 0) return
    const ids = owners.map((owner) => String(owner.id))
    await this.vectors.remove(agentId, kind, ids)
    this.vectors.forget(agentId, kind, ids)
    await this.jobs?.cancel(agentId, kind, ids.map(Number))
    await this.repository.uncache(agentId, [...new Set(owners.map((owner) => contentHash(owner.text)))])
  }

  /** Drops owners' vectors from the in-memory index (their rows go with them by trigger). */
  forget(agentId: string, kind: EmbeddingKind, ownerIds: readonly (number | string)[]): void {
    this.vectors.forget(agentId, kind, ownerIds.map(String))
  }

  /**
   * Forgets an agent's in-memory indexes (every agent's when none is named) after its rows were
   * deleted or replaced (a deleted agent, a restore, a clear): nothing of them may serve a search
   * again, nor be saved by a build or a flush still under way.
   */
  reset(agentId?: string): void {
    this.vectors.reset(agentId)
    for (const key of this.filledUpTo.keys())
      if (!agentId || EMBEDDING_KINDS.some((kind) => key === indexKey(agentId, kind)))
        this.filledUpTo.delete(key)
  }

  /** In-memory vector indexes held for an agent (its queued embed jobs are in the job queue). */
  held(agentId: string): { indexes: number } {
    return { indexes: this.vectors.held(agentId) }
  }

  /** What the vector store persisted for the agent beside its rows (saved graphs, of any model). */
  files(agentId: string): string[] {
    return this.vectors.persisted(agentId)
  }

  /** Removes the agent's saved graphs (every agent's when none is named). Returns how many. */
  removeFiles(agentId?: string): number {
    return this.vectors.removePersisted(agentId)
  }

  /**
   * At start: removes saved graphs of agents that no longer exist (deleted while a graph was being
   * written, or by a server without this sweep), so a deleted agent's vectors never come back.
   */
  removeOrphanFiles(agentIds: readonly string[]): number {
    return this.vectors.removeOrphans(agentIds)
  }

  /** Owners of a kind that have no vector of the current model yet (ids after afterId). */
  async missing(
    agentId: string | null,
    kind: EmbeddingKind,
    limit: number,
    afterId = 0,
  ): Promise<OwnerToFill[]> {
    return this.repository.missing(agentId, kind, this.model, limit, afterId)
  }

  /** Embeds everything of the agent's kind still missing a vector; returns how many were added. */
  async fill(agentId: string, kind: EmbeddingKind): Promise<number> {
    const key = indexKey(agentId, kind)
    let added = 0
    for (;;) {
      const batch = await this.missing(agentId, kind, EMBEDDING_BATCH_SIZE, this.filledUpTo.get(key) ?? 0)
      if (batch.length === 0) return added
      const stored = await this.store(agentId, kind, batch)
      added += stored
      // A failing embedder would otherwise spin on the same rows; they stay past the mark.
      if (stored < batch.length) return added
      this.filledUpTo.set(key, (batch.at(-1) as { id: number }).id)
    }
  }

  /**
   * The agent's vectors of a kind, ready to search. A local embedder fills what is missing first;
   * with a remote one the agent's queued embed jobs run first (those in backoff after a failure
   * wait for their retry) and search uses what is there (keywords cover the rest).
   */
  async index(agentId: string, kind: EmbeddingKind): Promise<SearchableVectors> {
    // What the agent wrote and the worker has not embedded yet is embedded first, so a search
    // finds what was just written (a local embedder fills from the table, below, anyway).
    if (!this.isLocal) {
      try {
        await this.jobs?.runFor(agentId)
      } catch (error) {
        this.log.warn(`[embeddings] embedding queued rows of ${agentId} before a search failed:`, error)
      }
    }
    return this.vectors.searchIndex(agentId, kind, {
      // Read before anything else: a write while this runs changes it, and the next search looks again.
      writeVersion: this.writes ? this.writes.version(agentId) : null,
      ...(this.isLocal ? { catchUp: () => this.fill(agentId, kind) } : {}),
    })
  }

  /**
   * Per kind: how many owners there are, how many have a vector of the current model, and how many
   * are waiting in the job queue (queued) or gave up on it (failed): the rest of the gap.
   */
  async coverage(agentId: string | null): Promise<EmbeddingCoverage[]> {
    const jobs = (await this.jobs?.counts(agentId)) ?? new Map()
    const counted = await Promise.all(
      EMBEDDING_KINDS.map(async (kind) => ({
        kind,
        ...(await this.repository.coverage(agentId, kind, this.model)),
      })),
    )
    return counted.map((c) => ({ ...c, queued: 0, failed: 0, ...jobs.get(c.kind) }))
  }

  /**
   * At start: a re-embedding when vectors of another model are stored (the provider changed),
   * otherwise a job for every row that has no vector yet (written before the queue existed).
   */
  async catchUp(): Promise<{ reembedding: boolean; queued: number }> {
    if (await this.repository.hasOtherModels(this.model)) {
      this.reembed()
      return { reembedding: true, queued: 0 }
    }
    return { reembedding: false, queued: await this.enqueueMissing(null) }
  }

  /**
   * Re-embeds everything that has no vector of the current model (all of it after the provider
   * changed), in the background, publishing progress. Vectors of other models are removed once the
   * new model covers everything, so the two are never mixed. Returns the running job's state.
   */
  reembed(): EmbeddingProgressEvent {
    if (this.job) return this.progressState
    // Running from the start: the caller gets this state back before the total is counted.
    this.publish({
      model: this.model,
      state: 'running',
      total: 0,
      done: 0,
      failed: 0,
      startedAt: this.clock.now(),
      finishedAt: null,
      error: null,
    })
    this.job = this.runReembed().finally(() => {
      this.job = null
    })
    return this.progressState
  }

  /**
   * Resolves when this service's background work (re-embedding, index builds and saves) has
   * finished. Queued embed jobs are the job worker's: JobWorker.drain() runs them.
   */
  async settled(): Promise<void> {
    // A re-embedding stores vectors, which may start index builds; those may outlast it.
    do {
      while (this.job) await this.job
      await this.vectors.settled()
    } while (this.job)
  }

  /**
   * At shutdown: waits for a re-embedding, then lets the vector store abandon long index builds
   * (the next start begins them again) and persist unsaved changes, so the next start patches less.
   */
  async flush(): Promise<void> {
    while (this.job) await this.job
    await this.vectors.flush()
  }

  private async runReembed(): Promise<void> {
    let done = 0
    let failed = 0
    try {
      const coverage = await this.coverage(null)
      const total = coverage.reduce((sum, c) => sum + c.total - c.embedded, 0)
      this.publish({ ...this.progressState, total })
      for (const kind of EMBEDDING_KINDS) {
        let afterId = 0
        for (;;) {
          // Past the last batch in the query itself: rows that failed stay missing, and a page
          // filled with them would otherwise end the run early.
          const batch = await this.missing(null, kind, EMBEDDING_BATCH_SIZE * 4, afterId)
          if (batch.length === 0) break
          afterId = (batch.at(-1) as { id: number }).id
          const byAgent = new Map<string, { id: number; text: string }[]>()
          for (const owner of batch)
            byAgent.set(owner.agentId, [...(byAgent.get(owner.agentId) ?? []), owner])
          for (const [agentId, owners] of byAgent) {
            const stored = await this.store(agentId, kind, owners)
            done += stored
            failed += owners.length - stored
          }
          this.publish({ ...this.progressState, done, failed })
          if (failed > 0 && done === 0) break
        }
      }
      if (failed === 0) await this.repository.removeOtherModels(this.model)
      // What failed is retried by the job queue, with backoff, instead of by the next re-embed.
      else await this.enqueueMissing(null)
      this.publish({
        ...this.progressState,
        state: failed === 0 ? 'done' : 'failed',
        done,
        failed,
        finishedAt: this.clock.now(),
        error: failed === 0 ? null : `${failed} texts could not be embedded; they will be retried`,
      })
    } catch (error) {
      this.log.error('[embeddings] re-embedding failed:', error)
      this.publish({
        ...this.progressState,
        state: 'failed',
        finishedAt: this.clock.now(),
        error: error instanceof Error ? error.message : String(error),
      })
    }
  }

  private publish(event: EmbeddingProgressEvent): void {
    this.progressState = event
    this.events.publish('embedding:progress', event)
  }
}

function indexKey(agentId: string, kind: EmbeddingKind): string {
  return `${agentId}\u0000${kind}`
}

function idleProgress(model: string): EmbeddingProgressEvent {
  return {
    model,
    state: 'idle',
    total: 0,
    done: 0,
    failed: 0,
    startedAt: null,
    finishedAt: null,
    error: null,
  }
}
