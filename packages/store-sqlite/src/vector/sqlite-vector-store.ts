import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {
  AdaptiveVectorIndex,
  bytesToVector,
  type Clock,
  DEFAULT_APPROXIMATE_ABOVE,
  type SlotPostingsConfig,
  SlotPostingsIndex,
  ValidationError,
  type VectorIndex,
  type VectorScanConfig,
  vectorToBytes,
} from '@engram/core'
import {
  assertDimensions,
  type Logger,
  type SearchableVectors,
  type SearchIndexOptions,
  type StoredVector,
  type VectorHit,
  type VectorStore,
} from '@engram/engine'
import { type Database, directSqlite, readRows, sqliteDate } from '../db/client.ts'
import { parseRowId } from '../mappers.ts'
import { buildHnswInWorker } from './hnsw-build.ts'
import { type HnswConfig, HnswVectorIndex } from './hnsw-index.ts'

/** How each (agent, kind) vector index is kept: exact while small, HNSW above a size, saved. */
export interface VectorIndexOptions {
  /**
   * Folder for the saved HNSW graphs (`<agent>-<kind>-<model hash>.hnsw`), so a restart loads
   * instead of rebuilding; null keeps them in memory only.
   */
  directory: string | null
  /** More vectors than this in one (agent, kind): HNSW instead of the exact scan. */
  approximateAbove?: number
  /**
   * Which approximate index takes over above `approximateAbove`. `slot-postings` (an inverted
   * index over the hashed dimensions, rebuilt in memory from the table, never saved) holds recall
   * on the offline hashing embedder's vectors at far less cost than HNSW there (bench: vector,
   * "offline embedder" rows); `hnsw` suits dense neural embeddings, where it reaches recall@10
   * 0.99 at efSearch 24-96. `auto` (default): slot postings for the hashing embedder's models
   * (`engram-hashing-…`), HNSW for every other model.
   */
  approximateIndex?: ApproximateIndexKind
  hnsw?: Partial<HnswConfig>
  slotPostings?: Partial<SlotPostingsConfig>
  /**
   * How the exact scans run: the WebAssembly SIMD kernel (`kernel: 'auto'`, or `'javascript'`
   * never) from `kernelAbove` vectors in one index (ENGRAM_VECTOR_KERNEL_ABOVE; core's
   * DEFAULT_KERNEL_ABOVE, 1,024, when absent).
   */
  scan?: Partial<VectorScanConfig>
}

export type ApproximateIndexKind = 'auto' | 'hnsw' | 'slot-postings'

