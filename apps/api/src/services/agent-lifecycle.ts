import type { PersistentSessionManager } from '@engram/core'
import type { AgentService, AgentWrites, EmbeddingService, MemoryService } from '@engram/engine'
import { type Database, directSqlite, FULL_TEXT_TABLES } from '@engram/store-sqlite'
import type { EngramPubSub } from '../pubsub.ts'
import type { ContextService } from './context-service.ts'
import type { Logger, OptimizerService } from './optimizer-service.ts'
import type { SearchService } from './search-service.ts'

/** Attempts at truncating the WAL after a deletion, TRUNCATE_RETRY_MS apart (about 5 s in all). */
const TRUNCATE_ATTEMPTS = 100
const TRUNCATE_RETRY_MS = 50

/** Where something of an agent can remain. */
export type StoreKind = 'TABLE' | 'FULL_TEXT' | 'FILE' | 'CACHE' | 'QUEUE'

export interface StoreRemainder {
  store: string
  kind: StoreKind
  count: number
}

/** What remains of an agent, store by store: every count is zero once it is deleted. */
export interface DeletionReport {
  agentId: string
  remaining: number
  stores: StoreRemainder[]
}

export interface AgentLifecycleDeps {
  db: Database
  agents: AgentService
  writes: AgentWrites
  context: ContextService
  embeddings: EmbeddingService
  sessions: PersistentSessionManager
  memory: MemoryService
  search: SearchService
  optimizer: OptimizerService
  pubsub: EngramPubSub
  log: Logger
}

/**
 * The end of an agent's data: deleting an agent, clearing, importing over it or restoring a backup
 * deletes rows, and everything derived from them must go too — in-memory caches (a new owner of
 * the same id must not be served them), saved vector graphs, and the bytes of deleted text in the
 * database file and its WAL. The deletion report lets an operator check that nothing remains.
 */
export class AgentLifecycle {
  constructor(private readonly deps: AgentLifecycleDeps) {}

  /** Deletes an agent with all of its data and keys, and everything derived from them. */
  async deleteAgent(id: string) {
    const agent = await this.deps.agents.deleteAgent(id)
    this.ended(agent.id)
    await this.purge(agent.id)
    return agent
  }

  /** Its keys and tokens are gone: open subscriptions check again and end. */
  accessChanged(): void {
    this.deps.pubsub.publish('access:changed', {})
  }

  /**
   * An agent (every agent when none is named) no longer exists as it was: a new incarnation of its
   * id, and nothing held in memory for the old one.
   */
  ended(agentId?: string): void {
    if (agentId) this.deps.writes.ended(agentId)
    else this.deps.writes.touchAll()
    this.forget(agentId)
    this.accessChanged()
  }

  /**
   * Drops everything held in memory that was derived from an agent's rows (every agent's when none
   * is named), after they were deleted or replaced behind the caches.
   */
  forget(agentId?: string): void {
    const { writes, context, embeddings, sessions, memory, search, optimizer } = this.deps
    if (agentId) writes.touch(agentId)
    else writes.touchAll()
    context.forget(agentId)
    embeddings.reset(agentId)
    sessions.forgetCached(agentId)
    memory.invalidate(agentId ?? null)
    optimizer.forget(agentId)
    search.forgetStatistics()
  }

  /**
   * After rows were deleted in bulk: removes the agent's saved vector graphs (every agent's when
   * none is named), merges the full-text indexes so no segment keeps a deleted term (FTS5 keeps
   * them, marked deleted, until segments merge), and checkpoints the WAL, truncating it, so no
   * older page image holds deleted text. With secure_delete the freed pages are zeroed.
   */
  async purge(agentId?: string): Promise<void> {
    const { db, embeddings, log } = this.deps
    embeddings.removeFiles(agentId)
    for (const table of Object.keys(FULL_TEXT_TABLES))
      await db.$executeRawUnsafe(`INSERT INTO "${table}" ("${table}") VALUES ('optimize')`)
    // secure_delete zeroes what a delete frees, but a b-tree page split earlier leaves stale copies
    // of moved cells in the old page's unused space (found: a deleted agent's id and a content hash
    // in an EmbeddingCache index page). Rebuilding the indexes frees those pages, zeroed.
    await db.$executeRawUnsafe('REINDEX')
    // The checkpoint thread's own (passive) checkpoint, or a reader still on an older snapshot,
    // makes it busy for a moment: tried again, then left to later checkpoints with a warning.
    for (let attempt = 1; ; attempt++) {
      const [checkpoint] = await db.$queryRawUnsafe<{ busy: number | bigint }[]>(
        'PRAGMA wal_checkpoint(TRUNCATE)',
      )
      if (Number(checkpoint?.busy ?? 0) === 0) return
      if (attempt >= TRUNCATE_ATTEMPTS) {
        log.warn(`[lifecycle] the WAL could not be truncated after ${attempt} attempts (busy)`)
        return
      }
      await new Promise((resolve) => setTimeout(resolve, TRUNCATE_RETRY_MS))
    }
  }

