/**
 * `@engram/sdk/embedded`: the engine in this process on one SQLite file. A subpath of its own, so
 * code that only connects to a server never loads the native modules (better-sqlite3,
 * hnswlib-node, Prisma's runtime) this needs.
 */
import { AGENT_ID_PATTERN } from '@engram/contract'
import { type EmbeddedEngram, embeddedClient } from './client.ts'
import type { OpenOptions } from './runtime.ts'
import { openRuntime } from './wiring.ts'

export type { EmbeddedEngram } from './client.ts'
export type { OpenOptions as EmbeddedRuntimeOptions } from './runtime.ts'

/** The agent an embedded client acts for when none is named. */
export const DEFAULT_AGENT_ID = 'default'

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
export async function open(options: OpenEmbeddedOptions): Promise<EmbeddedEngram> {
  const agentId = options.agentId ?? DEFAULT_AGENT_ID
  if (!options.operator && !AGENT_ID_PATTERN.test(agentId))
    throw new TypeError(`agentId "${agentId}" must be a lowercase slug: a-z, 0-9, "_" or "-"`)
  const runtime = await openRuntime(options)
  const client = embeddedClient(
    runtime,
    options.operator ? { kind: 'operator' } : { kind: 'agent', agentId },
    true,
  )
  return client
}

export const Engram = { open }
