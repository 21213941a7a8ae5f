/**
 * Where the engine reports what it observes for operators (issue 17 §3): the API door implements
 * it with a Prometheus registry (`apps/api/src/metrics/`), tests with a recorder, and an engine
 * without one reports nowhere. Labels are closed sets named here, never ids: an agent's, a pool's
 * or a conversation's id must not become a metrics label (deleting an agent leaves no series).
 *
 * Every method is synchronous and cheap (a counter increment): callers sit on hot paths.
 */
export interface Telemetry {
  /** A lookup in one of the engine's caches, hit or miss (the hit rate is hits / lookups). */
  cacheLookup(cache: TelemetryCache, hit: boolean): void
  /** One search of one scope by one strategy (lexical, vector, hybrid...), in seconds. */
  searchObserved(scope: string, strategy: string, seconds: number): void
  /** Tokens the optimizer's compression saved in one run. */
  tokensSaved(tokens: number): void
  /** A background job finished: its kind (extract, summary, profile, graph, embed...) and outcome. */
  jobFinished(kind: string, outcome: JobOutcome): void
  /** The working context (L1) flushed to the stored conversation: why, and how many tokens. */
  workingContextFlushed(reason: 'threshold' | 'request', tokens: number): void
}

/** The caches whose hit rates operators watch: the memory context, embeddings, L1 and Redis L2. */
export type TelemetryCache = 'context' | 'embedding' | 'working_context' | 'episodic'

export type JobOutcome = 'done' | 'failed' | 'retried'

/** Reports nowhere: the engine's default. */
export const NO_TELEMETRY: Telemetry = {
  cacheLookup() {},
  searchObserved() {},
  tokensSaved() {},
  jobFinished() {},
  workingContextFlushed() {},
}
