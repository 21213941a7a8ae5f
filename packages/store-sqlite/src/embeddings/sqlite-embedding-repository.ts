import { bytesToVector, vectorToBytes } from '@engram/core'
import {
  type CachedVector,
  EMBEDDING_KINDS,
  type EmbeddingKind,
  type EmbeddingRepository,
  type OwnerText,
  type OwnerToFill,
} from '@engram/engine'
import { type Database, sqliteDate } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import type { SqliteJobQueue } from '../jobs/sqlite-job-queue.ts'

/** Cache rows per INSERT statement (6 parameters each). */
const CACHE_INSERT_ROWS = 200

/** The text a kind's owner is embedded from. */
const OWNER_TEXT: Record<EmbeddingKind, string> = {
  memory: `SELECT o."id" AS id, o."content" AS text FROM "MemoryItem" o`,
  message: `SELECT o."id" AS id, o."content" AS text FROM "Message" o`,
  knowledge: `SELECT o."id" AS id, o."key" || ': ' || o."value" AS text FROM "Knowledge" o`,
  summary: `SELECT o."id" AS id, o."content" AS text FROM "Summary" o`,
}
const OWNER_TABLE: Record<EmbeddingKind, string> = {
  memory: 'MemoryItem',
  message: 'Message',
  knowledge: 'Knowledge',
  summary: 'Summary',
}

/**
 * The EmbeddingRepository port on SQLite: owners are rows of "MemoryItem", "Message",
 * "Knowledge" and "Summary", their vectors rows of "Embedding", the cache "EmbeddingCache". The owner queries
 * join the vectors in SQL, so finding what lacks a vector never reads vectors.
 */
export class SqliteEmbeddingRepository implements EmbeddingRepository {
  constructor(
    private readonly db: Database,
    private readonly queue: SqliteJobQueue,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {}

  async ownerTexts(kind: EmbeddingKind, model: string, ownerIds: readonly number[]): Promise<OwnerText[]> {
    if (ownerIds.length === 0) return []
    const rows = await this.db.$queryRawUnsafe<
      { id: number | bigint; agentId: string; text: string; embeddedHash: string | null }[]
    >(
      `${OWNER_TEXT[kind].replace('SELECT ', 'SELECT o."agentId" AS "agentId", e."contentHash" AS "embeddedHash", ')}
        LEFT JOIN "Embedding" e ON e."kind" = ? AND e."ownerId" = o."id" AND e."model" = ?
        WHERE o."id" IN (${ownerIds.map(() => '?').join(', ')})`,
      kind,
      model,
      ...ownerIds,
    )
    return rows.map((row) => ({ ...row, id: Number(row.id) }))
  }

  async missing(
    agentId: string | null,
    kind: EmbeddingKind,
    model: string,
    limit: number,
    afterId: number,
  ): Promise<OwnerToFill[]> {
    return this.db.$queryRawUnsafe<OwnerToFill[]>(
      `${OWNER_TEXT[kind].replace('SELECT ', 'SELECT o."agentId" AS "agentId", ')}
        WHERE ${agentId ? 'o."agentId" = ? AND ' : ''}o."id" > ? AND NOT EXISTS (
          SELECT 1 FROM "Embedding" e WHERE e."kind" = ? AND e."ownerId" = o."id" AND e."model" = ?)
        ORDER BY o."id" LIMIT ?`,
      ...[...(agentId ? [agentId] : []), afterId, kind, model, limit],
    )
  }

  async coverage(
    agentId: string | null,
    kind: EmbeddingKind,
    model: string,
  ): Promise<{ total: number; embedded: number }> {
    const where = agentId ? `WHERE o."agentId" = ?` : ''
    const [row] = await this.db.$queryRawUnsafe<{ total: number; embedded: number }[]>(
      `SELECT COUNT(*) AS total, COUNT(e."ownerId") AS embedded FROM "${OWNER_TABLE[kind]}" o
         LEFT JOIN "Embedding" e ON e."kind" = ? AND e."ownerId" = o."id" AND e."model" = ?
         ${where}`,
      ...[kind, model, ...(agentId ? [agentId] : [])],
    )
    return { total: Number(row?.total ?? 0), embedded: Number(row?.embedded ?? 0) }
  }

  async queueMissing(agentId: string | null, model: string, jobKind: string): Promise<number> {
    let added = 0
    for (const kind of EMBEDDING_KINDS) {
      added += await this.queue.enqueueSelect(
        jobKind,
        `SELECT o."agentId" AS "agentId", '${kind}:' || o."id" AS key,
            ${this.dialect.jsonObject([
              ['kind', `'${kind}'`],
              ['ownerId', 'o."id"'],
            ])} AS payload
          FROM "${OWNER_TABLE[kind]}" o
          WHERE ${agentId ? 'o."agentId" = ? AND ' : ''}NOT EXISTS (
            SELECT 1 FROM "Embedding" e WHERE e."kind" = '${kind}' AND e."ownerId" = o."id" AND e."model" = ?)`,
        [...(agentId ? [agentId] : []), model],
      )
    }
    return added
  }

  async cached(agentId: string, model: string, contentHashes: readonly string[]): Promise<CachedVector[]> {
    const rows = await this.db.embeddingCache.findMany({
      where: { agentId, model, contentHash: { in: [...contentHashes] } },
    })
    return rows.map((row) => ({
      agentId: row.agentId,
      model: row.model,
      contentHash: row.contentHash,
      vector: bytesToVector(row.vector),
      createdAt: row.createdAt,
    }))
  }

  async cache(vectors: readonly CachedVector[]): Promise<void> {
    for (let start = 0; start < vectors.length; start += CACHE_INSERT_ROWS) {
      const chunk = vectors.slice(start, start + CACHE_INSERT_ROWS)
      await this.db.$executeRawUnsafe(
        `INSERT INTO "EmbeddingCache" ("agentId", "model", "contentHash", "dimensions", "vector", "createdAt")
          VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING`,
        ...chunk.flatMap((row) => [
          row.agentId,
          row.model,
          row.contentHash,
          row.vector.length,
          vectorToBytes(row.vector) as Uint8Array<ArrayBuffer>,
          sqliteDate(row.createdAt),
        ]),
      )
    }
  }

  async uncache(agentId: string, contentHashes: readonly string[]): Promise<number> {
    if (contentHashes.length === 0) return 0
    const { count } = await this.db.embeddingCache.deleteMany({
      where: { agentId, contentHash: { in: [...contentHashes] } },
    })
    return count
  }

  async hasOtherModels(model: string): Promise<boolean> {
    const other = await this.db.embedding.findFirst({
      where: { model: { not: model } },
      select: { kind: true },
    })
    return other !== null
  }

  async removeOtherModels(model: string): Promise<number> {
    const { count } = await this.db.embedding.deleteMany({ where: { model: { not: model } } })
    return count
  }
}
