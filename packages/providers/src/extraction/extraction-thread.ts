import type { MessagePort } from 'node:worker_threads'
import {
  type CandidateMemory,
  type ConversationTurn,
  extractMemoriesOffline,
  type OfflineExtractorOptions,
} from '@engram/core'

/** What the pool sends a worker: one extractor call. */
export interface ExtractionRequest {
  id: number
  turns: ConversationTurn[]
  options: OfflineExtractorOptions
}

/** What a worker answers: `ready` once (the model is loaded), then one reply per request. */
export type ExtractionReply =
  | { type: 'ready' }
  | { type: 'done'; id: number; candidates: CandidateMemory[] }
  | { type: 'failed'; id: number; error: string }

/**
 * In the worker: answers extractor calls until the port closes. The wink model loads once, on the
 * warm-up call before `ready`, so the first real batch does not pay for it.
 */
export function serveExtraction(port: MessagePort): void {
  extractMemoriesOffline(
    [{ id: 'warm-up', speaker: 'warm-up', content: 'I live in Paris.', timestamp: new Date(0) }],
    {
      now: new Date(0),
    },
  )
  port.on('message', (request: ExtractionRequest) => {
    let reply: ExtractionReply
    try {
      reply = {
        type: 'done',
        id: request.id,
        candidates: extractMemoriesOffline(request.turns, request.options),
      }
    } catch (error) {
      reply = {
        type: 'failed',
        id: request.id,
        error: error instanceof Error ? error.message : String(error),
      }
    }
    port.postMessage(reply)
  })
  port.postMessage({ type: 'ready' } satisfies ExtractionReply)
}
