/**
 * What the knowledge use cases call on the embedding service, which lives in apps/api until the
 * embeddings group moves it (its class satisfies this structurally). Ids are its row numbers.
 */
export interface KnowledgeEmbeddings {
  /** Queues facts to be embedded off the request path. */
  enqueue(agentId: string, kind: 'knowledge', ownerIds: readonly number[]): Promise<void>
}
