import {
  type AdaptiveVectorIndex,
  bytesToVector,
  type Clock,
  DEFAULT_APPROXIMATE_ABOVE,
  ValidationError,
} from '@engram/core'
import {
  assertDimensions,
  type Logger,
  type SearchableVectors,
  type SearchIndexOptions,
  type StoredVector,
  type VectorHit,
} from '@engram/engine'
import {
  type EmbeddingRowWrite,
  type EmbeddingWriteStatement,
  SqliteVectorStore,
  type VectorIndexOptions,
} from '@engram/store-sqlite'
import { type PostgresDatabase, sharedView } from '../db/client.ts'
import { VECTOR_SCHEMA_LOCK, VectorChangeListener } from './vector-changes.ts'
import {
  checkedSchemaSetup,
  installVectorSchema,
  isLockConflict,
  type VectorSchemaSetupOptions,
} from './vector-schema.ts'

/** pgvector's HNSW index holds at most this many dimensions: wider models are searched exactly. */
export const PGVECTOR_MAX_INDEXED_DIMENSIONS = 2000

/** Spec 002's HNSW parameters, and pgvector's default search breadth. */
export const DEFAULT_PGVECTOR_HNSW = { m: 16, efConstruction: 64, efSearch: 64 } as const

/** How vectors are searched on Postgres. */
export type PostgresVectorSearch = 'auto' | 'pgvector' | 'notify'

export interface PostgresVectorOptions {
  /**
   * `pgvector`: `vector` columns and HNSW indexes, searched in SQL (fails at start without the
   * extension); `notify`: bytes and an in-process index per replica kept in step by NOTIFY;
   * `auto` (default): pgvector when the server has it, else notify.
   */
  search?: PostgresVectorSearch
  /**
   * Where the dedicated LISTEN connection goes (the pool's URL). Without it no notifications are
   * heard and every search checks the table (PGlite, which serves one connection at a time).
   */
  listenUrl?: string | null
  /** The listener's reconnection backoff (tests shorten it). */
  reconnect?: { minDelayMs?: number; maxDelayMs?: number }
  /** pgvector's HNSW parameters; a changed m or efConstruction builds a new index. */
  hnsw?: { m?: number; efConstruction?: number; efSearch?: number }
  /** An (agent, kind, model) with at most this many vectors is searched exactly by pgvector. */
  exactUpTo?: number
  /** The in-process index of each replica (exact, then HNSW above approximateAbove). */
  index?: Omit<VectorIndexOptions, 'directory'>
  /** How the start-up's schema setup waits for busy tables (vector-schema.ts; defaults there). */
  setup?: VectorSchemaSetupOptions
}

/** What start-up found: whether searches go to pgvector, with which parameters. */
interface VectorSetup {
  pgvector: boolean
}

const PATCH_BATCH = 500

/**
 * The VectorStore port on Postgres, reusing SqliteVectorStore's index logic through its seams
 * (`changeVersion`, `patchFromTable`, `alsoWritten`): rows of `Embedding` (`bytea`) are the
 * durable copy on every server, and each replica's in-process index serves the engine's
 * synchronous `searchIndex`. Kept in step by NOTIFY: every change to the table notifies its
 * (agent, kind, model) in its transaction (triggers, so cascades and imports notify too); one
 * LISTEN connection per store marks the named index stale; a search of an index nothing was
 * heard about needs no query at all, a stale one re-reads only the rows whose content hash
 * differs (a full reload only after removals). While the listener is down every search checks.
 *
 * With pgvector (detected in `pg_available_extensions` at start) a mirror column `embedding
 * vector` is written with the bytes, one partial HNSW index per width, and `topK` runs in SQL:
 * exact (ordered by `<=>`) up to `exactUpTo` vectors of the (agent, kind, model), the HNSW index
 * with `hnsw.ef_search` and iterative scan above, and `searchIndex` hands the engine's search
 * paths a handle on that SQL: nothing of the vectors is held in the replica's memory.
 */
