import { randomUUID } from 'node:crypto'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { CacheChange, CacheInvalidateEvent, EventBus } from '../ports/event-bus.ts'
import type { Logger } from '../ports/logger.ts'

/** What this process holds per agent, dropped when another replica changes the agent's rows. */
export interface ReplicaCacheHolders {
  writes: AgentWrites
  /** Rows deleted or replaced there: everything derived from them (AgentLifecycle.dropDerived). */
  dropDerived(agentId?: string): void
  /**
   * Rows added or changed there: what is not keyed by the write version and not read again from
   * the database on its own (cached sessions, the entry-vector index, kept settings).
   */
  dropWritten(agentId: string): void
  /** Settings kept between reads (summaries', formation's switch). */
  dropSettings(agentId: string | null): void
}

/**
 * Cache invalidation across replicas: every change this engine makes to an agent's rows
 * (AgentWrites) is published as `cache:invalidate` with this engine's id, and each such event of
 * another engine drops what this one holds for that agent. It only crosses processes when the
 * event bus does (Redis); wired only then, so a single process pays nothing.
 *
 * The delivery is asynchronous (Redis pub/sub): another replica's next read after the event
 * arrives is fresh; one racing it may be served what was cached just before (milliseconds).
 */
export class ReplicaCaches {
  /** This engine: its own events, delivered back to it by the bus, are skipped. */
  readonly origin = randomUUID()
  private received = 0
  private listening: AsyncIterator<CacheInvalidateEvent> | null = null

  constructor(
    private readonly events: EventBus,
    private readonly holders: ReplicaCacheHolders,
    private readonly log: Logger,
  ) {}

  /** Publishes this engine's changes and listens to the others'. */
  start(): void {
    if (this.listening) return
    this.holders.writes.onChange((agentId, change) =>
      this.events.publish('cache:invalidate', { agentId, change, origin: this.origin }),
    )
    const iterator = this.events.subscribe('cache:invalidate')[Symbol.asyncIterator]()
    this.listening = iterator
    void this.listen(iterator)
  }

  /** Another engine's changes applied here (tests wait on it instead of sleeping). */
  get applied(): number {
    return this.received
  }

  async stop(): Promise<void> {
    const iterator = this.listening
    this.listening = null
    await iterator?.return?.()
  }

  /** Drops what this process holds for the agent after another replica changed its rows. */
  apply(event: CacheInvalidateEvent): void {
    if (event.origin === undefined || event.origin === this.origin) return
    const { writes } = this.holders
    const agentId = typeof event.agentId === 'string' ? event.agentId : null
    const change: CacheChange = event.change ?? (agentId === null ? 'ended' : 'write')
    // The versions and incarnations move as they would have here, without announcing them back.
    writes.quietly(() => {
      if (agentId === null) writes.touchAll()
      else if (change === 'ended') writes.ended(agentId)
      else writes.touch(agentId, change)
    })
    if (agentId !== null && (change === 'write' || change === 'settings')) this.holders.dropWritten(agentId)
    else this.holders.dropDerived(agentId ?? undefined)
    // Kept settings go only when they may have changed: a turn stored there (a `write`, the most
    // frequent event by far) would otherwise make every next turn here read them again.
    if (change !== 'write' || agentId === null) this.holders.dropSettings(agentId)
    this.received++
  }

  private async listen(iterator: AsyncIterator<CacheInvalidateEvent>): Promise<void> {
    try {
      for (;;) {
        const next = await iterator.next()
        if (next.done) return
        try {
          this.apply(next.value)
        } catch (error) {
          this.log.error('[replicas] a cache invalidation was not applied:', error)
        }
      }
    } catch (error) {
      if (this.listening) this.log.error('[replicas] cache invalidations stopped:', error)
    }
  }
}
