import { type EngramError, ForbiddenError } from '@engram/core'
import { schedulerOf } from '@engram/engine'
import { map, Repeater } from 'graphql-yoga'
import type { Context } from './context.ts'

/**
 * The last event of a subscription whose access ended (a revoked key, an expired token, a deleted
 * agent): its field resolver throws the error, so the client gets it typed, then the stream ends.
 */
export class AccessEnded {
  constructor(readonly error: EngramError) {}
}

/** A subscription field's resolver: events pass through; the end of access is raised as its error. */
export function resolveGuarded<T>(event: T | AccessEnded): T {
  if (event instanceof AccessEnded) throw event.error
  return event
}

/**
 * Wraps a subscription's events so that access is checked again before each one is delivered, and
 * whenever access changes anywhere in this process (a key revoked, an agent deleted, a restore):
 * a subscription outlives neither its key, nor its live token, nor the agent it watches. `agentId`
 * is the agent the subscription is scoped to, if any: a later agent given the same id is another
 * owner, and its events are not for this subscriber.
 */
export async function guardSubscription<T>(
  ctx: Context,
  source: AsyncIterable<T>,
  agentId: string | null,
): Promise<AsyncIterable<T | AccessEnded>> {
  const check = await accessCheck(ctx, agentId)
  const merged = Repeater.merge<AsyncIterable<{ event: T } | null>>([
    map((event: T) => ({ event }) as { event: T } | null)(source),
    map((): { event: T } | null => null)(ctx.services.pubsub.subscribe('access:changed')),
    expiry(ctx),
  ])
  // A Repeater rather than an async generator: a client leaving ends it (and its sources) at once,
  // not at the next event.
  return new Repeater<T | AccessEnded>(async (push, stop) => {
    const items = merged[Symbol.asyncIterator]()
    stop.then(() => items.return?.())
    for (;;) {
      const latest = await items.next()
      if (latest.done) break
      const ended = await check()
      if (ended) {
        await push(new AccessEnded(ended))
        break
      }
      if (latest.value) await push(latest.value.event)
    }
    stop()
  })
}

/**
 * What a subscription's access rests on, read now; the returned check says whether it still holds
 * (null) or why it ended.
 */
async function accessCheck(ctx: Context, agentId: string | null): Promise<() => Promise<EngramError | null>> {
  const { services, viewer } = ctx
  const incarnation = agentId ? services.writes.incarnation(agentId) : null
  const createdAt = agentId ? await agentCreatedAt(ctx, agentId) : null
  return async () => {
    if (viewer.kind === 'live') {
      if (viewer.expiresAt.getTime() <= services.clock.now().getTime())
        return new ForbiddenError(`the live token expired at ${viewer.expiresAt.toISOString()}`)
    } else {
      // Read each time, like every request's key: a key revoked by another process counts too.
      if (!(await services.agents.isKeyActive(viewer.keyId)))
        return new ForbiddenError('the API key of this subscription was revoked')
    }
    if (agentId) {
      const now = await agentCreatedAt(ctx, agentId)
      if (incarnation !== services.writes.incarnation(agentId) || now === null || now !== createdAt)
        return new ForbiddenError(`agent ${agentId} was deleted`)
    }
    return null
  }
}

async function agentCreatedAt(ctx: Context, agentId: string): Promise<number | null> {
  const agent = await ctx.services.agents.findAgent(agentId)
  return agent ? agent.createdAt.getTime() : null
}

/** For a live token: one item when it expires (by the wall clock), so an idle subscription ends too. */
function expiry(ctx: Context): AsyncIterable<null> {
  const { viewer, services } = ctx
  return new Repeater<null>(async (push, stop) => {
    if (viewer.kind !== 'live') {
      await stop
      return
    }
    // On the clock's scheduler (unref'd real timers in the server; a test's manual clock moves it).
    const cancel = schedulerOf(services.clock).setTimer(
      Math.max(0, viewer.expiresAt.getTime() - services.clock.now().getTime()),
      () => void push(null),
    )
    await stop
    cancel()
  })
}
