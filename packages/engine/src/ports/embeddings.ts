/**
 * The EmbeddingRepository port: what embedding needs of the store besides the vectors themselves
 * (VectorStore): the texts the owners (memory items, messages, knowledge) are embedded from, which
 * of them still lack a vector of a model, the per-agent cache of vectors by content hash, and the
 * vectors of other models left behind by a provider change. Every read names the model: vectors of
 * two embedders are never compared.
 */

/**
 * What gets a vector: long-term memory items, conversation messages, cross-session knowledge, and
 * the automatic conversation summaries (issue 13 §3: the SUMMARIES scope searches them hybrid).
 */
export const EMBEDDING_KINDS = ['memory', 'message', 'knowledge', 'summary'] as const
export type EmbeddingKind = (typeof EMBEDDING_KINDS)[number]

/** An owner's text, and the content hash of its current vector of the model (null: none). */
export interface OwnerText {
  id: number
  agentId: string
  text: string
  embeddedHash: string | null
}

/** An owner still without a vector of the model. */
export interface OwnerToFill {
  id: number
  agentId: string
  text: string
}

/** A cached vector: the agent's own, keyed by the hash of the text it was computed from. */
export interface CachedVector {
  agentId: string
  model: string
  contentHash: string
  vector: Float32Array
  createdAt: Date
}

export interface EmbeddingRepository {
  /** The owners among `ownerIds` that still exist, with their text and embedded hash. */
  ownerTexts(kind: EmbeddingKind, model: string, ownerIds: readonly number[]): Promise<OwnerText[]>
  /**
   * Owners of a kind (of an agent, or all) without a vector of the model, ids after `afterId` in
   * id order: ids only grow, so a caller pages by the last id it saw.
   */
  missing(
    agentId: string | null,
    kind: EmbeddingKind,
    model: string,
    limit: number,
    afterId: number,
  ): Promise<OwnerToFill[]>
  /** How many owners of a kind there are (of an agent, or all), and how many have a vector of the model. */
  coverage(
    agentId: string | null,
    kind: EmbeddingKind,
    model: string,
  ): Promise<{ total: number; embedded: number }>
  /**
   * Queues one job of `jobKind` per owner (of an agent, or all) without a vector of the model,
   * keyed `<kind>:<ownerId>` with payload `{ kind, ownerId }` (the embed job's shape), unless one
   * is pending already. In the store: after an import or a crash, millions of rows never need to
   * travel into the process to be queued. Returns how many were queued.
   */
  queueMissing(agentId: string | null, model: string, jobKind: string): Promise<number>
  /** The agent's cached vectors of the model for those content hashes (absent ones are skipped). */
  cached(agentId: string, model: string, contentHashes: readonly string[]): Promise<CachedVector[]>
  /**
   * Adds vectors to the cache. Two embeddings of the same text may finish at once: the second of
   * a hash is ignored.
   */
  cache(vectors: readonly CachedVector[]): Promise<void>
  /**
   * Removes the agent's cached vectors (of every model) computed from texts with these hashes: the
   * text was deleted (a summary past its retention), so no vector of it stays behind. Returns how many.
   */
  uncache(agentId: string, contentHashes: readonly string[]): Promise<number>
  /** Whether vectors of any other model are stored (the provider changed). */
  hasOtherModels(model: string): Promise<boolean>
  /** Removes every vector not of the model, once the model covers everything. */
  removeOtherModels(model: string): Promise<number>
}
