import type { NewJob } from '@engram/core'
import type { JobWorker } from '@engram/engine'
import type { SqliteJobQueue } from '@engram/store-sqlite'
import { EMBEDDING_KINDS, type EmbeddingKind, type EmbeddingService } from '../services/embedding-service.ts'

/** Gives a memory, message or knowledge row its vector (of the current model). */
export const EMBED_JOB = 'embed'

/**
 * Texts per provider call. Remote providers take batches of this size comfortably (OpenAI allows
 * 2,048 inputs); a failing batch is retried as a whole, so it stays moderate.
 */
export const EMBED_JOB_BATCH = 128

/** Jobs a search runs for its agent before it searches; the rest are left to the worker. */
export const EMBED_JOBS_PER_SEARCH = 256

export interface EmbedPayload {
  kind: EmbeddingKind
  ownerId: number
}

/** The job for one row. The key is the row: two embeddings of one row never run at once. */
export function embedJob(agentId: string, kind: EmbeddingKind, ownerId: number): NewJob {
  return { kind: EMBED_JOB, agentId, key: `${kind}:${ownerId}`, payload: { kind, ownerId } }
}

/** The rows a kind's embed jobs are about (table, and the text column expression for SELECTs). */
const OWNER_TABLE: Record<EmbeddingKind, string> = {
  memory: 'MemoryItem',
  message: 'Message',
  knowledge: 'Knowledge',
}

/**
 * Queues a job for every row (of an agent, or of all when null) that has no vector of the model:
 * after an import, after a start (anything a crash or an outage left behind), after a re-embed
 * that failed for some rows.
 */
export async function enqueueMissingEmbeddings(
  queue: SqliteJobQueue,
  model: string,
  agentId: string | null,
): Promise<number> {
  let added = 0
  for (const kind of EMBEDDING_KINDS) {
    added += await queue.enqueueSelect(
      EMBED_JOB,
      `SELECT o."agentId" AS agentId, '${kind}:' || o."id" AS key,
          json_object('kind', '${kind}', 'ownerId', o."id") AS payload
        FROM "${OWNER_TABLE[kind]}" o
        WHERE ${agentId ? 'o."agentId" = ? AND ' : ''}NOT EXISTS (
          SELECT 1 FROM "Embedding" e WHERE e."kind" = '${kind}' AND e."ownerId" = o."id" AND e."model" = ?)`,
      [...(agentId ? [agentId] : []), model],
    )
  }
  return added
}

/** Embed jobs per kind of row (of an agent, or all): queued (pending or running) and dead-lettered. */
export async function embedJobCounts(
  queue: SqliteJobQueue,
  agentId: string | null,
): Promise<Map<EmbeddingKind, { queued: number; failed: number }>> {
  const rows = await queue.countByPayload(EMBED_JOB, 'kind', agentId)
  const counts = new Map<EmbeddingKind, { queued: number; failed: number }>()
  for (const row of rows) {
    if (!EMBEDDING_KINDS.includes(row.value as EmbeddingKind)) continue
    const entry = counts.get(row.value as EmbeddingKind) ?? { queued: 0, failed: 0 }
    if (row.state === 'failed') entry.failed += row.count
    else entry.queued += row.count
    counts.set(row.value as EmbeddingKind, entry)
  }
  return counts
}

/** Registers the embed kind: a batch of jobs is embedded in one provider call. */
export function registerEmbedJobs(worker: JobWorker, embeddings: EmbeddingService): void {
  worker.register(
    EMBED_JOB,
    async (jobs) => {
      const owners = jobs.flatMap((job) => {
        const { kind, ownerId } = job.payload as Partial<EmbedPayload>
        if (!EMBEDDING_KINDS.includes(kind as EmbeddingKind) || !Number.isSafeInteger(ownerId)) return []
        return [
          { jobId: job.id, agentId: job.agentId, kind: kind as EmbeddingKind, ownerId: ownerId as number },
        ]
      })
      // A payload that names no row has nothing to do: done, not retried.
      return { failed: await embeddings.embedOwners(owners) }
    },
    { batchSize: EMBED_JOB_BATCH, maxAttempts: 8, backoffBaseMs: 5_000, backoffMaxMs: 15 * 60_000 },
  )
}
