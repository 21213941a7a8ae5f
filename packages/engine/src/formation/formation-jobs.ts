import type { NewJob } from '@engram/core'
import type { JobWorker } from '../jobs/job-worker.ts'
import type { FormationService } from './formation-service.ts'

/** Reads a conversation's new turns and forms memories from them (issue 13 §2). */
export const EXTRACT_JOB = 'extract'

/**
 * Conversations a worker takes in one claim. Each is extracted on its own (its turns, its
 * speakers); the batch only saves claims when many conversations are waiting.
 */
export const EXTRACT_JOB_BATCH = 8

export interface ExtractPayload {
  conversationId: string
}

/**
 * One job per conversation: the key is the conversation, so its extractions never overlap and a
 * burst of turns postpones the one pending job (the debounce) instead of queueing one per turn.
 */
export function extractJobKey(conversationId: string): string {
  return `${EXTRACT_JOB}:${conversationId}`
}

export function extractJob(agentId: string, conversationId: string, runAfter: Date): NewJob {
  return {
    kind: EXTRACT_JOB,
    agentId,
    key: extractJobKey(conversationId),
    // Only the conversation's id: the turns stay in the conversation, so deleting it leaves no
    // copy of what was said in the queue.
    payload: { conversationId },
    runAfter,
    postpone: true,
  }
}

/** Registers the extract kind: each job extracts its conversation's turns past the watermark. */
export function registerExtractJobs(worker: JobWorker, formation: FormationService): void {
  worker.register(
    EXTRACT_JOB,
    async (jobs) => {
      const failed = new Map<number, string>()
      for (const job of jobs) {
        const { conversationId } = job.payload as Partial<ExtractPayload>
        // A payload naming no conversation has nothing to do: done, not retried.
        if (typeof conversationId !== 'string' || conversationId.length === 0) continue
        try {
          // The agent is the job's, never the payload's: a job only reaches its own agent's turns.
          await formation.extractConversation(job.agentId, conversationId, formation.callsPerJob)
        } catch (error) {
          failed.set(job.id, error instanceof Error ? error.message : String(error))
        }
      }
      return { failed }
    },
    { batchSize: EXTRACT_JOB_BATCH, maxAttempts: 5, backoffBaseMs: 5_000, backoffMaxMs: 15 * 60_000 },
  )
}
