import { ConversationTimeline, LexicalIndex, type Scheduler } from '@engram/core'
import { LRUCache } from 'lru-cache'
import { z } from 'zod'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { DocumentCursor, FullTextCollection, FullTextIndex } from '../ports/full-text.ts'
import { sleep, systemScheduler } from '../scheduling/scheduler.ts'

export const LexicalIndexCacheConfigSchema = z.object({
  /**
   * How long after a write a held index catches up (ms; 0: right after the writing code). Writes
   * within it share one catch-up: at 2,000 writes/s each would otherwise cost a count of the
   * agent's rows. A search in between catches up itself, so nothing stale is ever served.
   */
  refreshDelayMs: z.number().int().min(0).max(60_000).default(100),
  /** Off: search reads postings from the store per query (the path before issue 18, for comparison). */
  enabled: z.boolean().default(true),
  /**
   * In-process lexical indexes (one per agent and collection) held at most; the least recently
   * searched goes first. An agent not held is rebuilt from the store on its next search.
   */
  maxIndexes: z.number().int().min(1).max(1_000_000).default(256),
  /**
   * Bytes all held indexes take at most (estimated: postings, block bounds, per-document arrays,
   * terms). 100K messages take ~25 MB (docs/speed-lexical18.md).
   */
  maxBytes: z
    .number()
    .int()
    .min(1_000_000)
    .max(2 ** 40)
    .default(1024 * 1024 * 1024),
})
export type LexicalIndexCacheConfig = z.infer<typeof LexicalIndexCacheConfigSchema>

/** What search needs to keep the in-process lexical indexes (SearchServiceDeps extends it). */
export interface LexicalIndexDeps {
  fullText: FullTextIndex
  writes: AgentWrites
  /**
   * The agents' in-process lexical indexes (the engine's, shared; one with default bounds when
   * absent); null switches them off: postings are read from the store per query, as before issue 18.
   */
  lexicalIndexes?: AgentLexicalIndexes | null
}

interface HeldIndex {
  agentId: string
  collection: FullTextCollection
  /** A catch-up after a write is queued (one at a time). */
  refreshQueued: boolean
  index: LexicalIndex
  /**
   * The messages' turns in conversation order (null for other collections), fed from the same
   * stream: dialogue context reads the turns beside its candidates here, as current as the index.
   */
  timeline: ConversationTimeline | null
  /** Where the store's document stream resumes (what was written after it is not in the index yet). */
  cursor: DocumentCursor | null
  /** The agent's write version and the store's change version the index was last brought up to. */
  version: string
  external: string | null
  bytes: number
  /** The size the bytes were measured at. */
  measuredSize: number
}

/**
 * The in-process lexical indexes of issue 18, one per (agent, collection), in an LRU bounded by
 * count and bytes. FTS5 (or Postgres) stays the source of truth: an index is built from the
 * store's document stream on first use, and before each search it is checked against the agent's
 * write version (every write of this process, and of other replicas through cache:invalidate)
 * and the store's change version (another process's commit on the SQLite file). When either
 * moved, the index catches up: the documents written or edited since its cursor are (re)added,
 * and when the store then holds a different number of documents, those deleted are dropped.
 * Nothing moved: no query at all.
 */
export class AgentLexicalIndexes {
  private readonly cache: LRUCache<string, HeldIndex>
  private readonly syncing = new Map<string, Promise<LexicalIndex>>()
  private readonly refreshing = new Set<Promise<void>>()
  private readonly refreshDelayMs: number
  /** Bumped when everything is dropped: a sync started before must not store what it read. */
  private generation = 0

  constructor(
    private readonly fullText: FullTextIndex,
    private readonly writes: AgentWrites,
    config: Partial<LexicalIndexCacheConfig> = {},
    /** Where the catch-up delay runs (the engine's clock; a test's manual clock moves it). */
    private readonly scheduler: Scheduler = systemScheduler,
  ) {
    const { maxIndexes, maxBytes, refreshDelayMs } = LexicalIndexCacheConfigSchema.parse(config)
    this.refreshDelayMs = refreshDelayMs
    this.cache = new LRUCache<string, HeldIndex>({
      max: maxIndexes,
      maxSize: maxBytes,
      sizeCalculation: (held) => Math.max(1, held.bytes),
    })
    // A deleted agent, or rows deleted or replaced in bulk (a clear, an import, a deleted memory:
    // 'reset'), or every agent (a restore) leave at once: their postings are not kept. A write of
    // an agent whose index is held brings it up to date right after (a deleted conversation's
    // turns leave it then, not at the next search), off the search's path.
    writes.observe((agentId, change) => {
      if (agentId === null) this.clear()
      else if (change === 'write') this.refreshSoon(agentId)
      // A settings record saved changes no document.
      else if (change !== 'settings') this.forget(agentId)
    })
  }

