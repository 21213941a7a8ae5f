/**
 * What the embedded client needs of the engine it runs, and nothing more: answer a catalog
 * operation for a principal, subscribe to one, and close. `engine-runtime.ts` provides it over the
 * engine's operations layer. The types here are restated, not imported, so the published
 * declarations need no engine.
 */
import type { OperationName, Result } from '@engram/contract'

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
  /**
   * Spec 002's context builder's rules (memoryContext's buildContext; docs/context-builders.md), as
   * the server's ENGRAM_CONTEXT_WINDOW and ENGRAM_CONTEXT_BUILDER_RULES; checked when opening.
   */
  contextBuilder?: ContextBuilderOptions
}

/** @engram/core's ContextBuilderRules, any subset, restated so the published types need no engine. */
export interface ContextBuilderOptions {
  contextWindow?: number
  systemReserveShare?: number
  systemReserveMaxTokens?: number
  tokensPerTool?: number
  outputReserveShare?: number
  outputReserveMaxTokens?: number
  memoryShare?: number
  candidateLimit?: number
  summaryMaxTokens?: number
  weights?: { recency?: number; similarity?: number; importance?: number }
}

/** Who an operation acts as: one agent, or the operator (the process that owns the file). */
export type Principal = { kind: 'agent'; agentId: string } | { kind: 'operator' }

export interface EmbeddedRuntime {
  /** Makes the principal known (an agent is created on first use). */
  ensure(principal: Principal): Promise<void>
  /** A query or mutation's answer, as the catalog's output or a typed failure. */
  call(name: OperationName, principal: Principal, input: unknown): Promise<Result<unknown>>
  /** A subscription's events; a refusal or the end of access is a failure event, the last one. */
  subscribe(name: OperationName, principal: Principal, input: unknown): AsyncIterableIterator<Result<unknown>>
  /**
   * Waits for the background work queued so far: what the agent (every agent: null) wrote gets its
   * vector, and index builds finish.
   */
  settle(agentId: string | null): Promise<void>
  close(): Promise<void>
}
