import fs from 'node:fs'
import type { ServerMetricsSample } from '@engram/engine'
import { Gauge, type Registry } from 'prom-client'

/** What the database holds, read with a few aggregate statements (no agent labels, ever). */
export interface StoreFigures {
  counts: ServerMetricsSample['counts']
  jobs: { kind: string; state: string; jobs: number }[]
  /** Embed jobs still to run (pending or running). */
  embeddingBacklog: number
  databaseBytes: number
}

/** The vector indexes this process holds (SqliteVectorStore.indexState; the Postgres store extends it). */
export interface VectorIndexState {
  indexes: number
  entries: number
  approximate: number
  deleted: number
}

/** What the figures need of the database: raw aggregate reads (either adapter's Prisma client). */
export interface RawReads {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>
}

export interface StoreGaugeSources {
  db: RawReads
  backend: 'sqlite' | 'postgres'
  /** The SQLite file (its WAL beside it counts too); null on Postgres or without a file. */
  databaseFile: string | null
  vectors: () => VectorIndexState | null
  /** Spec 002's memory.redis.connected: null when Redis is not configured (no gauge then). */
  redisConnected: (() => boolean) | null
  /** Spec 002's memory.postgres.pool.active: null when not on Postgres (no gauge then). */
  postgresPool: (() => { open: number; active: number; waiting: number } | null) | null
}

// Agent ids cannot contain ':', so internal storage agents (a pool's `pool:<id>`) are left out of
// the agents count (they are never listed as agents).
const COUNTS_SQL = `SELECT
  (SELECT COUNT(*) FROM "Agent" WHERE "id" NOT LIKE '%:%') AS agents,
  (SELECT COUNT(*) FROM "MemoryItem") AS memories,
  (SELECT COUNT(*) FROM "Message") AS messages,
  (SELECT COUNT(*) FROM "Knowledge") AS knowledge,
  (SELECT COUNT(*) FROM "GraphEntity") AS "graphEntities",
  (SELECT COUNT(*) FROM "GraphRelationship") AS "graphRelationships",
  (SELECT COUNT(*) FROM "Trajectory") AS trajectories`
const JOBS_SQL = `SELECT "kind" AS kind, "state" AS state, COUNT(*) AS jobs FROM "Job" GROUP BY "kind", "state"`

/** Reads the store's figures: one statement of counts, one of jobs, one of size. */
export async function readStoreFigures(sources: StoreGaugeSources): Promise<StoreFigures> {
  const { db } = sources
  const [row] = await db.$queryRawUnsafe<Record<string, bigint | number>[]>(COUNTS_SQL)
  const count = (name: string) => Number(row?.[name] ?? 0)
  const jobRows = await db.$queryRawUnsafe<{ kind: string; state: string; jobs: bigint | number }[]>(JOBS_SQL)
  const jobs = jobRows
    .map((j) => ({ kind: j.kind, state: j.state, jobs: Number(j.jobs) }))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.state.localeCompare(b.state))
  return {
    counts: {
      agents: count('agents'),
      memories: count('memories'),
      messages: count('messages'),
      knowledge: count('knowledge'),
      graphEntities: count('graphEntities'),
      graphRelationships: count('graphRelationships'),
      trajectories: count('trajectories'),
    },
    jobs,
    embeddingBacklog: jobs
      .filter((j) => j.kind === 'embed' && (j.state === 'pending' || j.state === 'running'))
      .reduce((total, j) => total + j.jobs, 0),
    databaseBytes: await databaseBytes(sources),
  }
}

async function databaseBytes({ db, backend, databaseFile }: StoreGaugeSources): Promise<number> {
  if (backend === 'postgres') {
    const [row] = await db.$queryRawUnsafe<{ bytes: bigint | number }[]>(
      'SELECT pg_database_size(current_database()) AS bytes',
    )
    return Number(row?.bytes ?? 0)
  }
  // The file and its WAL (what the disk holds); pages × page size when there is no file.
  if (databaseFile) {
    const size = (file: string) => {
      try {
        return fs.statSync(file).size
      } catch {
        return 0
      }
    }
    return size(databaseFile) + size(`${databaseFile}-wal`)
  }
  const [pages] = await db.$queryRawUnsafe<{ page_count: bigint | number }[]>('PRAGMA page_count')
  const [pageSize] = await db.$queryRawUnsafe<{ page_size: bigint | number }[]>('PRAGMA page_size')
  return Number(pages?.page_count ?? 0) * Number(pageSize?.page_size ?? 0)
}

