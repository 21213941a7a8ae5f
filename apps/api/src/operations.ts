import type { OutputOf } from '@engram/contract'
import { ForbiddenError } from '@engram/core'
import type { QueryOrMutationName } from '@engram/engine'
import { principalOf } from './auth.ts'
import type { Context } from './context.ts'

/**
 * A resolver answering through the engine's operations layer (the same handler the embedded SDK
 * calls), so the two doors cannot drift: the caller's key as the principal, the field's arguments
 * as the operation's input. Arguments sent as null count as omitted, as GraphQL's optional
 * arguments do, except those named in `nullMeans`: fields where the catalog gives null a meaning
 * of its own (clear a summary, make a validity bound open).
 */
export function operate<N extends QueryOrMutationName>(
  ctx: Context,
  name: N,
  args: Record<string, unknown> = {},
  nullMeans: readonly string[] = [],
): Promise<OutputOf<N>> {
  const { viewer } = ctx
  if (viewer.kind === 'live')
    throw new ForbiddenError('a live token can only subscribe to optimizer snapshots')
  const input = Object.fromEntries(
    Object.entries(args).filter(
      ([key, value]) => value != null || (value === null && nullMeans.includes(key)),
    ),
  )
  const run = ctx.services.operations[name] as (
    principal: ReturnType<typeof principalOf>,
    input: unknown,
  ) => Promise<OutputOf<N>>
  return run(principalOf(viewer), input)
}
