import {
  type AnalyzerConfig,
  type ContentFeatureSource,
  type ContentFeatures,
  contentFeatures,
  type MemoryEntry,
} from '@engram/core'
import { z } from 'zod'
import type { OptimizerRepository } from '../ports/optimizer.ts'

/**
 * 250,000 entries: the 100K-entry agent of the load test twice over and more, at ~0.5 KiB each
 * (text, row fields, features) ~125 MiB at the very most; past it the agents used least recently
 * are let go, and an agent larger than the whole bound is read whole every run, as before.
 */
export const DEFAULT_OPTIMIZER_CACHED_ENTRIES = 250_000

export const OptimizerEntriesConfigSchema = z.object({
  /** Entries kept between runs over all agents; 0 keeps none (every run reads its entries whole). */
  cachedEntries: z.number().int().min(0).max(10_000_000).default(DEFAULT_OPTIMIZER_CACHED_ENTRIES),
})

/** One load's entries, and what it knows of their texts against an earlier load. */
export interface LoadedEntries {
  entries: MemoryEntry[]
  /** Names this load among all loads (of every agent), increasing. */
  generation: number
  /**
   * For a consumer that last saw the entries of load `seen` (the redundancy join): which entries
   * certainly have the text they had then. Undefined unless `seen` is the load this one read its
   * changes against (otherwise every text must be looked at again).
   */
  textUnchangedSince(seen: number | undefined): ((entry: MemoryEntry) => boolean) | undefined
}

interface KeptEntry {
  entry: MemoryEntry
  version: string
  contentLength: number
  /** The text's features under `featuresMode`, once a run has asked for them. */
  features: ContentFeatures | null
  featuresMode: string
}

/**
 * The optimizer's entries kept from one run to the next, per agent (and conversation), with the
 * features the analyzer reads from their text. Each run reads every row's stamp (its updatedAt,
 * length and the fields a run changes; no text) and the text of the rows new or changed since
 * the last run only: a row written by anyone, in this process or another, has a new stamp, and a
 * row gone from the stamps is gone from here. So a run sees exactly the entries a whole read would
 * return, and the analyzer gets the same features it would compute: a warm run is a cold run.
 */
export class OptimizerEntries {
  /** Per key, the entries by id; the Map's order is the keys' last use (first: least recent). */
  private readonly kept = new Map<string, Map<string, KeptEntry>>()
  private total = 0
  /** The generation of each key's last load. */
  private readonly generationOf = new Map<string, number>()
  private generations = 0
  /** Rows read with their text by the last load: for tests and reports. */
  lastRead = 0

  constructor(
    private readonly store: OptimizerRepository,
    readonly maxEntries: number = DEFAULT_OPTIMIZER_CACHED_ENTRIES,
  ) {}

  /** The entries of one agent (of one conversation when sessionId is given), oldest first. */
  async load(agentId: string, sessionId: string | null): Promise<LoadedEntries> {
    const key = keyOf(agentId, sessionId)
    const { store } = this
    if (!store.entryStamps || !store.entriesByIds || this.maxEntries === 0)
      return this.whole(key, agentId, sessionId)
    // Nothing kept yet (a first run, or evicted): one read of every row with its stamp.
    if (!this.kept.has(key) && store.stampedEntries) return this.first(key, agentId, sessionId)
    const stamps = await store.entryStamps(agentId, sessionId)
    if (stamps.length > this.maxEntries) return this.whole(key, agentId, sessionId)
    const known = this.kept.get(key) ?? new Map<string, KeptEntry>()
    // The load these changes are read against: the last one, while its entries are still kept.
    const basedOn = this.kept.has(key) ? this.generationOf.get(key) : undefined
    const missing: string[] = []
    for (const stamp of stamps) {
      const kept = known.get(stamp.id)
      if (!kept || kept.version !== stamp.version || kept.contentLength !== stamp.contentLength)
        missing.push(stamp.id)
    }
    const fetched = new Map<string, KeptEntry>()
    for (const { entry, version, contentLength } of missing.length
      ? await store.entriesByIds(agentId, missing)
      : []) {
      const before = known.get(entry.id)
      // The same text keeps its features: a promotion rewrites the row, not what it says.
      const same = before !== undefined && before.entry.content === entry.content
      fetched.set(entry.id, {
        entry,
        version,
        contentLength,
        features: same ? before.features : null,
        featuresMode: same ? before.featuresMode : '',
      })
    }
    this.lastRead = fetched.size
    const next = new Map<string, KeptEntry>()
    const entries: MemoryEntry[] = []
    for (const stamp of stamps) {
      let kept = fetched.get(stamp.id) ?? known.get(stamp.id)
      // Deleted between the two reads: gone, as a whole read a moment later would find it.
      if (!kept) continue
      const { entry } = kept
      // The fields a run changes come from the stamp, fresh, whatever the version says.
      if (
        entry.type !== stamp.type ||
        entry.relevance !== stamp.relevance ||
        entry.isCompressed !== stamp.isCompressed ||
        entry.tokenCount !== stamp.tokenCount
      ) {
        kept = {
          ...kept,
          entry: {
            ...entry,
            type: stamp.type,
            relevance: stamp.relevance,
            isCompressed: stamp.isCompressed,
            tokenCount: stamp.tokenCount,
          },
        }
      }
      next.set(stamp.id, kept)
      entries.push(kept.entry)
    }
    this.keep(key, next)
    const generation = this.nextGeneration(key)
    return {
      entries,
      generation,
      textUnchangedSince: (seen) =>
        seen !== undefined && seen === basedOn ? (entry) => !fetched.has(entry.id) : undefined,
    }
  }

