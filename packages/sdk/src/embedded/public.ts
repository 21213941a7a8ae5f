/**
 * The public surface of `@engram/sdk/embedded`, as types: what the published declarations are made
 * from (index.ts implements it, and checks that it does; the engine it wires never reaches a
 * user's type checker).
 */
import type { EmbeddedEngram } from './client.ts'
import type { OpenOptions } from './runtime.ts'

export type { EmbeddedEngram } from './client.ts'
export type {
  Clock,
  ContextBuilderOptions,
  Embedder,
  OpenOptions as EmbeddedRuntimeOptions,
} from './runtime.ts'

export interface OpenEmbeddedOptions extends OpenOptions {
  /**
   * The agent this client acts for, as an agent key does: operations naming another agent are
   * FORBIDDEN and operator work (keys, agents, backups) too. Default `default`.
   */
  agentId?: string
  /**
   * Act as the operator instead (an admin key's rights): each call names its agent (`agentId`),
   * and keys, agents and backups may be managed. The process owns the file, so it may.
   */
  operator?: boolean
}

/** Opens the file (created and migrated when new) and starts the engine's background work. */
export declare function open(options: OpenEmbeddedOptions): Promise<EmbeddedEngram>

/** The agent an embedded client acts for when none is named. */
export declare const DEFAULT_AGENT_ID: 'default'

/** `Engram.open({ path })`, beside `Engram.connect` of `@engram/sdk`. */
export declare const Engram: { open: typeof open }