export class PostgresVectorStore extends SqliteVectorStore {
  private readonly listener: VectorChangeListener | null
  private setupAttempt: Promise<VectorSetup>
  private setupFailed = false
  private pgvector = false
  private readonly hnsw: { m: number; efConstruction: number; efSearch: number }
  private readonly exactUpTo: number
  private readonly schemaSetup: ReturnType<typeof checkedSchemaSetup>
  /** Per index held: the table's fingerprint when it was last found equal to it. */
  private readonly checked = new WeakMap<AdaptiveVectorIndex, string>()
  /**
   * With pgvector, per (agent, kind): what the last handle found (its size and width) and the
   * change version it was found at; while the version holds, a search needs no query but its own.
   */
  private readonly shapes = new Map<string, { version: string; size: number; dimensions: number | null }>()
  /** Widths whose HNSW index this process knows exists. */
  private readonly indexedWidths = new Map<number, Promise<void>>()

  constructor(
    private readonly pg: PostgresDatabase,
    clock: Clock,
    model: string,
    private readonly vectorOptions: PostgresVectorOptions = {},
    log: Logger = console,
  ) {
    super(sharedView(pg), clock, model, { directory: null, ...vectorOptions.index }, log)
    this.hnsw = checkedHnsw(vectorOptions.hnsw)
    this.exactUpTo = vectorOptions.exactUpTo ?? DEFAULT_APPROXIMATE_ABOVE
    if (!Number.isInteger(this.exactUpTo) || this.exactUpTo < 0)
      throw new ValidationError([{ field: 'exactUpTo', message: 'must be a whole number ≥ 0', limit: 0 }])
    this.schemaSetup = checkedSchemaSetup(vectorOptions.setup)
    this.listener = vectorOptions.listenUrl
      ? new VectorChangeListener({
          url: vectorOptions.listenUrl,
          ...(vectorOptions.reconnect ? { reconnect: vectorOptions.reconnect } : {}),
          log,
        })
      : null
    this.setupAttempt = this.attemptSetup()
  }

  /**
   * The schema setup, started with the store; a failed attempt (the server down at start) is
   * made again by the next call instead of leaving the store broken until a restart.
   */
  private get setup(): Promise<VectorSetup> {
    if (this.setupFailed) this.setupAttempt = this.attemptSetup()
    return this.setupAttempt
  }

  private attemptSetup(): Promise<VectorSetup> {
    this.setupFailed = false
    const attempt = this.prepare()
    // Surfaced by the calls that await it; not an unhandled rejection meanwhile.
    attempt.catch(() => {
      this.setupFailed = true
    })
    return attempt
  }

  /** Resolves when the schema is ready and the listener has made its first attempt. */
  async ready(): Promise<{ pgvector: boolean; listening: boolean }> {
    const setup = await this.setup
    await this.listener?.ready
    return { pgvector: setup.pgvector, listening: this.listener?.connected ?? false }
  }

  /** The LISTEN connection's backend pid, null when not listening (tests end it). */
  listenerPid(): Promise<number | null> {
    return this.listener?.backendPid() ?? Promise.resolve(null)
  }

  private async prepare(): Promise<VectorSetup> {
    const mode = this.vectorOptions.search ?? 'auto'
    const [available] = await this.pg.$queryRawUnsafe<{ version: string }[]>(
      `SELECT default_version AS version FROM pg_available_extensions WHERE name = 'vector'`,
    )
    if (mode === 'pgvector' && !available)
      throw new Error(`vector search 'pgvector' asked for, but the server has no pgvector extension`)
    let pgvector = mode !== 'notify' && available !== undefined
    try {
      await installVectorSchema(this.pg, pgvector, this.schemaSetup)
    } catch (error) {
      // 'auto' on a server that lists pgvector but will not install it here (privileges): NOTIFY.
      // Tables busy past every try is no reason to search another way: the next call tries again.
      if (!pgvector || mode === 'pgvector' || isLockConflict(error)) throw error
      this.log.warn(
        `[vectors] pgvector is available but could not be set up; in-process indexes instead:`,
        error,
      )
      pgvector = false
      await installVectorSchema(this.pg, false, this.schemaSetup)
    }
    this.pgvector = pgvector
    return { pgvector }
  }