  private nextGeneration(key: string): number {
    const generation = ++this.generations
    this.generationOf.set(key, generation)
    return generation
  }

  /**
   * The analyzer's features of an entry load() returned, kept with it while its text is the same
   * (config: the analyzer's, of which the features depend on keyFactMode and shortContentChars).
   */
  features(agentId: string, sessionId: string | null): ContentFeatureSource {
    const known = this.kept.get(keyOf(agentId, sessionId))
    return (entry: MemoryEntry, config: AnalyzerConfig) => {
      const kept = known?.get(entry.id)
      const mode = `${config.keyFactMode}:${config.shortContentChars}`
      if (!kept || kept.entry.content !== entry.content) return contentFeatures(entry, config)
      if (kept.features === null || kept.featuresMode !== mode) {
        kept.features = contentFeatures(entry, config)
        kept.featuresMode = mode
      }
      return kept.features
    }
  }

  /** Lets an agent's entries go (or every agent's): deleted, or its data replaced. */
  forget(agentId?: string): void {
    for (const [key, entries] of this.kept)
      if (agentId === undefined || key.startsWith(`${agentId}\u0000`)) {
        this.total -= entries.size
        this.kept.delete(key)
        this.generationOf.delete(key)
      }
  }

  /** Entries kept for an agent (all its conversations' keys): for tests and the deletion check. */
  keptFor(agentId: string): number {
    let count = 0
    for (const [key, entries] of this.kept) if (key.startsWith(`${agentId}\u0000`)) count += entries.size
    return count
  }

  /** Entries kept over all agents (at most maxEntries). */
  get size(): number {
    return this.total
  }

  private async first(key: string, agentId: string, sessionId: string | null): Promise<LoadedEntries> {
    const read = await (this.store.stampedEntries as NonNullable<OptimizerRepository['stampedEntries']>)(
      agentId,
      sessionId,
    )
    this.lastRead = read.length
    if (read.length <= this.maxEntries) {
      const next = new Map<string, KeptEntry>()
      for (const { entry, version, contentLength } of read)
        next.set(entry.id, { entry, version, contentLength, features: null, featuresMode: '' })
      this.keep(key, next)
    }
    return {
      entries: read.map((stamped) => stamped.entry),
      generation: this.nextGeneration(key),
      textUnchangedSince: () => undefined,
    }
  }

  private async whole(key: string, agentId: string, sessionId: string | null): Promise<LoadedEntries> {
    this.drop(key)
    const entries = await this.store.entries(agentId, sessionId)
    this.lastRead = entries.length
    return { entries, generation: this.nextGeneration(key), textUnchangedSince: () => undefined }
  }

  private keep(key: string, entries: Map<string, KeptEntry>): void {
    this.drop(key)
    // An agent with nothing left holds nothing.
    if (entries.size === 0) return
    this.kept.set(key, entries)
    this.total += entries.size
    for (const [oldest, held] of this.kept) {
      if (this.total <= this.maxEntries) break
      this.kept.delete(oldest)
      this.total -= held.size
    }
  }

  private drop(key: string): void {
    const known = this.kept.get(key)
    if (!known) return
    this.total -= known.size
    this.kept.delete(key)
  }
}

const keyOf = (agentId: string, sessionId: string | null) => `${agentId}\u0000${sessionId ?? ''}`
