import { createHash } from 'node:crypto'
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
import { type Database, directSqlite } from '../db/client.ts'
import type { EmbeddingProgressEvent, EngramPubSub } from '../pubsub.ts'
import { buildHnswInWorker } from '../vector/hnsw-build.ts'
import { type HnswConfig, HnswVectorIndex } from '../vector/hnsw-index.ts'
import type { AgentWrites } from './agent-writes.ts'
import type { Logger } from './optimizer-service.ts'

/** What gets a vector: long-term memory items, conversation messages, cross-session knowledge. */
export const EMBEDDING_KINDS = ['memory', 'message', 'knowledge'] as const
export type EmbeddingKind = (typeof EMBEDDING_KINDS)[number]

/** Rows embedded per batch: one embedder call and one transaction each. */
export const EMBEDDING_BATCH_SIZE = 256

export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
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
 * a text whose embedding fails is stored anyway and picked up by the next fill; search falls back
 * to keywords for whatever has no vector yet.
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
  private readonly pending = new Set<string>()
  private pendingTimer: ReturnType<typeof setTimeout> | null = null
  /** The background fill in flight (schedule), so settled() and close() can wait for it. */
  private filling: Promise<void> | null = null
  /**
   * Per agent and kind, the owner id up to which every owner has a vector: fill() looks only past
   * it instead of scanning every owner for a missing vector (ids are AUTOINCREMENT, never reused).
   */
  private readonly filledUpTo = new Map<string, number>()

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

  /** Vectors for texts, from the cache where present; null where the embedder failed. */
  async embedTexts(texts: readonly string[]): Promise<(Float32Array | null)[]> {
    if (texts.length === 0) return []
    // An in-process embedder is faster than the cache's round trip to the database.
    if (this.isLocal) return this.embedder.embed(texts)
    const hashes = texts.map(contentHash)
    const cached = await this.db.embeddingCache.findMany({
      where: { model: this.model, contentHash: { in: [...new Set(hashes)] } },
    })
    const byHash = new Map(cached.map((row) => [row.contentHash, bytesToVector(row.vector)]))
    const missing = [...new Set(hashes.filter((h) => !byHash.has(h)))]
    if (missing.length > 0) {
      const textOf = new Map(hashes.map((h, i) => [h, texts[i] as string]))
      try {
        const vectors = await this.embedder.embed(missing.map((h) => textOf.get(h) as string))
        const now = this.clock.now()
        const rows = missing.map((h, i) => {
          const vector = vectors[i] as Float32Array
          byHash.set(h, vector)
          return {
            model: this.model,
            contentHash: h,
            dimensions: vector.length,
            vector: vectorToBytes(vector) as Uint8Array<ArrayBuffer>,
            createdAt: now,
          }
        })
        await this.db.embeddingCache.createMany({ data: rows })
      } catch (error) {
        this.log.warn(`[embeddings] ${this.model} failed for ${missing.length} texts:`, error)
      }
    }
    return hashes.map((h) => byHash.get(h) ?? null)
  }

  /** A query's vector; null when the embedder fails (search then uses keywords only). */
  async embedQuery(text: string): Promise<Float32Array | null> {
    return (await this.embedTexts([text]))[0] ?? null
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
    const computed = await this.embedTexts(missing.map((o) => o.text))
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

  /** Forgets every in-memory index (after a restore or a bulk clear). */
  reset(agentId?: string): void {
    for (const [key, entry] of this.indexes) {
      if (agentId && !EMBEDDING_KINDS.some((kind) => key === indexKey(agentId, kind))) continue
      // A build of the old contents would only be thrown away.
      entry.index.abandonBuild()
      this.indexes.delete(key)
      this.filledUpTo.delete(key)
    }
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
   * a remote one is asked in the background and search uses what is there (keywords cover the rest).
   */
  async index(agentId: string, kind: EmbeddingKind): Promise<VectorIndex> {
    const key = indexKey(agentId, kind)
    // Read before anything else: a write while this runs changes it, and the next search looks again.
    const version = await this.changeVersion(agentId)
    const cached = this.indexes.get(key)
    // A remote provider may have failed earlier: every search asks for a background fill.
    if (!this.isLocal) this.schedule(agentId)
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
      loading = (async () => {
        const loaded =
          (await this.loadSaved(agentId, kind, rows)) ?? (await this.loadFromTable(agentId, kind))
        loaded.version = version
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
    // Readable where the agent id allows it; the hash keeps two ids that read alike apart.
    const readable = agentId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48)
    const agent = `${readable}~${contentHash(agentId).slice(0, 8)}`
    return path.join(directory, `${agent}-${kind}-${contentHash(this.model).slice(0, 12)}.hnsw`)
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

  /** Fills an agent's missing vectors soon, in the background (after writes, with a remote embedder). */
  schedule(agentId: string): void {
    this.pending.add(agentId)
    if (this.pendingTimer) return
    this.pendingTimer = setTimeout(() => void this.fillPending(), 50)
    this.pendingTimer.unref?.()
  }

  /** Runs the scheduled fills now, after the one in flight (if any). */
  private fillPending(): Promise<void> {
    if (this.pendingTimer) clearTimeout(this.pendingTimer)
    this.pendingTimer = null
    const agents = [...this.pending]
    this.pending.clear()
    const run = (this.filling ?? Promise.resolve()).then(async () => {
      for (const agent of agents) {
        for (const kind of EMBEDDING_KINDS) {
          try {
            await this.fill(agent, kind)
          } catch (error) {
            this.log.warn(`[embeddings] background fill for ${agent} failed:`, error)
          }
        }
      }
    })
    const tracked: Promise<void> = run.finally(() => {
      if (this.filling === tracked) this.filling = null
    })
    this.filling = tracked
    return tracked
  }

  /** Per kind: how many owners there are and how many have a vector of the current model. */
  async coverage(
    agentId: string | null,
  ): Promise<{ kind: EmbeddingKind; total: number; embedded: number }[]> {
    return Promise.all(
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

  /** Resolves when background work (re-embedding, scheduled fills, pending ones run now) has finished. */
  async settled(): Promise<void> {
    while (this.job || this.filling || this.pending.size > 0 || this.maintenance.size > 0) {
      if (this.pending.size > 0) await this.fillPending()
      await this.job
      await this.filling
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
