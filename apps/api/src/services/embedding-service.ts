import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {
  AdaptiveVectorIndex,
  bytesToVector,
  type Clock,
  DEFAULT_APPROXIMATE_ABOVE,
  type Embedder,
  type VectorIndex,
  vectorToBytes,
} from '@engram/core'
import type { AgentWrites } from '@engram/engine'
import {
  buildHnswInWorker,
  type Database,
  directSqlite,
  type HnswConfig,
  HnswVectorIndex,
  sqliteDate,
} from '@engram/store-sqlite'
import type { EmbeddingProgressEvent, EngramPubSub } from '../pubsub.ts'
import type { Logger } from './optimizer-service.ts'

/** What gets a vector: long-term memory items, conversation messages, cross-session knowledge. */
export const EMBEDDING_KINDS = ['memory', 'message', 'knowledge'] as const
export type EmbeddingKind = (typeof EMBEDDING_KINDS)[number]

/** Rows embedded per batch: one embedder call and one transaction each. */
export const EMBEDDING_BATCH_SIZE = 256

export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/**
 * The durable queue's side of embedding (apps/api/src/jobs/embed-jobs.ts): writes queue their rows
 * instead of embedding them in the request, and a search runs what its agent still has queued.
 */
export interface EmbeddingJobs {
  enqueue(agentId: string, kind: EmbeddingKind, ownerIds: readonly number[]): Promise<unknown>
  /** Queues every row (of an agent, or all) with no vector of the current model. */
  enqueueMissing(agentId: string | null): Promise<number>
  /** Runs the agent's due embedding jobs now; returns how many ran. */
  runFor(agentId: string): Promise<number>
  /** Embed jobs per kind of row: queued (pending or running) and dead-lettered. */
  counts(agentId: string | null): Promise<Map<EmbeddingKind, { queued: number; failed: number }>>
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

/** How each (agent, kind) vector index is kept: exact while small, HNSW above a size, saved. */
export interface VectorIndexOptions {
  /**
   * Folder for the saved HNSW graphs (`<agent>-<kind>-<model hash>.hnsw`), so a restart loads
   * instead of rebuilding; null keeps them in memory only.
   */
  directory: string | null
  /** More vectors than this in one (agent, kind): HNSW instead of the exact scan. */
  approximateAbove?: number
  hnsw?: Partial<HnswConfig>
}

/**
 * Share of a saved graph that may have changed (vectors replaced, added or removed) for it to be
 * patched rather than rebuilt. Patching costs about one insert per change, the same as building,
 * and many deletions leave the graph full of tombstones that searches must walk through.
 */
const PATCHABLE_SHARE = 0.5

/** Vectors read per query when patching a loaded graph. */
const PATCH_BATCH = 500

/** Cache rows per INSERT statement (5 parameters each). */
const CACHE_INSERT_ROWS = 200

/** Unsaved changes to an HNSW index, as a share of its size, that trigger a save. */
const SAVE_AFTER_SHARE = 0.05

interface KindIndex {
  key: string
  index: AdaptiveVectorIndex
  /** Embedding rows of this agent, kind and model when the index was last brought up to date. */
  rows: number
  /** Where its HNSW graph is saved; null when not persisted. */
  file: string | null
  /** Changes since the graph was last saved (a reload patches them in from the table). */
  unsaved: number
  /** What changeVersion() said then: while it says the same, nothing can have changed. */
  version: string | null
}

/** The text a kind's owner is embedded from. */
const OWNER_TEXT: Record<EmbeddingKind, string> = {
  memory: `SELECT o."id" AS id, o."content" AS text FROM "MemoryItem" o`,
  message: `SELECT o."id" AS id, o."content" AS text FROM "Message" o`,
  knowledge: `SELECT o."id" AS id, o."key" || ': ' || o."value" AS text FROM "Knowledge" o`,
}
const OWNER_TABLE: Record<EmbeddingKind, string> = {
  memory: 'MemoryItem',
  message: 'Message',
  knowledge: 'Knowledge',
}

/**
 * Vectors for everything searchable, persisted per model (table "Embedding") with a cache by
 * content hash, and kept in memory per agent and kind for search. Embedding never blocks a write:
 * writes queue an embed job (durable, retried with backoff) and the job worker embeds them in
 * batches; a search first runs what its agent still has queued, and falls back to keywords for
 * whatever has no vector yet (a provider outage).
 */
export class EmbeddingService {
  private readonly indexes = new Map<string, KindIndex>()
  /** Background index builds and saves, so settled() can wait for them. */
  private readonly maintenance = new Set<Promise<void>>()
  private readonly loading = new Map<string, Promise<KindIndex>>()
  /** The HNSW build running on its worker thread, if any: the next one starts after it. */
  private builds: Promise<void> = Promise.resolve()
  private progressState: EmbeddingProgressEvent
  private job: Promise<void> | null = null
  /** The job queue, once services are wired (null: writes are embedded by search fills only). */
  private jobs: EmbeddingJobs | null = null
  /**
   * Per agent and kind, the owner id up to which every owner has a vector: fill() looks only past
   * it instead of scanning every owner for a missing vector (ids are AUTOINCREMENT, never reused).
   */
  private readonly filledUpTo = new Map<string, number>()
  /** Bumped by reset(): an index loaded across a reset is not kept. */
  private generation = 0

