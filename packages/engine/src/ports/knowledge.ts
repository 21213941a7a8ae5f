import type { KnowledgeCategory } from '@engram/core'

/** A cross-session fact as stored: unique per (agent, category, key). */
export interface KnowledgeRecord {
  id: string
  agentId: string
  category: KnowledgeCategory
  key: string
  value: string
  confidence: number
  storeCount: number
  useCount: number
  lastUsedAt: Date | null
  lastDecayAt: Date | null
  createdAt: Date
  updatedAt: Date
}

export interface NewKnowledge {
  category: KnowledgeCategory
  key: string
  value: string
  confidence: number
  /** From the engine's clock: decay measures time since creation with the same clock. */
  createdAt: Date
}

export interface KnowledgeChanges {
  category?: KnowledgeCategory
  key?: string
  value?: string
  confidence?: number
}

/** Which facts a list shows; every field narrows it. */
export interface KnowledgeQuery {
  category?: KnowledgeCategory | null
  minConfidence?: number | null
  /** A substring of the key or the value. */
  search?: string | null
}

export type KnowledgeOrder = 'confidence' | 'lastUsedAt' | 'useCount' | 'updatedAt'

/**
 * The knowledge tier. A null agent means every agent (an admin's list); any other call is scoped
 * to its agent, so another tenant's id finds nothing.
 */
export interface KnowledgeRepository {
  /** Runs `fn` with this repository bound to one transaction (a read and the write it decides). */
  transaction<T>(fn: (knowledge: KnowledgeRepository) => Promise<T>): Promise<T>
  find(agentId: string, id: string): Promise<KnowledgeRecord | null>
  findByKey(agentId: string, category: KnowledgeCategory, key: string): Promise<KnowledgeRecord | null>
  create(agentId: string, fact: NewKnowledge): Promise<KnowledgeRecord>
  /** A repeated store: the new value and confidence, one more store counted. */
  restore(agentId: string, id: string, value: string, confidence: number): Promise<KnowledgeRecord>
  /** A use: the learnt confidence, one more use counted, when. */
  recordUse(agentId: string, id: string, confidence: number, at: Date): Promise<KnowledgeRecord>
  update(agentId: string, id: string, changes: KnowledgeChanges): Promise<KnowledgeRecord>
  delete(agentId: string, id: string): Promise<void>
  /** Of these ids, the ones that exist (in the agent when given). */
  existing(agentId: string | null, ids: readonly string[]): Promise<string[]>
  deleteMany(agentId: string | null, ids: readonly string[]): Promise<number>
  /** Every fact of the agent at or above a confidence (relevance ranks them all). */
  confident(agentId: string, minConfidence: number): Promise<KnowledgeRecord[]>
  count(agentId: string | null, query: KnowledgeQuery): Promise<number>
  /** Newest-first by the order (nulls last), ties by id ascending. */
  page(
    agentId: string | null,
    query: KnowledgeQuery,
    order: KnowledgeOrder,
    offset: number,
    limit: number,
  ): Promise<KnowledgeRecord[]>
}