  override async upsert(agentId: string, kind: string, vectors: readonly StoredVector[]): Promise<void> {
    await this.setup
    await super.upsert(agentId, kind, vectors)
    this.shapes.delete(this.key(agentId, kind))
    const width = vectors[0]?.vector.length
    if (this.pgvector && width !== undefined) await this.ensureHnswIndex(width)
  }

  override async remove(agentId: string, kind: string, ids: readonly string[]): Promise<number> {
    await this.setup
    try {
      return await super.remove(agentId, kind, ids)
    } finally {
      this.shapes.delete(this.key(agentId, kind))
    }
  }

  override forget(agentId: string, kind: string, ids: readonly string[]): void {
    super.forget(agentId, kind, ids)
    this.shapes.delete(this.key(agentId, kind))
  }

  override reset(agentId?: string): void {
    super.reset(agentId)
    for (const key of this.shapes.keys())
      if (agentId === undefined || key.startsWith(this.key(agentId, ''))) this.shapes.delete(key)
  }

  override async searchIndex(
    agentId: string,
    kind: string,
    options: SearchIndexOptions,
  ): Promise<SearchableVectors> {
    await this.setup
    if (!this.pgvector) return super.searchIndex(agentId, kind, options)
    return this.sqlSearch(agentId, kind, options)
  }

  /**
   * pgvector's handle: the (agent, kind)'s size and width, and a `search` that runs in SQL. The
   * catch-up (the engine embedding what is missing) and the mirror of rows written without it run
   * only when something may have changed since the last handle (the change version moved).
   */
  private async sqlSearch(
    agentId: string,
    kind: string,
    options: SearchIndexOptions,
  ): Promise<SearchableVectors> {
    const key = this.key(agentId, kind)
    // Read before anything else: a write while this runs changes it, and the next search looks again.
    const version = await this.changeVersion(agentId, kind, options.writeVersion)
    let shape = this.shapes.get(key)
    if (!shape || version === null || shape.version !== version) {
      if (options.catchUp) await options.catchUp()
      await this.mirrorMissing(agentId, kind)
      const [row] = await this.pg.$queryRawUnsafe<{ size: number; dimensions: number | null }[]>(
        `SELECT count(*)::int AS size, max("dimensions") AS dimensions FROM "Embedding"
         WHERE "agentId" = $1 AND "kind" = $2 AND "model" = $3`,
        agentId,
        kind,
        this.model,
      )
      shape = { version: version ?? '', size: row?.size ?? 0, dimensions: row?.dimensions ?? null }
      if (version === null) this.shapes.delete(key)
      else this.shapes.set(key, shape)
    }
    const { size, dimensions } = shape
    return {
      size,
      dimensions,
      search: async (query, limit) => {
        if (dimensions === null || limit <= 0) return []
        assertDimensions(dimensions, query, 'query')
        const literal = vectorLiteral(query)
        const exact = size <= this.exactUpTo || dimensions > PGVECTOR_MAX_INDEXED_DIMENSIONS
        const rows = exact
          ? await this.pg.$queryRawUnsafe<{ ownerId: number; distance: number }[]>(
              EXACT_SEARCH_SQL,
              agentId,
              kind,
              this.model,
              literal,
              limit,
            )
          : await this.approximate(agentId, kind, dimensions, literal, limit)
        return rows.map((row) => ({ id: String(row.ownerId), similarity: 1 - Number(row.distance) }))
      },
    }
  }

  override async topK(
    agentId: string,
    kind: string,
    query: Float32Array,
    limit: number,
  ): Promise<VectorHit[]> {
    await this.setup
    if (!this.pgvector) return super.topK(agentId, kind, query, limit)
    return (await this.sqlSearch(agentId, kind, { writeVersion: null })).search(query, limit)
  }

