import type { MessagePort } from 'node:worker_threads'
import {
  type CandidateMemory,
  type ConversationTurn,
  createTokenCounter,
  extractMemoriesOffline,
  type OfflineExtractorOptions,
  type SummaryStrategy,
  type SummaryTurn,
  type TokenCounter,
  type TokenizerName,
  writeOfflineSummary,
} from '@engram/core'

/** A summary written without a model: the strategy's shape, its budget, the tokenizer counting it. */
export interface OfflineSummaryRequestOptions {
  strategy: SummaryStrategy
  maxTokens: number
  tokenizer: TokenizerName
}

/** What the pool sends a worker: one extractor call, or one offline summary. */
export type ExtractionRequest =
  | { id: number; task: 'extract'; turns: ConversationTurn[]; options: OfflineExtractorOptions }
  | { id: number; task: 'summarize'; turns: SummaryTurn[]; options: OfflineSummaryRequestOptions }

/** The work a pool's threads do: extraction and summaries (issue 13 §2, §3). */
export type FormationTask = ExtractionRequest['task']

/** What a worker answers: `ready` once (the model is loaded), then one reply per request. */
export type ExtractionReply =
  | { type: 'ready' }
  | { type: 'done'; id: number; candidates: CandidateMemory[] }
  | { type: 'summarized'; id: number; summary: string }
  | { type: 'failed'; id: number; error: string }

/**
 * In the worker: answers extractor and summary calls until the port closes. The wink model loads
 * once, on the warm-up call before `ready`, so the first real batch does not pay for it; a
 * tokenizer's ranks load on the first summary that counts with it, and are kept.
 */
export function serveExtraction(port: MessagePort): void {
  extractMemoriesOffline(
    [{ id: 'warm-up', speaker: 'warm-up', content: 'I live in Paris.', timestamp: new Date(0) }],
    {
      now: new Date(0),
    },
  )
  const counters = new Map<TokenizerName, TokenCounter>()
  const counter = (name: TokenizerName) => {
    let found = counters.get(name)
    if (!found) {
      found = createTokenCounter(name)
      counters.set(name, found)
    }
    return found
  }
  port.on('message', async (request: ExtractionRequest) => {
    let reply: ExtractionReply
    try {
      if (request.task === 'summarize') {
        const tokens = counter(request.options.tokenizer)
        reply = {
          type: 'summarized',
          id: request.id,
          summary: await writeOfflineSummary(request.turns, {
            strategy: request.options.strategy,
            maxTokens: request.options.maxTokens,
            countTokens: (text) => tokens.count(text),
          }),
        }
      } else {
        reply = {
          type: 'done',
          id: request.id,
          candidates: extractMemoriesOffline(request.turns, request.options),
        }
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