  constructor(
    private readonly db: Database,
    readonly embedder: Embedder,
    private readonly clock: Clock,
    private readonly pubsub: EngramPubSub,
    private readonly log: Logger = console,
    private readonly vectorOptions: VectorIndexOptions = { directory: null },
    private readonly writes?: AgentWrites,
  ) {
    this.progressState = idleProgress(embedder.model)
  }

  /**
   * Changes when anything may have changed an agent's owners or vectors: any write through the API
   * for the agent (its write counter), or a commit by another connection (SQLite's data_version).
   * Null when it cannot tell (no direct connection, no write counter).
   */
  private async changeVersion(agentId: string): Promise<string | null> {
    const direct = directSqlite(this.db)
    if (!direct || !this.writes) return null
    const row = await direct.get<{ data_version: number }>('PRAGMA data_version')
    return `${this.writes.version(agentId)}|${row?.data_version}`
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

  /**
   * An embedder that computes in-process (the offline default) is cheap enough to bring vectors up
   * to date inside a search; a remote one is filled in the background instead.
   */
  get isLocal(): boolean {
    return 'embedOne' in this.embedder
  }

  get progress(): EmbeddingProgressEvent {
    return this.progressState
  }

  /**
   * Vectors for an agent's texts, from its cache where present; null where the embedder failed.
   * The cache is the agent's own: it goes with the agent's data, and whether a text is cached
   * (how fast it comes back) says nothing about what other agents wrote.
   */
  async embedTexts(agentId: string, texts: readonly string[]): Promise<(Float32Array | null)[]> {
    return (await this.embedTextsReporting(texts.map((text) => ({ agentId, text })))).vectors
  }

  /**
   * embedTexts for texts of several agents at once (one provider call for the embed jobs' batch),
   * and why the provider failed (null when it did not).
   */
  private async embedTextsReporting(
    items: readonly { agentId: string; text: string }[],
  ): Promise<{ vectors: (Float32Array | null)[]; error: string | null }> {
    if (items.length === 0) return { vectors: [], error: null }
    // An in-process embedder is faster than the cache's round trip to the database.
    if (this.isLocal) return { vectors: await this.embedder.embed(items.map((i) => i.text)), error: null }
    let error: string | null = null
    const hashes = items.map((item) => contentHash(item.text))
    const keys = items.map((item, i) => `${item.agentId}\u0000${hashes[i]}`)
    const byKey = new Map<string, Float32Array>()
    const hashesOf = new Map<string, Set<string>>()
    items.forEach((item, i) => {
      const set = hashesOf.get(item.agentId) ?? new Set<string>()
      set.add(hashes[i] as string)
      hashesOf.set(item.agentId, set)
    })
    for (const [agentId, agentHashes] of hashesOf) {
      const cached = await this.db.embeddingCache.findMany({
        where: { agentId, model: this.model, contentHash: { in: [...agentHashes] } },
      })
      for (const row of cached) byKey.set(`${agentId}\u0000${row.contentHash}`, bytesToVector(row.vector))
    }
    const missing = [...new Set(keys.filter((k) => !byKey.has(k)))]
    if (missing.length > 0) {
      const textOf = new Map(keys.map((k, i) => [k, (items[i] as { text: string }).text]))
      try {
        const vectors = await this.embedder.embed(missing.map((k) => textOf.get(k) as string))
        const now = this.clock.now()
        const rows = missing.map((k, i) => {
          const [agentId, hash] = k.split('\u0000') as [string, string]
          const vector = vectors[i] as Float32Array
          byKey.set(k, vector)
          return {
            agentId,
            model: this.model,
            contentHash: hash,
            dimensions: vector.length,
            vector: vectorToBytes(vector) as Uint8Array<ArrayBuffer>,
            createdAt: now,
          }
        })
        await this.cacheVectors(rows)
      } catch (failure) {
        error = failure instanceof Error ? failure.message : String(failure)
        this.log.warn(`[embeddings] ${this.model} failed for ${missing.length} texts:`, failure)
      }
    }
    return { vectors: keys.map((k) => byKey.get(k) ?? null), error }
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
      const rows = await this.db.$queryRawUnsafe<
        { id: number | bigint; agentId: string; text: string; embeddedHash: string | null }[]
      >(
        `${OWNER_TEXT[kind].replace('SELECT ', 'SELECT o."agentId" AS agentId, e."contentHash" AS embeddedHash, ')}
          LEFT JOIN "Embedding" e ON e."kind" = ? AND e."ownerId" = o."id" AND e."model" = ?
          WHERE o."id" IN (${ofKind.map(() => '?').join(', ')})`,
        kind,
        this.model,
        ...ofKind.map((o) => o.ownerId),
      )
      const byId = new Map(rows.map((row) => [Number(row.id), row]))
      for (const owner of ofKind) {
        const row = byId.get(owner.ownerId)
        if (!row || row.agentId !== owner.agentId) continue
        if (row.embeddedHash === contentHash(row.text)) continue
        todo.push({ owner, text: row.text })
      }
    }
    if (todo.length === 0) return failed
    const { vectors, error } = await this.embedTextsReporting(
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

  /**
   * Adds vectors to the cache. Two embeddings of the same text may finish at once (a job and a
   * re-embedding, two servers): the second insert of a hash is ignored, and a failed cache write
   * only costs a later recomputation, never the vectors just computed.
   */
  private async cacheVectors(
    rows: {
      agentId: string
      model: string
      contentHash: string
      dimensions: number
      vector: Uint8Array
      createdAt: Date
    }[],
  ): Promise<void> {
    try {
      for (let start = 0; start < rows.length; start += CACHE_INSERT_ROWS) {
        const chunk = rows.slice(start, start + CACHE_INSERT_ROWS)
        await this.db.$executeRawUnsafe(
          `INSERT OR IGNORE INTO "EmbeddingCache" ("agentId", "model", "contentHash", "dimensions", "vector", "createdAt")
            VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
          ...chunk.flatMap((row) => [
            row.agentId,
            row.model,
            row.contentHash,
            row.dimensions,
            row.vector,
            sqliteDate(row.createdAt),
          ]),
        )
      }
    } catch (error) {
      this.log.warn(`[embeddings] caching ${rows.length} vectors failed:`, error)
    }
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
    const vectors = owners.map((o) => o.vector ?? byOwner.get(o) ?? null)
    const now = this.clock.now()
    const embedded = owners.flatMap((owner, i) => {
      const vector = vectors[i]
      return vector ? [{ owner, vector }] : []
    })
    const rows = embedded.map(({ owner, vector }) => ({
      kind,
      ownerId: owner.id,
      agentId,
      model: this.model,
      dimensions: vector.length,
      vector: vectorToBytes(vector) as Uint8Array<ArrayBuffer>,
      contentHash: contentHash(owner.text),
      createdAt: now,
    }))
    if (rows.length === 0) return 0
    await this.db.$transaction([
      this.db.embedding.deleteMany({
        where: { kind, model: this.model, ownerId: { in: rows.map((r) => r.ownerId) } },
      }),
      this.db.embedding.createMany({ data: rows }),
    ])
    const cached = this.indexes.get(indexKey(agentId, kind))
    if (cached) {
      // Keep the in-memory index in step; `rows` tells the next search nothing was missed.
      cached.version = null
      const before = cached.index.size
      for (const [i, { owner, vector }] of embedded.entries())
        cached.index.upsert(String(owner.id), vector, rows[i]?.contentHash)
      cached.rows += cached.index.size - before
      this.changed(cached, embedded.length)
    }
    return rows.length
  }

  /** Drops owners' vectors from the in-memory index (their rows go with them by trigger). */
  forget(agentId: string, kind: EmbeddingKind, ownerIds: readonly (number | string)[]): void {
    const cached = this.indexes.get(indexKey(agentId, kind))
    if (!cached) return
    let removed = 0
    for (const id of ownerIds) if (cached.index.remove(String(id))) removed++
    cached.rows -= removed
    this.changed(cached, removed)
  }

  /**
   * Forgets an agent's in-memory indexes (every agent's when none is named) after its rows were
   * deleted or replaced (a deleted agent, a restore, a clear): nothing of them may serve a search
   * again, nor be saved by a build or a flush still under way.
   */
  reset(agentId?: string): void {
    this.generation++
    for (const [key, entry] of this.indexes) {
      if (agentId && !EMBEDDING_KINDS.some((kind) => key === indexKey(agentId, kind))) continue
      // A build of the old contents would only be thrown away.
      entry.index.abandonBuild()
      this.indexes.delete(key)
    }
    for (const key of this.filledUpTo.keys())
      if (!agentId || EMBEDDING_KINDS.some((kind) => key === indexKey(agentId, kind)))
        this.filledUpTo.delete(key)
  }

  /** In-memory vector indexes held for an agent (its queued embed jobs are rows of "Job"). */
  held(agentId: string): { indexes: number } {
    const ours = (key: string) => EMBEDDING_KINDS.some((kind) => key === indexKey(agentId, kind))
    return { indexes: [...this.indexes.keys(), ...this.loading.keys()].filter(ours).length }
  }

  /** The agent's saved graph files (manifests and graphs, of any model) in the vector folder. */
  files(agentId: string): string[] {
    const { directory } = this.vectorOptions
    if (!directory) return []
    const prefix = `${agentFilePrefix(agentId)}-`
    return listFolder(directory)
      .filter((name) => name.startsWith(prefix))
      .map((name) => path.join(directory, name))
  }

  /** Removes the agent's saved graphs (every agent's when none is named). Returns how many files. */
  removeFiles(agentId?: string): number {
    const { directory } = this.vectorOptions
    if (!directory) return 0
    const doomed = agentId
      ? this.files(agentId)
      : listFolder(directory).map((name) => path.join(directory, name))
    for (const file of doomed) fs.rmSync(file, { force: true })
    return doomed.length
  }

  /**
   * At start: removes saved graphs of agents that no longer exist (deleted while a graph was being
   * written, or by a server without this sweep), so a deleted agent's vectors never come back.
   */
  removeOrphanFiles(agentIds: readonly string[]): number {
    const { directory } = this.vectorOptions
    if (!directory) return 0
    const owned = agentIds.map((id) => `${agentFilePrefix(id)}-`)
    const orphans = listFolder(directory).filter((name) => !owned.some((prefix) => name.startsWith(prefix)))
    for (const name of orphans) fs.rmSync(path.join(directory, name), { force: true })
    return orphans.length
  }

  /** Owners of a kind that have no vector of the current model yet (ids after afterId). */
  async missing(
    agentId: string | null,
    kind: EmbeddingKind,
    limit: number,
    afterId = 0,
  ): Promise<{ id: number; agentId: string; text: string }[]> {
    return this.db.$queryRawUnsafe<{ id: number; agentId: string; text: string }[]>(
      `${OWNER_TEXT[kind].replace('SELECT ', 'SELECT o."agentId" AS agentId, ')}
        WHERE ${agentId ? 'o."agentId" = ? AND ' : ''}o."id" > ? AND NOT EXISTS (
          SELECT 1 FROM "Embedding" e WHERE e."kind" = ? AND e."ownerId" = o."id" AND e."model" = ?)
        ORDER BY o."id" LIMIT ?`,
      ...[...(agentId ? [agentId] : []), afterId, kind, this.model, limit],
    )
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
  async index(agentId: string, kind: EmbeddingKind): Promise<VectorIndex> {
    const key = indexKey(agentId, kind)
    // What the agent wrote and the worker has not embedded yet is embedded first, so a search
    // finds what was just written (a local embedder fills below, from the table, anyway).
    if (!this.isLocal) {
      try {
        await this.jobs?.runFor(agentId)
      } catch (error) {
        this.log.warn(`[embeddings] embedding queued rows of ${agentId} before a search failed:`, error)
      }
    }
    // Read before anything else: a write while this runs changes it, and the next search looks again.
    const version = await this.changeVersion(agentId)
    const cached = this.indexes.get(key)
    // Nothing written since the index was checked: no fill to do, no count to take.
    if (cached && version !== null && cached.version === version) return cached.index
    if (this.isLocal) await this.fill(agentId, kind)
    const rows = await this.db.embedding.count({ where: { agentId, kind, model: this.model } })
    if (cached && cached.rows === rows && cached.index.size === rows) {
      cached.version = version
      return cached.index
    }
    // Written or deleted elsewhere (another process, a restore, cascades), or not loaded yet. One
    // load per index at a time: two concurrent searches must not build two graphs.
    let loading = this.loading.get(key)
    if (!loading) {
      const generation = this.generation
      loading = (async () => {
        const loaded =
          (await this.loadSaved(agentId, kind, rows)) ?? (await this.loadFromTable(agentId, kind))
        loaded.version = version
        // A reset while this loaded (the agent deleted, a restore) leaves it to this search alone.
        if (generation !== this.generation) return loaded
        this.indexes.set(key, loaded)
        this.maintain(loaded)
        return loaded
      })().finally(() => this.loading.delete(key))
      this.loading.set(key, loading)
    }
    return (await loading).index
  }

  /** The (agent, kind) index, exact, from every vector row. */
  private async loadFromTable(agentId: string, kind: EmbeddingKind): Promise<KindIndex> {
    const file = this.indexFile(agentId, kind)
    const index = this.newIndex(file)
    let rows = 0
    const direct = directSqlite(this.db)
    if (direct) {
      // Streamed: all rows at once would hold every vector twice more (the row buffers, ~1.5 KB
      // each), and the allocator keeps that peak as resident memory long after (bench: load, RSS).
      rows = await direct.forEachRow<{ ownerId: number; vector: Uint8Array; contentHash: string }>(
        `SELECT "ownerId", "vector", "contentHash" FROM "Embedding" WHERE "agentId" = ? AND "kind" = ? AND "model" = ?`,
        [agentId, kind, this.model],
        (row) => index.upsert(String(row.ownerId), bytesToVector(row.vector), row.contentHash),
      )
    } else {
      const stored = await this.db.embedding.findMany({
        where: { agentId, kind, model: this.model },
        select: { ownerId: true, vector: true, contentHash: true },
      })
      for (const row of stored) index.upsert(String(row.ownerId), bytesToVector(row.vector), row.contentHash)
      rows = stored.length
    }
    return { key: indexKey(agentId, kind), index, rows, file, unsaved: 0, version: null }
  }

  /**
   * The saved HNSW graph, patched to match the table: vectors whose row is gone are removed, rows
   * with no vector in the graph or another content hash are read and inserted. Null (rebuild from
   * the table) when nothing usable is saved, the index would be exact anyway, or too much changed.
   */
  private async loadSaved(agentId: string, kind: EmbeddingKind, rows: number): Promise<KindIndex | null> {
    const file = this.indexFile(agentId, kind)
    if (!file || rows <= this.approximateAbove) return null
    const graph = await HnswVectorIndex.load(file, this.vectorOptions.hnsw)
    if (!graph) return null
    const where = { agentId, kind, model: this.model }
    const current = await this.db.embedding.findMany({ where, select: { ownerId: true, contentHash: true } })
    const wanted = new Map(current.map((row) => [String(row.ownerId), row.contentHash]))
    const gone = [...graph.stampEntries()].filter(([id]) => !wanted.has(id)).map(([id]) => id)
    const stale = [...wanted].filter(([id, hash]) => graph.stampOf(id) !== hash).map(([id]) => Number(id))
    const changes = gone.length + stale.length
    if (changes > current.length * PATCHABLE_SHARE || graph.deletedCount + gone.length > current.length) {
      this.log.info(`[embeddings] ${path.basename(file)}: ${changes} changes since saved, rebuilding`)
      return null
    }
    for (const id of gone) graph.remove(id)
    for (let start = 0; start < stale.length; start += PATCH_BATCH) {
      const batch = await this.db.embedding.findMany({
        where: { ...where, ownerId: { in: stale.slice(start, start + PATCH_BATCH) } },
        select: { ownerId: true, vector: true, contentHash: true },
      })
      for (const row of batch) graph.upsert(String(row.ownerId), bytesToVector(row.vector), row.contentHash)
    }
    const index = this.newIndex(file, graph)
    return { key: indexKey(agentId, kind), index, rows: index.size, file, unsaved: changes, version: null }
  }

  private newIndex(file: string | null, approximate?: HnswVectorIndex): AdaptiveVectorIndex {
    const hnsw = this.vectorOptions.hnsw ?? {}
    return new AdaptiveVectorIndex({
      createApproximate: () => new HnswVectorIndex(hnsw),
      // Off the event loop, one build at a time (each holds its vectors twice while it runs); the
      // graph lands saved at `file`.
      buildApproximate: (snapshot, signal) => {
        const build = this.builds.then(() => buildHnswInWorker(snapshot, signal, { hnsw, file }))
        this.builds = build.then(
          () => undefined,
          () => undefined,
        )
        return build
      },
      // Between build batches, requests get their turn.
      pause: () => new Promise((resolve) => setImmediate(resolve)),
      ...(approximate ? { approximate } : {}),
      config: { approximateAbove: this.approximateAbove },
    })
  }

  private get approximateAbove(): number {
    return this.vectorOptions.approximateAbove ?? DEFAULT_APPROXIMATE_ABOVE
  }

  private indexFile(agentId: string, kind: EmbeddingKind): string | null {
    const { directory } = this.vectorOptions
    if (!directory) return null
    return path.join(
      directory,
      `${agentFilePrefix(agentId)}-${kind}-${contentHash(this.model).slice(0, 12)}.hnsw`,
    )
  }

  /** Counts changes to a cached index and saves its graph when enough piled up. */
  private changed(entry: KindIndex, changes: number): void {
    if (changes === 0) return
    entry.unsaved += changes
    this.maintain(entry)
  }

  /**
   * In the background: moves the index to exact or HNSW as its size calls for, and saves the graph
   * after a patch or once unsaved changes pass SAVE_AFTER_SHARE of it (a build saves its own).
   */
  private maintain(entry: KindIndex): void {
    const run = entry.index
      .maintain()
      .then((built) => {
        // A build saved its graph on its own thread (buildHnswInWorker); the few writes caught up
        // since are patched from the table by the next load, like any unsaved change.
        if (built) entry.unsaved = 0
        else if (entry.unsaved >= Math.max(1, entry.index.size * SAVE_AFTER_SHARE)) this.save(entry)
      })
      .catch((error) => this.log.warn(`[embeddings] vector index maintenance failed:`, error))
    const tracked: Promise<void> = run.finally(() => this.maintenance.delete(tracked))
    this.maintenance.add(tracked)
  }

  /** Writes the graph of an HNSW-backed index that is still current; exact ones are not saved. */
  private save(entry: KindIndex): void {
    const graph = entry.index.active
    if (!entry.file || this.indexes.get(entry.key) !== entry || !(graph instanceof HnswVectorIndex)) return
    if (entry.unsaved === 0) return
    graph.save(entry.file)
    entry.unsaved = 0
  }

  /**
   * Per kind: how many owners there are, how many have a vector of the current model, and how many
   * are waiting in the job queue (queued) or gave up on it (failed): the rest of the gap.
   */
  async coverage(agentId: string | null): Promise<EmbeddingCoverage[]> {
    const jobs = (await this.jobs?.counts(agentId)) ?? new Map()
    const counted = await Promise.all(
      EMBEDDING_KINDS.map(async (kind) => {
        const where = agentId ? `WHERE o."agentId" = ?` : ''
        const [row] = await this.db.$queryRawUnsafe<{ total: number; embedded: number }[]>(
          `SELECT COUNT(*) AS total, COUNT(e."ownerId") AS embedded FROM "${OWNER_TABLE[kind]}" o
             LEFT JOIN "Embedding" e ON e."kind" = ? AND e."ownerId" = o."id" AND e."model" = ?
             ${where}`,
          ...[kind, this.model, ...(agentId ? [agentId] : [])],
        )
        return { kind, total: Number(row?.total ?? 0), embedded: Number(row?.embedded ?? 0) }
      }),
    )
    return counted.map((c) => ({ ...c, queued: 0, failed: 0, ...jobs.get(c.kind) }))
  }

  /**
   * At start: a re-embedding when vectors of another model are stored (the provider changed),
   * otherwise a job for every row that has no vector yet (written before the queue existed).
   */
  async catchUp(): Promise<{ reembedding: boolean; queued: number }> {
    const otherModel = await this.db.embedding.findFirst({
      where: { model: { not: this.model } },
      select: { kind: true },
    })
    if (otherModel) {
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
    while (this.job || this.maintenance.size > 0) {
      await this.job
      await Promise.all([...this.maintenance])
    }
  }

  /**
   * At shutdown: abandons HNSW builds in progress (a 1M-vector build takes many minutes; the next
   * start begins it again), waits for the rest of the background work, and saves every graph with
   * unsaved changes, so the next start patches less.
   */
  async flush(): Promise<void> {
    for (const entry of this.indexes.values()) entry.index.abandonBuild()
    await this.settled()
    for (const entry of this.indexes.values()) {
      try {
        this.save(entry)
      } catch (error) {
        this.log.warn(`[embeddings] saving ${entry.file} failed:`, error)
      }
    }
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
      if (failed === 0) await this.db.embedding.deleteMany({ where: { model: { not: this.model } } })
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
    this.pubsub.publish('embedding:progress', event)
  }
}

/**
 * How an agent's saved graphs are named: readable where the agent id allows it; the hash keeps two
 * ids that read alike apart, and tells an agent's files from every other agent's.
 */
function agentFilePrefix(agentId: string): string {
  const readable = agentId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48)
  return `${readable}~${contentHash(agentId).slice(0, 8)}`
}

function listFolder(directory: string): string[] {
  try {
    return fs.readdirSync(directory)
  } catch {
    return []
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