  /** The partial HNSW index of the width, with the agent's rows filtered by iterative scan. */
  private approximate(
    agentId: string,
    kind: string,
    width: number,
    literal: string,
    limit: number,
  ): Promise<{ ownerId: number; distance: number }[]> {
    const efSearch = Math.min(1000, Math.max(this.hnsw.efSearch, limit))
    return this.pg.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SELECT set_config('hnsw.ef_search', $1, true)`, String(efSearch))
      // The index holds every tenant: strict_order scans on until `limit` rows of this agent.
      await tx.$executeRawUnsafe(`SELECT set_config('hnsw.iterative_scan', 'strict_order', true)`)
      return tx.$queryRawUnsafe<{ ownerId: number; distance: number }[]>(
        approximateSearchSql(width),
        agentId,
        kind,
        this.model,
        literal,
        limit,
      )
    })
  }

  /** The name of the HNSW index of a width with the configured parameters. */
  hnswIndexName(width: number): string {
    return `Embedding_hnsw_d${width}_m${this.hnsw.m}_ef${this.hnsw.efConstruction}`
  }

  /**
   * Creates the width's HNSW index the first time a model of that width is written, and drops
   * the width's indexes of other parameters: the planner would otherwise keep using an old one.
   * Each process checks the catalog first: CREATE INDEX IF NOT EXISTS takes its SHARE lock on
   * "Embedding" (every vector write waits for it) even when the index is there, as every
   * replica's first write of a width would find it.
   */
  private ensureHnswIndex(width: number): Promise<void> {
    if (width > PGVECTOR_MAX_INDEXED_DIMENSIONS) return Promise.resolve()
    let known = this.indexedWidths.get(width)
    if (!known) {
      known = this.widthIndexes(this.pg, width).then(async (names) => {
        if (names.length === 1 && names[0] === this.hnswIndexName(width)) return
        await this.pg.$transaction(async (tx) => {
          await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${VECTOR_SCHEMA_LOCK})`)
          await tx.$executeRawUnsafe(
            `CREATE INDEX IF NOT EXISTS "${this.hnswIndexName(width)}" ON "Embedding"
             USING hnsw ((("embedding")::vector(${width})) vector_cosine_ops)
             WITH (m = ${this.hnsw.m}, ef_construction = ${this.hnsw.efConstruction})
             WHERE "dimensions" = ${width}`,
          )
          for (const name of await this.widthIndexes(tx, width))
            if (name !== this.hnswIndexName(width))
              await tx.$executeRawUnsafe(`DROP INDEX IF EXISTS "${name}"`)
        })
      })
      // A failed attempt is tried again by the next write.
      known.catch(() => this.indexedWidths.delete(width))
      this.indexedWidths.set(width, known)
    }
    return known
  }

  /** The names of the width's HNSW indexes on "Embedding" (of any parameters). */
  private async widthIndexes(
    db: Pick<PostgresDatabase, '$queryRawUnsafe'>,
    width: number,
  ): Promise<string[]> {
    const rows = await db.$queryRawUnsafe<{ name: string }[]>(
      `SELECT indexname AS name FROM pg_indexes WHERE tablename = 'Embedding' AND indexname LIKE $1`,
      `Embedding\\_hnsw\\_d${width}\\_%`,
    )
    return rows.map((row) => row.name)
  }

  /** In the mirror column, the agent's rows written without it (imports, restores, raw writes). */
  private async mirrorMissing(agentId: string, kind: string): Promise<void> {
    for (;;) {
      const rows = await this.pg.$queryRawUnsafe<{ ownerId: number; vector: Uint8Array }[]>(
        `SELECT "ownerId", "vector" FROM "Embedding"
         WHERE "agentId" = $1 AND "kind" = $2 AND "model" = $3 AND "embedding" IS NULL LIMIT ${PATCH_BATCH}`,
        agentId,
        kind,
        this.model,
      )
      if (rows.length === 0) return
      await this.pg.$executeRawUnsafe(
        mirrorSql(),
        mirrorPayload(rows.map((row) => ({ ownerId: row.ownerId, vector: bytesToVector(row.vector) }))),
        kind,
        this.model,
      )
      if (rows.length < PATCH_BATCH) return
    }
  }

  /** The mirror column, written in the upsert's transaction. */
  protected override alsoWritten(rows: readonly EmbeddingRowWrite[]): EmbeddingWriteStatement[] {
    if (!this.pgvector || rows.length === 0) return []
    const first = rows[0] as EmbeddingRowWrite
    return [
      this.db.$executeRawUnsafe(
        mirrorSql(),
        mirrorPayload(rows.map((row) => ({ ownerId: row.ownerId, vector: bytesToVector(row.vector) }))),
        first.kind,
        first.model,
      ),
    ]
  }

  /**
   * What the listener has heard about the index: unchanged means nothing was written to it
   * anywhere since it was last checked. Null (check the table) without a listener or while down.
   */
  protected override async changeVersion(
    agentId: string,
    kind: string,
    writeVersion: string | null,
  ): Promise<string | null> {
    const heard = this.listener?.version(agentId, kind, this.model) ?? null
    if (heard === null) return null
    // This process's own writes count at once, before their notification comes back to it.
    return writeVersion === null ? heard : `${writeVersion}|${heard}`
  }

  /**
   * Checks the index against the table: first one aggregate row (a fingerprint of ids, hashes and
   * write times, so a search while nothing changed transfers no rows); when it moved, re-reads
   * only the rows whose content hash the index does not hold (written on another replica, or
   * without a hash); a removal elsewhere (fewer rows than held) reloads the index.
   */
  protected override async patchFromTable(
    agentId: string,
    kind: string,
    index: AdaptiveVectorIndex,
  ): Promise<number | null> {
    const [print] = await this.pg.$queryRawUnsafe<{ rows: number; print: string }[]>(
      `SELECT count(*)::int AS rows, coalesce(sum(hashtextextended(
         "ownerId"::text || ':' || "contentHash" || ':' || (extract(epoch FROM "createdAt") * 1000)::bigint::text, 0
       )), 0)::text || ':' || count(*)::text AS print
       FROM "Embedding" WHERE "agentId" = $1 AND "kind" = $2 AND "model" = $3`,
      agentId,
      kind,
      this.model,
    )
    const fingerprint = print?.print ?? '0:0'
    if (this.checked.get(index) === fingerprint && index.size === print?.rows) return index.size
    const current = await this.pg.$queryRawUnsafe<{ ownerId: number; contentHash: string }[]>(
      `SELECT "ownerId", "contentHash" FROM "Embedding" WHERE "agentId" = $1 AND "kind" = $2 AND "model" = $3`,
      agentId,
      kind,
      this.model,
    )
    let held = 0
    const stale: number[] = []
    for (const row of current) {
      const stamp = index.stampOf(String(row.ownerId))
      if (stamp !== undefined) held++
      // An empty hash says nothing about the vector: read again.
      if (stamp === undefined || stamp !== row.contentHash || row.contentHash === '') stale.push(row.ownerId)
    }
    if (held !== index.size) return null
    for (let start = 0; start < stale.length; start += PATCH_BATCH) {
      const batch = await this.pg.$queryRawUnsafe<
        { ownerId: number; vector: Uint8Array; contentHash: string }[]
      >(
        `SELECT "ownerId", "vector", "contentHash" FROM "Embedding"
         WHERE "agentId" = $1 AND "kind" = $2 AND "model" = $3 AND "ownerId" IN (SELECT value::int FROM json_array_elements_text($4::json))`,
        agentId,
        kind,
        this.model,
        JSON.stringify(stale.slice(start, start + PATCH_BATCH)),
      )
      for (const row of batch) index.upsert(String(row.ownerId), bytesToVector(row.vector), row.contentHash)
    }
    // Removed between the two reads: the next search looks again.
    if (index.size !== current.length) return null
    // Read before the rows: a write since then changes the next fingerprint, and is read then.
    this.checked.set(index, fingerprint)
    return index.size
  }

  /**
   * At shutdown (the port's flush; the engine calls it from the API's close): the in-process
   * work as on SQLite, then the LISTEN connection, which would otherwise outlive the app. A
   * search after it still answers, checking the table each time.
   */
  override async flush(): Promise<void> {
    await super.flush()
    await this.listener?.close()
  }

  /** Stops listening; the pool is the storage's to close. */
  async close(): Promise<void> {
    await this.listener?.close()
    await this.setupAttempt.catch(() => {})
  }
}

