import type { JobWorker } from '../jobs/job-worker.ts'
import { EMBEDDING_KINDS, type EmbeddingKind, type EmbeddingRepository } from '../ports/embeddings.ts'
import type { JobQueue, NewJob } from '../ports/job-queue.ts'
import type { EmbeddingJobs, EmbeddingService } from './embedding-service.ts'

/** Gives a memory, message, knowledge or summary row its vector (of the current model). */
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

/**
 * Queues a job for every row (of an agent, or of all when null) that has no vector of the model:
 * after an import, after a start (anything a crash or an outage left behind), after a re-embed
 * that failed for some rows.
 */
export function enqueueMissingEmbeddings(
  repository: EmbeddingRepository,
  model: string,
  agentId: string | null,
): Promise<number> {
  return repository.queueMissing(agentId, model, EMBED_JOB)
}

/** Embed jobs per kind of row (of an agent, or all): queued (pending or running) and dead-lettered. */
export async function embedJobCounts(
  queue: JobQueue,
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

/**
 * The embedding service's side of the queue, wired: writes queue embed jobs, a search runs its
 * agent's, coverage counts them. Registers the embed job kind on the worker.
 */
export function wireEmbedJobs(
  embeddings: EmbeddingService,
  worker: JobWorker,
  queue: JobQueue,
  repository: EmbeddingRepository,
): EmbeddingJobs {
  registerEmbedJobs(worker, embeddings)
  const jobs: EmbeddingJobs = {
    enqueue: (agentId, kind, ownerIds) => queue.enqueue(ownerIds.map((id) => embedJob(agentId, kind, id))),
    enqueueMissing: (agentId) => enqueueMissingEmbeddings(repository, embeddings.model, agentId),
    runFor: (agentId) => worker.runFor(EMBED_JOB, agentId, EMBED_JOBS_PER_SEARCH),
    counts: (agentId) => embedJobCounts(queue, agentId),
    cancel: (agentId, kind, ownerIds) =>
      queue.cancel(
        agentId,
        ownerIds.map((id) => embedJob(agentId, kind, id).key),
      ),
  }
  embeddings.useJobs(jobs)
  return jobs
}
