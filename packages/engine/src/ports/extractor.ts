import {
  type CandidateMemory,
  type ConversationTurn,
  extractMemoriesOffline,
  type OfflineExtractorOptions,
} from '@engram/core'

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
