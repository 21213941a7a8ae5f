import type { MemorySettings } from '@engram/core'
import type { RecalledMemoryItem } from '../ports/recall-sources.ts'
import type { SearchableVectors } from '../ports/vector-store.ts'

// What search calls on services that other parts of the engine own (embeddings, memory items),
// declared as narrowly as search uses them: the application's services satisfy them structurally.

/** The kinds of rows that have vectors. */
export type EmbeddingKind = 'memory' | 'message' | 'knowledge' | 'summary'

export type { SearchableVectors }

/** Vector recall: the query's embedding and the agent's index per kind. */
export interface SearchEmbeddings {
  /** The query's vector; null when none can be made (no embedder reachable). */
  embedQuery(agentId: string, text: string): Promise<Float32Array | null>
  index(agentId: string, kind: EmbeddingKind): Promise<SearchableVectors>
}

/** The memory items' settings (recall defaults) and their access tracking. */
export interface SearchMemories {
  settings(agentId: string): Promise<{ settings: MemorySettings }>
  /** Counts an access of each item (spec 003) and returns the items as they are now, in `ids` order. */
  recordAccess(agentId: string, ids: readonly number[]): Promise<RecalledMemoryItem[]>
}