/**
 * The gauges collected when Prometheus scrapes. prom-client collects every metric at once, so each
 * gauge's collect awaits one shared read of the figures: a scrape costs the three statements above
 * whatever the number of gauges.
 */
export function registerStoreGauges(registry: Registry, sources: StoreGaugeSources): void {
  let pending: Promise<{ figures: StoreFigures; vectors: VectorIndexState | null }> | null = null
  const read = () => {
    pending ??= readStoreFigures(sources)
      .then((figures) => ({ figures, vectors: sources.vectors() }))
      .finally(() => {
        pending = null
      })
    return pending
  }
  const gauge = (
    name: string,
    help: string,
    set: (gauge: Gauge, now: { figures: StoreFigures; vectors: VectorIndexState | null }) => void,
    labelNames: string[] = [],
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        set(this, await read())
      },
    })
  const count = (name: string, key: keyof StoreFigures['counts'], help: string) =>
    gauge(name, help, (g, { figures }) => g.set(figures.counts[key]))
  count('engram_agents', 'agents', 'Agents.')
  count('engram_memories', 'memories', 'Long-term memories (memory items), every agent and pool.')
  count('engram_messages', 'messages', 'Stored conversation messages (episodic memory).')
  count('engram_knowledge', 'knowledge', 'Knowledge entries.')
  count('engram_graph_entities', 'graphEntities', 'Knowledge graph entities.')
  count('engram_graph_relationships', 'graphRelationships', 'Knowledge graph relationships.')
  count('engram_trajectories', 'trajectories', 'Recorded trajectories (issue 16).')
  gauge(
    'engram_jobs',
    'Background jobs in the queue by kind and state (pending, running, failed).',
    (g, { figures }) => {
      g.reset()
      for (const j of figures.jobs) g.set({ kind: j.kind, state: j.state }, j.jobs)
    },
    ['kind', 'state'],
  )
  gauge(
    'engram_embedding_backlog',
    'Embed jobs still to run (rows waiting for a vector).',
    (g, { figures }) => g.set(figures.embeddingBacklog),
  )
  gauge(
    'engram_database_size_bytes',
    'The database on disk: SQLite file and WAL, or pg_database_size.',
    (g, { figures }) => g.set(figures.databaseBytes),
  )
  gauge(
    'engram_vector_indexes',
    'Vector indexes (agent and kind) loaded in this process.',
    (g, { vectors }) => g.set(vectors?.indexes ?? 0),
  )
  gauge('engram_vector_index_entries', 'Vectors in the loaded indexes.', (g, { vectors }) =>
    g.set(vectors?.entries ?? 0),
  )
  gauge(
    'engram_vector_indexes_built',
    'Loaded indexes built as HNSW graphs (the others are exact scans while small).',
    (g, { vectors }) => g.set(vectors?.approximate ?? 0),
  )
  gauge(
    'engram_vector_index_deleted_ratio',
    'Share of the HNSW graphs’ elements that are deleted (searches still walk them; a rebuild drops them).',
    (g, { vectors }) => {
      const all = (vectors?.entries ?? 0) + (vectors?.deleted ?? 0)
      g.set(all > 0 ? (vectors?.deleted ?? 0) / all : 0)
    },
  )
  const { redisConnected, postgresPool } = sources
  if (redisConnected)
    gauge(
      'memory_redis_connected',
      'Spec 002: 1 while this replica’s Redis connections are up, 0 otherwise.',
      (g) => g.set(redisConnected() ? 1 : 0),
    )
  if (postgresPool)
    gauge(
      'memory_postgres_pool_active',
      'Spec 002: connections of this replica’s Postgres pool running a query.',
      (g) => g.set(postgresPool()?.active ?? 0),
    )
}