  /** Resolves when the catch-ups started by writes so far have run (tests wait on it instead of sleeping). */
  async settled(): Promise<void> {
    while (this.refreshing.size > 0) await Promise.allSettled([...this.refreshing])
  }

  private refreshSoon(agentId: string): void {
    for (const held of this.cache.values()) {
      if (held.agentId !== agentId || held.refreshQueued) continue
      held.refreshQueued = true
      const refresh = (async () => {
        // After the writing code ran on (the touch comes before and after a write), and after
        // the writes of the next refreshDelayMs, which this one catch-up covers.
        if (this.refreshDelayMs === 0) await Promise.resolve()
        else await sleep(this.scheduler, this.refreshDelayMs)
        held.refreshQueued = false
        // Dropped meanwhile (a reset right after the write): not built again until searched.
        if (this.cache.peek(`${held.collection}\u0000${agentId}`) !== held) return
        await this.index(held.collection, agentId)
      })()
        // A failed catch-up leaves the index as it was: the next search tries again.
        .catch(() => {})
        .finally(() => this.refreshing.delete(refresh))
      this.refreshing.add(refresh)
    }
  }

  /** The agent's index of a collection, brought up to date with the store. */
  async index(collection: FullTextCollection, agentId: string): Promise<LexicalIndex> {
    const key = `${collection}\u0000${agentId}`
    // Read before anything else: a write while this runs moves it, and the next search looks again.
    const version = this.writes.version(agentId)
    const external = await this.fullText.changeVersion()
    const held = this.cache.get(key)
    if (held && held.version === version && held.external === external) return held.index
    const running = this.syncing.get(key)
    if (running) {
      await running
      return this.index(collection, agentId)
    }
    const sync = this.sync(key, collection, agentId, version, external, held).finally(() =>
      this.syncing.delete(key),
    )
    this.syncing.set(key, sync)
    return sync
  }

  /** Drops one agent's indexes (every collection). */
  forget(agentId: string): void {
    for (const [key, held] of this.cache.entries()) if (held.agentId === agentId) this.cache.delete(key)
  }

  clear(): void {
    this.generation++
    this.cache.clear()
  }

  /** How many indexes (collections) are held for an agent: the deletion report's count. */
  held(agentId: string): number {
    let count = 0
    for (const held of this.cache.values()) if (held.agentId === agentId) count++
    return count
  }

  /** How many indexes are held and their bytes (for the bench and the deletion tests). */
  stats(): { indexes: number; bytes: number } {
    return { indexes: this.cache.size, bytes: this.cache.calculatedSize }
  }

  /**
   * The agent's turns in conversation order as held now (no sync: search has just brought the
   * messages' index up to date to find its candidates); null when the messages' index is not held.
   */
  timeline(agentId: string): ConversationTimeline | null {
    return this.cache.peek(`messages\u0000${agentId}`)?.timeline ?? null
  }

  /** The index held for an agent's collection, as it is now (no sync): tests check deletions with it. */
  peek(collection: FullTextCollection, agentId: string): LexicalIndex | null {
    return this.cache.peek(`${collection}\u0000${agentId}`)?.index ?? null
  }

  private async sync(
    key: string,
    collection: FullTextCollection,
    agentId: string,
    version: string,
    external: string | null,
    held: HeldIndex | undefined,
  ): Promise<LexicalIndex> {
    const generation = this.generation
    const next: HeldIndex = held ?? {
      agentId,
      collection,
      refreshQueued: false,
      index: new LexicalIndex(),
      timeline: collection === 'messages' ? new ConversationTimeline() : null,
      cursor: null,
      version,
      external,
      bytes: 0,
      measuredSize: 0,
    }
    for await (const batch of this.fullText.indexedDocuments(collection, agentId, next.cursor)) {
      for (const document of batch.documents) {
        next.index.add(document)
        next.timeline?.add(document.id, document.sessionId, document.time, document.summary, document.speaker)
      }
      next.cursor = batch.cursor
    }
    // Rows deleted (here or by another process) are seen by their count; edits re-read above.
    if (held && (await this.fullText.documentCount(collection, agentId)) !== next.index.size) {
      const present = new Set(await this.fullText.documentIds(collection, agentId))
      for (const id of [...next.index.documentIds()])
        if (!present.has(id)) {
          next.index.remove(id)
          next.timeline?.remove(id)
        }
    }
    // A build grew every list by doubling: up to half of it unused.
    if (!held) next.index.trim()
    next.version = version
    next.external = external
    // Measured again when the size moved by a twentieth: measuring walks every term.
    if (!held || Math.abs(next.index.size - next.measuredSize) > next.index.size / 20) {
      next.bytes = next.index.bytes() + (next.timeline?.bytes() ?? 0)
      next.measuredSize = next.index.size
    }
    if (generation === this.generation) this.cache.set(key, next)
    return next.index
  }
}