  /**
   * At start: saved vector graphs of agents that no longer exist are removed (left by a deletion
   * that a crash interrupted, or by a server without this sweep). Returns how many files.
   */
  async removeOrphanFiles(): Promise<number> {
    const agents = await this.deps.db.agent.findMany({ select: { id: true } })
    return this.deps.embeddings.removeOrphanFiles(agents.map((a) => a.id))
  }

  /** What remains of an agent in every store; all zero once it is deleted. */
  async report(agentId: string): Promise<DeletionReport> {
    const { context, embeddings, sessions, memory, optimizer } = this.deps
    const stores: StoreRemainder[] = [
      ...(await this.tableRows(agentId)),
      ...(await this.fullTextRows(agentId)),
      { store: 'vector graph files', kind: 'FILE', count: embeddings.files(agentId).length },
      { store: 'context cache', kind: 'CACHE', count: context.cachedEntries(agentId) },
      { store: 'session cache', kind: 'CACHE', count: sessions.cachedCount(agentId) },
      {
        store: 'vector indexes in memory',
        kind: 'CACHE',
        count: embeddings.held(agentId).indexes + (memory.holdsIndex(agentId) ? 1 : 0),
      },
      { store: 'optimizer redundancy joins', kind: 'CACHE', count: optimizer.cachedJoins(agentId) },
    ]
    return { agentId, remaining: stores.reduce((sum, s) => sum + s.count, 0), stores }
  }

  /**
   * Rows per table: every table with an "agentId" column (so a table added later is counted without
   * changing this), and the agent's own row.
   */
  private async tableRows(agentId: string): Promise<StoreRemainder[]> {
    const { db } = this.deps
    const tables = await db.$queryRawUnsafe<{ name: string }[]>(
      `SELECT m."name" AS name FROM sqlite_master m
        WHERE m."type" = 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(m."name") c WHERE c."name" = 'agentId')
        ORDER BY m."name"`,
    )
    const rows: StoreRemainder[] = []
    for (const { name } of [{ name: 'Agent' }, ...tables]) {
      const column = name === 'Agent' ? 'id' : 'agentId'
      const [row] = await db.$queryRawUnsafe<{ n: number | bigint }[]>(
        `SELECT count(*) AS n FROM "${name}" WHERE "${column}" = ?`,
        agentId,
      )
      // Jobs are rows too, but what they hold is work still to run for the agent.
      rows.push({ store: name, kind: name === 'Job' ? 'QUEUE' : 'TABLE', count: Number(row?.n ?? 0) })
    }
    return rows
  }

  /**
   * Documents in each full-text index, read from the index itself (fts5vocab), not from the table
   * it indexes: the agent's, and those whose row is gone (a deleted row the index still holds,
   * whichever agent it was).
   */
  private async fullTextRows(agentId: string): Promise<StoreRemainder[]> {
    const direct = directSqlite(this.deps.db)
    if (!direct) return []
    const out: StoreRemainder[] = []
    for (const [index, table] of Object.entries(FULL_TEXT_TABLES)) {
      const vocabulary = `${index}_documents`
      await this.deps.db.$executeRawUnsafe(
        `CREATE VIRTUAL TABLE IF NOT EXISTS temp."${vocabulary}" USING fts5vocab(main, '${index}', 'instance')`,
      )
      const [row] = await direct.all<{ own: number; orphaned: number }>(
        `SELECT count(DISTINCT CASE WHEN t."agentId" = ? THEN v."doc" END) AS own,
                count(DISTINCT CASE WHEN t."id" IS NULL THEN v."doc" END) AS orphaned
           FROM temp."${vocabulary}" v LEFT JOIN "${table}" t ON t."id" = v."doc"`,
        agentId,
      )
      out.push({ store: index, kind: 'FULL_TEXT', count: Number(row?.own ?? 0) })
      out.push({ store: `${index} (rows deleted)`, kind: 'FULL_TEXT', count: Number(row?.orphaned ?? 0) })
    }
    return out
  }
}