/**
 * The search at or below the threshold ($1 agent, $2 kind, $3 model, $4 query, $5 limit):
 * MATERIALIZED takes the agent's rows first, then scores every one; no HNSW index can serve it,
 * so the results are the exact scan's. Ties by id, as the in-process index orders them.
 */
export const EXACT_SEARCH_SQL = `WITH own AS MATERIALIZED (
    SELECT "ownerId", "embedding" FROM "Embedding" WHERE "agentId" = $1 AND "kind" = $2 AND "model" = $3
  )
  SELECT "ownerId", "embedding" <=> $4::vector AS distance FROM own
  ORDER BY distance, "ownerId"::text LIMIT $5`

/**
 * The search above the threshold ($1 agent, $2 kind, $3 model, $4 query, $5 limit): the same
 * expression and predicate as the width's partial index, so the planner can use it. The agent's
 * filter is written `IS NOT DISTINCT FROM` (the same rows: the columns are NOT NULL) because no
 * btree serves that form: with `=` the planner takes the (agentId, kind, model) btree and sorts
 * every row of the agent, an exact scan at the size where it must not (seen on PGlite, with and
 * without statistics). The iterative scan applies the filter while walking the graph.
 */
export function approximateSearchSql(width: number): string {
  return `SELECT "ownerId", ("embedding")::vector(${width}) <=> $4::vector(${width}) AS distance FROM "Embedding"
    WHERE "dimensions" = ${width} AND "agentId" IS NOT DISTINCT FROM $1 AND "kind" IS NOT DISTINCT FROM $2
      AND "model" IS NOT DISTINCT FROM $3
    ORDER BY ("embedding")::vector(${width}) <=> $4::vector(${width}) LIMIT $5`
}

