/**
 * `@engram/sdk/embedded`: the engine in this process on one SQLite file. A subpath of its own, so
 * code that only connects to a server never loads the native modules (better-sqlite3,
 * hnswlib-node, Prisma's runtime) this needs. Its types are public.ts.
 */
import { AGENT_ID_PATTERN } from '@engram/contract'
import { type EmbeddedEngram, embeddedClient } from './client.ts'
import { openRuntime } from './engine-runtime.ts'
import type * as Public from './public.ts'

export type {
  Clock,
  EmbeddedEngram,
  EmbeddedRuntimeOptions,
  Embedder,
  OpenEmbeddedOptions,
} from './public.ts'

export const DEFAULT_AGENT_ID = 'default'

export async function open(options: Public.OpenEmbeddedOptions): Promise<EmbeddedEngram> {
  const agentId = options.agentId ?? DEFAULT_AGENT_ID
  if (!options.operator && !AGENT_ID_PATTERN.test(agentId))
    throw new TypeError(`agentId "${agentId}" must be a lowercase slug: a-z, 0-9, "_" or "-"`)
  const runtime = await openRuntime(options)
  return embeddedClient(runtime, options.operator ? { kind: 'operator' } : { kind: 'agent', agentId }, true)
}

export const Engram = { open }

// The published declarations are public.ts: the implementation must keep to them.
const implementsPublic: {
  open: typeof Public.open
  DEFAULT_AGENT_ID: typeof Public.DEFAULT_AGENT_ID
  Engram: typeof Public.Engram
} = { open, DEFAULT_AGENT_ID, Engram }
void implementsPublic
