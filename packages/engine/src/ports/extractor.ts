import {
  type CandidateMemory,
  type ConversationTurn,
  extractMemoriesOffline,
  type OfflineExtractorOptions,
  type SummaryStrategy,
  type SummaryTurn,
  type TokenCounter,
  type TokenizerName,
  writeOfflineSummary,
} from '@engram/core'
import { yieldToRequests } from '../jobs/job-worker.ts'

/**
 * The offline extractor behind a port (issue 13 §2): core's `extractMemoriesOffline` is CPU work
 * (wink-nlp over every sentence, ~1-5 ms a turn) that a server runs off its request thread (a
 * worker-thread pool in @engram/providers) and tests or an embedded library run in process. A
 * failed or refused call rejects: the extract job fails and is retried like any failed job.
 */
export interface OfflineExtractor {
  extract(turns: readonly ConversationTurn[], options: OfflineExtractorOptions): Promise<CandidateMemory[]>
}

/** Core's extractor on the caller's thread: the default, for tests and the embedded SDK. */
export const inProcessExtractor: OfflineExtractor = {
  async extract(turns, options) {
    return extractMemoriesOffline(turns, options)
  },
}

/** What an offline summary is written with: the strategy's shape, the budget and the tokenizer counting it. */
export interface OfflineSummaryOptions {
  strategy: SummaryStrategy
  maxTokens: number
  /** The engine's tokenizer, by name: a worker thread builds the same counter. */
  tokenizer: TokenizerName
}

/**
 * The summary without a model behind a port (issue 13 §3), like the extractor: core's extractive
 * summary in the strategy's shape (Jaccard centrality over every sentence pair, the compressor's
 * key facts) is CPU work a server runs on the same worker threads as extraction. A failed call
 * rejects: the summary job fails and is retried.
 */
export interface OfflineSummarizer {
  summarize(turns: readonly SummaryTurn[], options: OfflineSummaryOptions): Promise<string>
}

/**
 * Core's offline summary on the caller's thread (tests, the embedded SDK), counting with the
 * engine's own counter, and yielding to waiting requests between its steps (a hierarchical or
 * map-reduce summary of a long history is many).
 */
export function inProcessSummarizer(tokenCounter: TokenCounter): OfflineSummarizer {
  return {
    summarize(turns, options) {
      return writeOfflineSummary(turns, {
        strategy: options.strategy,
        maxTokens: options.maxTokens,
        countTokens: (text) => tokenCounter.count(text),
        between: yieldToRequests,
      })
    },
  }
}
