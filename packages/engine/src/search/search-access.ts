import type { Clock } from '@engram/core'
import { z } from 'zod'
import type { Logger } from '../ports/logger.ts'
import type { RecalledMemoryItem } from '../ports/recall-sources.ts'
import { repeat, schedulerOf } from '../scheduling/scheduler.ts'
import type { SearchMemories } from './collaborators.ts'

// Access tracking off the request path (issue 18): a search hit on a memory is an access (spec
// 003), but writing it was two statements inside every search. The hits now show the counts as
// they will be, and the writes are buffered and flushed together.

export const DEFAULT_ACCESS_FLUSH = {
  /** How long search accesses wait before they are written (on the injectable clock). */
  flushIntervalMs: 1_000,
  /** Accesses held at most: past this many (memory, agent) pairs the next search flushes at once. */
  maxPending: 10_000,
} as const

export const AccessFlushConfigSchema = z.object({
  flushIntervalMs: z.number().int().min(0).max(60_000).default(DEFAULT_ACCESS_FLUSH.flushIntervalMs),
  maxPending: z.number().int().min(1).max(1_000_000).default(DEFAULT_ACCESS_FLUSH.maxPending),
})
export type AccessFlushConfig = z.infer<typeof AccessFlushConfigSchema>

/**
 * Search's memory accesses, counted in memory per agent and written by `flush()`: when a search
 * finds the last flush `flushIntervalMs` ago on the clock, when `maxPending` pairs are held, on the
 * server's timer (start) and on shutdown (stop). 0 ms writes within the search, as before.
 *
 * A flush only increments rows that still exist (the store's UPDATE is by the agent's ids), so it
 * cannot bring a deleted memory back; deletions also drop what is pending for the memory or the
 * agent (`forget`), so nothing of a deleted agent is kept here past its deletion.
 */
export class AccessBuffer {
  private pending = new Map<string, Map<string, number>>()
  private size = 0
  private lastFlush: number
  private flushing: Promise<void> = Promise.resolve()
  /** Cancels the flush timer (null while not started). */
  private timer: (() => void) | null = null

  constructor(
    private readonly memories: SearchMemories,
    private readonly clock: Clock,
    private readonly config: AccessFlushConfig = AccessFlushConfigSchema.parse({}),
    private readonly log: Pick<Logger, 'warn'> = { warn: () => {} },
  ) {
    this.lastFlush = clock.now().getTime()
  }

  /**
   * Counts one access of each item and returns the items as they read after it (the store's
   * count, plus what is pending, plus this one; accessed now): what the hits show.
   */
  async record(agentId: string, items: readonly RecalledMemoryItem[]): Promise<RecalledMemoryItem[]> {
    if (items.length === 0) return []
    if (this.config.flushIntervalMs === 0) {
      const updated = new Map(
        (
          await this.memories.recordAccess(
            agentId,
            items.map((m) => Number(m.id)),
          )
        ).map((m) => [m.id, m]),
      )
      return items.map((m) => updated.get(m.id) ?? m)
    }
    const now = this.clock.now()
    let counts = this.pending.get(agentId)
    if (!counts) {
      counts = new Map()
      this.pending.set(agentId, counts)
    }
    const out: RecalledMemoryItem[] = []
    for (const item of items) {
      const held = counts.get(item.id) ?? 0
      if (held === 0) this.size++
      counts.set(item.id, held + 1)
      out.push({ ...item, accessCount: item.accessCount + held + 1, lastAccessedAt: now })
    }
    if (this.size >= this.config.maxPending || now.getTime() - this.lastFlush >= this.config.flushIntervalMs)
      void this.flush().catch((error) => this.log.warn('[search] writing accesses failed:', error))
    return out
  }

  /** Accesses of the item not yet written (what a read of the row does not show yet). */
  pendingOf(agentId: string, id: string): number {
    return this.pending.get(agentId)?.get(id) ?? 0
  }

  /** Drops pending accesses of deleted memories, or of a whole agent (every agent's when none is named). */
  forget(agentId?: string, ids?: readonly string[]): void {
    if (agentId === undefined) {
      this.pending.clear()
      this.size = 0
      return
    }
    const counts = this.pending.get(agentId)
    if (!counts) return
    if (!ids) {
      this.size -= counts.size
      this.pending.delete(agentId)
      return
    }
    for (const id of ids) if (counts.delete(id)) this.size--
  }

  /**
   * Writes every pending access: one store call per agent and count (an item found 3 times
   * since the last flush is in 3 calls), stamped at the flush's time. Flushes run one at a time.
   */
  flush(): Promise<void> {
    const run = this.flushing.then(async () => {
      this.lastFlush = this.clock.now().getTime()
      const taken = this.pending
      this.pending = new Map()
      this.size = 0
      for (const [agentId, counts] of taken) {
        for (let round = 1; counts.size > 0; round++) {
          const ids = [...counts].filter(([, n]) => n >= round).map(([id]) => Number(id))
          if (ids.length === 0) break
          await this.memories.recordAccess(agentId, ids)
        }
      }
    })
    this.flushing = run.catch(() => {})
    return run
  }

  /**
   * Flushes on a timer too (the server's; the clock's scheduler, so a test's manual clock fires
   * it), so accesses of an idle server are written.
   */
  start(): void {
    if (this.timer || this.config.flushIntervalMs === 0) return
    this.timer = repeat(schedulerOf(this.clock), this.config.flushIntervalMs, () => {
      this.flush().catch((error) => this.log.warn('[search] writing accesses failed:', error))
    })
  }

  /** Stops the timer and writes what is pending (shutdown). */
  async stop(): Promise<void> {
    this.timer?.()
    this.timer = null
    await this.flush()
  }
}
