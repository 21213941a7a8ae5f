import type { Clock, Embedder } from '@engram/core'
import type { EmbeddingRepository } from '../ports/embeddings.ts'
import type { Logger } from '../ports/logger.ts'
import { NO_TELEMETRY, type Telemetry } from '../ports/telemetry.ts'
import { contentHash } from './content-hash.ts'

/** Texts to embed, each on behalf of the agent whose cache it belongs to. */
export interface AgentText {
  agentId: string
  text: string
}

/**
 * The embedder behind each agent's own cache of vectors by content hash. The cache is the agent's:
 * it goes with the agent's data, and whether a text is cached (how fast it comes back) says nothing
 * about what other agents wrote.
 */
export class CachedEmbedder {
  constructor(
    readonly embedder: Embedder,
    private readonly repository: EmbeddingRepository,
    private readonly clock: Clock,
    private readonly log: Logger,
    /** Where each text's cache lookup (hit or miss) is reported (issue 17's metrics). */
    private readonly telemetry: Telemetry = NO_TELEMETRY,
  ) {}

  get model(): string {
    return this.embedder.model
  }

  /**
   * An embedder that computes in-process (the offline default) is cheap enough to bring vectors up
   * to date inside a search; a remote one is filled in the background instead.
   */
  get isLocal(): boolean {
    return 'embedOne' in this.embedder
  }

  /**
   * Vectors for texts of several agents at once (one provider call for the embed jobs' batch),
   * null where the embedder failed, and why it failed (null when it did not).
   */
  async embed(
    items: readonly AgentText[],
  ): Promise<{ vectors: (Float32Array | null)[]; error: string | null }> {
    if (items.length === 0) return { vectors: [], error: null }
    // An in-process embedder is faster than the cache's round trip to the database.
    if (this.isLocal) return { vectors: await this.embedder.embed(items.map((i) => i.text)), error: null }
    let error: string | null = null
    const hashes = items.map((item) => contentHash(item.text))
    const keys = items.map((item, i) => `${item.agentId}\u0000${hashes[i]}`)
    const byKey = new Map<string, Float32Array>()
    const hashesOf = new Map<string, Set<string>>()
    items.forEach((item, i) => {
      const set = hashesOf.get(item.agentId) ?? new Set<string>()
      set.add(hashes[i] as string)
      hashesOf.set(item.agentId, set)
    })
    for (const [agentId, agentHashes] of hashesOf) {
      for (const row of await this.repository.cached(agentId, this.model, [...agentHashes]))
        byKey.set(`${agentId}\u0000${row.contentHash}`, row.vector)
    }
    for (const key of keys) this.telemetry.cacheLookup('embedding', byKey.has(key))
    const missing = [...new Set(keys.filter((k) => !byKey.has(k)))]
    if (missing.length > 0) {
      const textOf = new Map(keys.map((k, i) => [k, (items[i] as AgentText).text]))
      try {
        const vectors = await this.embedder.embed(missing.map((k) => textOf.get(k) as string))
        const createdAt = this.clock.now()
        const rows = missing.map((k, i) => {
          const [agentId, hash] = k.split('\u0000') as [string, string]
          const vector = vectors[i] as Float32Array
          byKey.set(k, vector)
          return { agentId, model: this.model, contentHash: hash, vector, createdAt }
        })
        await this.cache(rows)
      } catch (failure) {
        error = failure instanceof Error ? failure.message : String(failure)
        this.log.warn(`[embeddings] ${this.model} failed for ${missing.length} texts:`, failure)
      }
    }
    return { vectors: keys.map((k) => byKey.get(k) ?? null), error }
  }

  /** A failed cache write only costs a later recomputation, never the vectors just computed. */
  private async cache(rows: Parameters<EmbeddingRepository['cache']>[0]): Promise<void> {
    try {
      await this.repository.cache(rows)
    } catch (error) {
      this.log.warn(`[embeddings] caching ${rows.length} vectors failed:`, error)
    }
  }
}