function checkedHnsw(options: PostgresVectorOptions['hnsw'] = {}): {
  m: number
  efConstruction: number
  efSearch: number
} {
  const hnsw = { ...DEFAULT_PGVECTOR_HNSW, ...options }
  // pgvector's own bounds, checked here so a bad setting names itself before any DDL runs.
  const bounds = [
    ['hnsw.m', hnsw.m, 2, 100],
    ['hnsw.efConstruction', hnsw.efConstruction, Math.max(4, 2 * hnsw.m), 1000],
    ['hnsw.efSearch', hnsw.efSearch, 1, 1000],
  ] as const
  for (const [field, value, min, max] of bounds)
    if (!Number.isInteger(value) || value < min || value > max)
      throw new ValidationError([
        { field, message: `must be a whole number from ${min} to ${max}`, limit: max },
      ])
  return hnsw
}

/** pgvector's text form; a float32 printed by JS reads back as the same float32. */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`
}

function mirrorSql(): string {
  return `UPDATE "Embedding" AS e SET "embedding" = m.e::vector
    FROM json_to_recordset($1::json) AS m(id int, e text)
    WHERE e."kind" = $2 AND e."model" = $3 AND e."ownerId" = m.id`
}

function mirrorPayload(rows: { ownerId: number; vector: Float32Array }[]): string {
  return JSON.stringify(rows.map((row) => ({ id: row.ownerId, e: vectorLiteral(row.vector) })))
}