/** The index `auto` picks for a model: slot postings for the offline hashing embedder's vectors. */
export function approximateIndexFor(
  model: string,
  kind: ApproximateIndexKind = 'auto',
): 'hnsw' | 'slot-postings' {
  if (kind !== 'auto') return kind
  return model.startsWith('engram-hashing-') ? 'slot-postings' : 'hnsw'
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

/** The rows of one upsert, as written to the `Embedding` table. */
export interface EmbeddingRowWrite {
  kind: string
  ownerId: number
  agentId: string
  model: string
  dimensions: number
  vector: Uint8Array<ArrayBuffer>
  contentHash: string
  createdAt: Date
}

/** A statement the Prisma write path runs in the upsert's transaction (see `alsoWritten`). */
export type EmbeddingWriteStatement = ReturnType<Database['$executeRawUnsafe']>

/** Rows per upsert statement (8 parameters each: within every server's parameter limit). */
const UPSERT_CHUNK = 500

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

/**
 * The VectorStore port on the `Embedding` table: rows are the durable copy (keyed by kind, owner
 * row id and model), and an index per (agent, kind) loaded on first search is kept in step with
 * this process's writes: an exact scan while small, an HNSW graph (built off the event loop and
 * saved beside the database, so a restart loads and patches it instead of rebuilding) above
 * `approximateAbove`. Ids are the owners' row ids, unique across agents, as the table's key
 * requires. `model` separates the vectors of two embedders (they are never compared).
 */
export class SqliteVectorStore implements VectorStore {
  private readonly indexes = new Map<string, KindIndex>()
  /** Background index builds and saves, so settled() can wait for them. */
  private readonly maintenance = new Set<Promise<void>>()
  private readonly loading = new Map<string, Promise<KindIndex>>()
  /** The HNSW build running on its worker thread, if any: the next one starts after it. */
  private builds: Promise<void> = Promise.resolve()
  /** Bumped by reset(): an index loaded across a reset is not kept. */
  private generation = 0

  constructor(
    protected readonly db: Database,
    private readonly clock: Clock,
    readonly model: string,
    private readonly options: VectorIndexOptions = { directory: null },
    protected readonly log: Logger = console,
  ) {}

  async upsert(agentId: string, kind: string, vectors: readonly StoredVector[]): Promise<void> {
    if (vectors.length === 0) return
    const cached = this.indexes.get(this.key(agentId, kind))
    // The index in memory knows the dimensions without a query.
    const expected =
      (cached && cached.index.size > 0 ? cached.index.dimensions : await this.dimensions(agentId, kind)) ??
      vectors[0]?.vector.length ??
      null
    // Checked before the first write, so a bad batch changes nothing.
    for (const { vector } of vectors) assertDimensions(expected, vector)
    const createdAt = this.clock.now()
    const rows: EmbeddingRowWrite[] = vectors.map(({ id, vector, contentHash }) => ({
      kind,
      ownerId: this.ownerId(id),
      agentId,
      model: this.model,
      dimensions: vector.length,
      vector: vectorToBytes(vector) as Uint8Array<ArrayBuffer>,
      contentHash: contentHash ?? '',
      createdAt,
    }))
    const direct = directSqlite(this.db)
    if (direct) {
      // Every stored memory, message and summary comes here: cached prepared statements in one
      // group-committed write, not a Prisma transaction of two compiled queries each time.
      const at = sqliteDate(createdAt)
      await direct.write((sql) => {
        sql.run(
          `DELETE FROM "Embedding" WHERE "kind" = ? AND "model" = ? AND "ownerId" IN (SELECT value FROM json_each(?))`,
          kind,
          this.model,
          JSON.stringify(rows.map((r) => r.ownerId)),
        )
        for (const row of rows)
          sql.run(
            `INSERT INTO "Embedding" ("kind", "ownerId", "agentId", "model", "dimensions", "vector", "contentHash", "createdAt")
              VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
            row.kind,
            row.ownerId,
            row.agentId,
            row.model,
            row.dimensions,
            Buffer.from(row.vector.buffer, row.vector.byteOffset, row.vector.byteLength),
            row.contentHash,
            at,
          )
      })
    } else {
      // One multi-row upsert per batch. On a server with concurrent writers (Postgres, READ
      // COMMITTED) a delete-then-insert lets two writes of one owner's vector both insert, and one
      // fails on the key; an upsert on the key cannot (the later write wins, as on SQLite).
      const unique = [...new Map(rows.map((r) => [`${r.kind}\u0000${r.ownerId}`, r])).values()]
      const statements: EmbeddingWriteStatement[] = []
      for (let at = 0; at < unique.length; at += UPSERT_CHUNK) {
        const chunk = unique.slice(at, at + UPSERT_CHUNK)
        statements.push(
          this.db.$executeRawUnsafe(
            `INSERT INTO "Embedding" ("kind", "ownerId", "agentId", "model", "dimensions", "vector", "contentHash", "createdAt")
              VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}
              ON CONFLICT ("kind", "ownerId", "model") DO UPDATE SET "agentId" = excluded."agentId",
                "dimensions" = excluded."dimensions", "vector" = excluded."vector",
                "contentHash" = excluded."contentHash", "createdAt" = excluded."createdAt"`,
            ...chunk.flatMap((r) => [
              r.kind,
              r.ownerId,
              r.agentId,
              r.model,
              r.dimensions,
              r.vector,
              r.contentHash,
              r.createdAt,
            ]),
          ),
        )
      }
      await this.db.$transaction([...statements, ...this.alsoWritten(rows)])
    }
    if (cached) {
      // Keep the in-memory index in step; `rows` tells the next search nothing was missed.
      cached.version = null
      const before = cached.index.size
      for (const [i, { id, vector }] of vectors.entries())
        cached.index.upsert(id, vector, rows[i]?.contentHash)
      cached.rows += cached.index.size - before
      this.changed(cached, vectors.length)
    }
  }

  async remove(agentId: string, kind: string, ids: readonly string[]): Promise<number> {
    const ownerIds = ids.flatMap((id) => parseRowId(id) ?? [])
    const { count } = await this.db.embedding.deleteMany({
      where: { agentId, kind, model: this.model, ownerId: { in: ownerIds } },
    })
    this.forget(agentId, kind, ids)
    return count
  }

  async topK(agentId: string, kind: string, query: Float32Array, limit: number): Promise<VectorHit[]> {
    const index = await this.heldIndex(agentId, kind, { writeVersion: null })
    if (index.size === 0) return []
    assertDimensions(index.dimensions, query, 'query')
    return index.search(query, limit)
  }

  async count(agentId: string, kind: string): Promise<number> {
    return this.db.embedding.count({ where: { agentId, kind, model: this.model } })
  }

  async dimensions(agentId: string, kind: string): Promise<number | null> {
    // Asked before each write whose index is not in memory (an agent's messages are seldom
    // searched): a prepared statement.
    const [row] = await readRows<{ dimensions: number | bigint }[]>(
      this.db,
      `SELECT "dimensions" AS dimensions FROM "Embedding" WHERE "agentId" = ? AND "kind" = ? AND "model" = ? LIMIT 1`,
      agentId,
      kind,
      this.model,
    )
    return row ? Number(row.dimensions) : null
  }

  forget(agentId: string, kind: string, ids: readonly string[]): void {
    const cached = this.indexes.get(this.key(agentId, kind))
    if (!cached) return
    let removed = 0
    for (const id of ids) if (cached.index.remove(id)) removed++
    cached.rows -= removed
    this.changed(cached, removed)
  }

  reset(agentId?: string): void {
    this.generation++
    for (const [key, entry] of this.indexes) {
      if (agentId !== undefined && !key.startsWith(`${agentId}\u0000`)) continue
      // A build of the old contents would only be thrown away.
      entry.index.abandonBuild()
      this.indexes.delete(key)
    }
  }

  /**
   * Maintenance (issue 17 §4): the held indexes whose deleted entries reached `share` of their
   * live size are dropped with their saved graphs, so the next search builds them afresh from the
   * table. A dry run only counts them.
   */
  dropSparseIndexes(share: number, dryRun: boolean): { held: number; rebuilt: number } {
    let rebuilt = 0
    for (const [key, entry] of this.indexes) {
      const deleted = entry.index.deletedCount
      if (deleted === 0 || deleted < share * Math.max(1, entry.index.size)) continue
      rebuilt++
      if (dryRun) continue
      entry.index.abandonBuild()
      this.indexes.delete(key)
      if (entry.file) fs.rmSync(entry.file, { force: true })
    }
    return { held: this.indexes.size, rebuilt }
  }

  /** Forgets loaded indexes (another process wrote, or rows were deleted in bulk). */
  invalidate(agentId: string | null): void {
    this.reset(agentId ?? undefined)
  }

  /**
   * What operators watch of this process's loaded indexes (issue 17's metrics), summed over every
   * agent and kind so no id becomes a label: indexes, their entries, how many are HNSW graphs, and
   * the deleted elements those graphs still walk through (a rebuild drops them).
   */
  indexState(): { indexes: number; entries: number; approximate: number; deleted: number } {
    let entries = 0
    let approximate = 0
    let deleted = 0
    for (const { index } of this.indexes.values()) {
      entries += index.size
      if (index.mode === 'approximate') {
        approximate++
        const active = index.active as { deletedCount?: number }
        deleted += active.deletedCount ?? 0
      }
    }
    return { indexes: this.indexes.size, entries, approximate, deleted }
  }

  held(agentId: string): number {
    const prefix = `${agentId}\u0000`
    return [...this.indexes.keys(), ...this.loading.keys()].filter((key) => key.startsWith(prefix)).length
  }

  /** The agent's saved graph files (manifests and graphs, of any model) in the vector folder. */
  persisted(agentId: string): string[] {
    const { directory } = this.options
    if (!directory) return []
    const prefix = `${agentFilePrefix(agentId)}-`
    return listFolder(directory)
      .filter((name) => name.startsWith(prefix))
      .map((name) => path.join(directory, name))
  }

  removePersisted(agentId?: string): number {
    const { directory } = this.options
    if (!directory) return 0
    const doomed = agentId
      ? this.persisted(agentId)
      : listFolder(directory).map((name) => path.join(directory, name))
    for (const file of doomed) fs.rmSync(file, { force: true })
    return doomed.length
  }

  removeOrphans(agentIds: readonly string[]): number {
    const { directory } = this.options
    if (!directory) return 0
    const owned = agentIds.map((id) => `${agentFilePrefix(id)}-`)
    const orphans = listFolder(directory).filter((name) => !owned.some((prefix) => name.startsWith(prefix)))
    for (const name of orphans) fs.rmSync(path.join(directory, name), { force: true })
    return orphans.length
  }

  /**
   * Seam for other servers' adapters (store-postgres/src/vector): statements written in the same
   * transaction as the rows of an upsert on the Prisma path (e.g. a pgvector mirror column).
   */
  protected alsoWritten(_rows: readonly EmbeddingRowWrite[]): EmbeddingWriteStatement[] {
    return []
  }

  /**
   * Seam: brings an index held in memory up to date with the table when the change version says
   * it may be stale, in place (e.g. only the rows another replica changed). Returns how many rows
   * the index then holds, or null when it cannot tell: the search then counts the rows and
   * reloads the whole index if they differ (SQLite's way, which misses nothing it writes itself).
   */
  protected async patchFromTable(
    _agentId: string,
    _kind: string,
    _index: AdaptiveVectorIndex,
  ): Promise<number | null> {
    return null
  }

  /**
   * Changes when anything may have changed an agent's vectors: any write through the engine for
   * the agent (its write counter), or a commit by another connection (SQLite's data_version).
   * Null when it cannot tell (no direct connection, no write counter). A seam: a server's adapter
   * answers from change notifications instead.
   */
  protected async changeVersion(
    _agentId: string,
    _kind: string,
    writeVersion: string | null,
  ): Promise<string | null> {
    const direct = directSqlite(this.db)
    if (!direct || writeVersion === null) return null
    const row = await direct.get<{ data_version: number }>('PRAGMA data_version')
    return `${writeVersion}|${row?.data_version}`
  }

  searchIndex(agentId: string, kind: string, options: SearchIndexOptions): Promise<SearchableVectors> {
    return this.heldIndex(agentId, kind, options)
  }

  /** The (agent, kind)'s in-process index, brought up to date with the table. */
  protected async heldIndex(
    agentId: string,
    kind: string,
    options: SearchIndexOptions,
  ): Promise<VectorIndex> {
    const key = this.key(agentId, kind)
    // Read before anything else: a write while this runs changes it, and the next search looks again.
    const version = await this.changeVersion(agentId, kind, options.writeVersion)
    const cached = this.indexes.get(key)
    // Nothing written since the index was checked: no fill to do, no count to take.
    if (cached && version !== null && cached.version === version) return cached.index
    if (options.catchUp) await options.catchUp()
    if (cached) {
      const patched = await this.patchFromTable(agentId, kind, cached.index)
      // Still the index held (not reset meanwhile), and it matched the table in the end.
      if (patched !== null && this.indexes.get(key) === cached) {
        this.changed(cached, Math.abs(patched - cached.rows))
        cached.rows = patched
        cached.version = version
        return cached.index
      }
    }
    const rows = await this.count(agentId, kind)
    if (cached && cached.rows === rows && cached.index.size === rows) {
      cached.version = version
      return cached.index
    }
    // Loaded by a concurrent search since this one looked (its load done and no longer shared):
    // the same index, when it holds what the table holds now.
    const loaded = this.indexes.get(key)
    if (loaded && loaded !== cached && loaded.rows === rows && loaded.index.size === rows) return loaded.index
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
  private async loadFromTable(agentId: string, kind: string): Promise<KindIndex> {
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
    return { key: this.key(agentId, kind), index, rows, file, unsaved: 0, version: null }
  }

  /**
   * The saved HNSW graph, patched to match the table: vectors whose row is gone are removed, rows
   * with no vector in the graph or another content hash are read and inserted. Null (rebuild from
   * the table) when nothing usable is saved, the index would be exact anyway, or too much changed.
   */
  private async loadSaved(agentId: string, kind: string, rows: number): Promise<KindIndex | null> {
    const file = this.indexFile(agentId, kind)
    if (!file || rows <= this.approximateAbove || this.slotPostings) return null
    const graph = await HnswVectorIndex.load(file, this.options.hnsw)
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
    return { key: this.key(agentId, kind), index, rows: index.size, file, unsaved: changes, version: null }
  }

  /** True when this store's approximate indexes are slot postings (see `approximateIndex`). */
  private get slotPostings(): boolean {
    return approximateIndexFor(this.model, this.options.approximateIndex) === 'slot-postings'
  }

  private newIndex(file: string | null, approximate?: HnswVectorIndex): AdaptiveVectorIndex {
    const hnsw = this.options.hnsw ?? {}
    if (this.slotPostings) {
      const config = this.options.slotPostings ?? {}
      // Checked now, so a bad setting fails at the first load rather than in a background build.
      new SlotPostingsIndex(config)
      return new AdaptiveVectorIndex({
        // Built here in batches (one pass over the vectors, ~100x cheaper per vector than an HNSW
        // insert), with requests served between batches; nothing is saved: a restart rebuilds.
        createApproximate: () => new SlotPostingsIndex(config, this.options.scan),
        pause: () => new Promise((resolve) => setImmediate(resolve)),
        // Not calibrated: calibration asks with stored vectors (whole texts), which need 192
        // candidates for recall@10 0.99, while search queries (a few words) reach 0.995 with the
        // default 64 at 100k, 1.25x faster (bench: vector, offline embedder rows).
        config: { approximateAbove: this.approximateAbove, calibrationQueries: 0 },
        ...(this.options.scan ? { scan: this.options.scan } : {}),
      })
    }
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
      ...(this.options.scan ? { scan: this.options.scan } : {}),
    })
  }

  private get approximateAbove(): number {
    return this.options.approximateAbove ?? DEFAULT_APPROXIMATE_ABOVE
  }

  private indexFile(agentId: string, kind: string): string | null {
    const { directory } = this.options
    if (!directory) return null
    return path.join(directory, `${agentFilePrefix(agentId)}-${kind}-${hash(this.model).slice(0, 12)}.hnsw`)
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

  async settled(): Promise<void> {
    while (this.maintenance.size > 0) await Promise.all([...this.maintenance])
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

  private ownerId(id: string): number {
    const ownerId = parseRowId(id)
    if (ownerId == null)
      throw new ValidationError([{ field: 'id', message: "must be the row id of the vector's owner" }])
    return ownerId
  }

  protected key(agentId: string, kind: string): string {
    return `${agentId}\u0000${kind}`
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/**
 * How an agent's saved graphs are named: readable where the agent id allows it; the hash keeps two
 * ids that read alike apart, and tells an agent's files from every other agent's.
 */
function agentFilePrefix(agentId: string): string {
  const readable = agentId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 48)
  return `${readable}~${hash(agentId).slice(0, 8)}`
}

function listFolder(directory: string): string[] {
  try {
    return fs.readdirSync(directory)
  } catch {
    return []
  }
}
