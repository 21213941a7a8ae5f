import { ForbiddenError } from '@engram/core'
import type { AgentService } from '../agents/agent-service.ts'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { EngramEvents, EventBus } from '../ports/event-bus.ts'

type Step<From extends string, T> = { from: From; step: IteratorResult<T> }

const NEVER = new Promise<never>(() => {})

/**
 * A subscription over the engine's event bus: each event of `topic` the scope wants, shaped for
 * the client (`shape` answers null for an event that is not for this subscriber). It registers on
 * the bus at once, so an event published right after the call is not missed; `scope` (the agent
 * watched, null for all) is awaited before the first event and its refusal is thrown there. When
 * access changes anywhere (an agent deleted, a restore), a stream scoped to an agent that is gone
 * ends with FORBIDDEN: a later agent given the same id is another owner.
 */
export function eventStream<Topic extends keyof EngramEvents & string, Out>(
  engine: {
    events: EventBus
    agents: Pick<AgentService, 'findAgent'>
    writes: Pick<AgentWrites, 'incarnation'>
  },
  topic: Topic,
  scope: Promise<string | null>,
  shape: (event: EngramEvents[Topic][0], agentId: string | null) => Out | null,
): AsyncIterableIterator<Out> {
  const events = engine.events.subscribe(topic)[Symbol.asyncIterator]()
  const access = engine.events.subscribe('access:changed')[Symbol.asyncIterator]()
  scope.catch(() => {})
  // What the scope rests on (the agent's incarnation and creation time), read once when the first
  // event is asked for: a door may create the agent between subscribing and reading.
  interface Watched {
    agentId: string | null
    incarnation: string | null
    createdAt: number | null
  }
  let watched: Promise<Watched> | null = null
  const readWatched = (): Promise<Watched> =>
    scope.then(async (agentId) => {
      if (!agentId) return { agentId, incarnation: null, createdAt: null }
      const agent = await engine.agents.findAgent(agentId)
      return {
        agentId,
        incarnation: engine.writes.incarnation(agentId),
        createdAt: agent ? agent.createdAt.getTime() : null,
      }
    })
  let pendingEvent: Promise<Step<'event', EngramEvents[Topic][0]>> | null = null
  let pendingAccess: Promise<Step<'access', unknown>> | null = null
  let finished = false

  async function close(): Promise<IteratorResult<Out>> {
    if (!finished) {
      finished = true
      await Promise.all([events.return?.(), access.return?.()])
    }
    return { done: true, value: undefined }
  }

  const stream: AsyncIterableIterator<Out> = {
    async next() {
      if (finished) return { done: true, value: undefined }
      let scoped: Watched
      try {
        watched ??= readWatched()
        scoped = await watched
      } catch (error) {
        await close()
        throw error
      }
      for (;;) {
        pendingEvent ??= events.next().then((step) => ({ from: 'event' as const, step }))
        pendingAccess ??= access.next().then((step) => ({ from: 'access' as const, step }))
        const winner = await Promise.race([pendingEvent, pendingAccess])
        if (finished) return { done: true, value: undefined }
        if (winner.from === 'access') {
          // A closed bus never speaks again: stop listening to it rather than spin.
          pendingAccess = winner.step.done ? NEVER : null
          if (!scoped.agentId) continue
          const agent = await engine.agents.findAgent(scoped.agentId)
          if (
            !agent ||
            agent.createdAt.getTime() !== scoped.createdAt ||
            engine.writes.incarnation(scoped.agentId) !== scoped.incarnation
          ) {
            await close()
            throw new ForbiddenError(`agent ${scoped.agentId} was deleted`)
          }
          continue
        }
        pendingEvent = null
        if (winner.step.done) return close()
        const shaped = shape(winner.step.value, scoped.agentId)
        if (shaped !== null) return { done: false, value: shaped }
      }
    },
    return: close,
    [Symbol.asyncIterator]() {
      return stream
    },
  }
  return stream
}

/**
 * A stream whose events are shaped asynchronously (a subscriber that re-reads what an event
 * names): each event in order, those `shape` answers null for skipped. Ending it ends the source.
 */
export function shapeEach<In, Out>(
  source: AsyncIterableIterator<In>,
  shape: (event: In) => Promise<Out | null>,
): AsyncIterableIterator<Out> {
  const stream: AsyncIterableIterator<Out> = {
    async next() {
      for (;;) {
        const step = await source.next()
        if (step.done) return { done: true, value: undefined }
        const shaped = await shape(step.value)
        if (shaped !== null) return { done: false, value: shaped }
      }
    },
    async return() {
      await source.return?.()
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]() {
      return stream
    },
  }
  return stream
}
