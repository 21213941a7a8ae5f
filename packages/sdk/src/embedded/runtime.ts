/**
 * What the embedded client needs of the engine it runs, and nothing more: execute a catalog
 * operation's document for a principal, subscribe to one, and close. `wiring.ts` provides it
 * (TEMPORARY: today over apps/api's services and schema; at the merge over `createEngine`).
 */
/** The engine's clock (@engram/core's Clock), restated so the published types need no engine. */
export interface Clock {
  now(): Date
}

/** An embedding provider (@engram/core's Embedder), restated for the same reason. */
export interface Embedder {
  /** Identifies the vectors' space: vectors of two models are never compared. */
  readonly model: string
  readonly dimensions: number
  embed(texts: readonly string[]): Promise<Float32Array[]>
}

export interface OpenOptions {
  /** The SQLite file; created and migrated when new. */
  path: string
  /** The embedding provider (default: the offline hashing embedder with WordNet synonyms, as the server). */
  embedder?: Embedder
  /** Time as the engine sees it (tests move it by hand). */
  clock?: Clock
  /** How often the optimizer runs by itself, in ms (0: only when asked; default as the server). */
  optimizerIntervalMs?: number
  /** `o200k_base` (default) or `cl100k_base`: how tokens are counted. */
  tokenizer?: 'o200k_base' | 'cl100k_base'
  /** Where backupDatabase writes (default: `backups/` beside the file). */
  backupDirectory?: string
  /** Where the engine's log lines go (default: nowhere). */
  log?: { info(...args: unknown[]): void; warn(...args: unknown[]): void; error(...args: unknown[]): void }
}

/** Who an operation acts as: one agent, or the operator (the process that owns the file). */
export type Principal = { kind: 'agent'; agentId: string } | { kind: 'operator' }

export interface ExecutionAnswer {
  data?: { result?: unknown } | null
  errors?: { message: string; extensions?: { code?: unknown; issues?: never } }[]
}

export interface EmbeddedRuntime {
  /** Makes the principal known (an agent is created on first use). */
  ensure(principal: Principal): Promise<void>
  execute(
    document: string,
    variables: Record<string, unknown>,
    principal: Principal,
  ): Promise<ExecutionAnswer>
  /** A stream of answers, or one answer when the subscription is refused. */
  subscribe(
    document: string,
    variables: Record<string, unknown>,
    principal: Principal,
  ): Promise<
    | { next(): Promise<IteratorResult<ExecutionAnswer>>; return(): Promise<IteratorResult<ExecutionAnswer>> }
    | ExecutionAnswer
  >
  /**
   * Waits for the background work queued so far: what the agent (every agent: null) wrote gets its
   * vector, and index builds finish.
   */
  settle(agentId: string | null): Promise<void>
  close(): Promise<void>
}
