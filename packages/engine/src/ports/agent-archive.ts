import type { Metadata, PrivacyMode, PrivacyPattern } from '@engram/core'
import type { GraphEntityRecord, GraphRelationshipRecord } from './graph.ts'
import type { TrajectoryMemorySnapshot } from './trajectories.ts'

/**
 * The AgentArchive port: an agent's whole memory read in one piece (export) and written back row by
 * row inside one unit of work (import), plus clearing it. It exists beside the per-aggregate
 * repositories because export and import are about the agent's memory as one document: every
 * aggregate it owns, in the order a document lists them, with ids as strings whatever the adapter
 * keys rows with.
 */

/** The agent's stored settings: only what differs from the defaults (see updateMemorySettings). */
import type { StoredMemorySettings } from './memory-items.ts'

export type { StoredMemorySettings }

export interface ArchivedMemory {
  id: string
  content: string
  category: string
  tags: string[]
  importance: number
  confidence: number
  pinned: boolean
  userId: string | null
  sourceConversationId: string | null
  sourceMessageId: string | null
  accessCount: number
  lastAccessedAt: Date | null
  validFrom: Date
  validUntil: Date | null
  /** The id of the memory that replaced this one. */
  supersededById: string | null
  metadata: Metadata
  createdAt: Date
  updatedAt: Date
}

/** A memory as an import writes it: its hash and token count are computed by the engine. */
export interface NewArchivedMemory extends Omit<ArchivedMemory, 'id' | 'supersededById'> {
  contentHash: string
  tokenCount: number
}

export interface ArchivedKnowledge {
  id: string
  category: string
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

/** The message's memory entry (spec 000's short- or long-term memory of it). */
export interface ArchivedEntry {
  type: 'short_term' | 'long_term'
  content: string
  tokenCount: number
  relevance: number
  isCompressed: boolean
  metadata: Metadata
  timestamp: Date
  createdAt: Date
}

export interface ArchivedMessage {
  id: string
  role: string
  speaker: string | null
  content: string
  tokenCount: number
  isCompressed: boolean
  metadata: Metadata
  timestamp: Date
  createdAt: Date
  entry: ArchivedEntry | null
}

/** A conversation with its messages, oldest first (by timestamp, then id). */
export interface ArchivedSession {
  conversationId: string
  createdAt: Date
  updatedAt: Date
  messages: ArchivedMessage[]
}

export interface NewArchivedSession extends Omit<ArchivedSession, 'messages'> {
  messages: Omit<ArchivedMessage, 'id'>[]
}

/** One embedding row: the owner's kind (memory, message, knowledge) and id, raw float32 bytes. */
export interface ArchivedVector {
  kind: string
  ownerId: string
  dimensions: number
  vector: Uint8Array
}

export interface NewArchivedVector extends ArchivedVector {
  model: string
  /** The hash of the text the vector was computed from: the embedder re-embeds when it differs. */
  contentHash: string
  createdAt: Date
}

export interface ArchivedSnapshot {
  tokensBefore: number
  tokensAfter: number
  entriesCompressed: number
  entriesDropped: number
  entriesPromoted: number
  usageRatio: number
  compressionTriggerRatio: number
  fullMessageWindow: number
  minRelevanceScore: number
  timestamp: Date
}

export interface ArchivedPrivacyPolicy {
  mode: PrivacyMode
  patterns: PrivacyPattern[]
}

/**
 * A knowledge-graph entity (issue 15) as the graph stores it, without its agent and derived name
 * key; `id` links it to the graph's relationships and evidence, and the name's embedding travels
 * as float32 bytes (null when none was computed).
 */
export type ArchivedGraphEntity = Omit<GraphEntityRecord, 'agentId' | 'normalizedName' | 'embedding'> & {
  embedding: Uint8Array | null
}

/**
 * A relationship between two entities of the same graph, named by their `id`
 * (`supersededById`: the relationship of this graph that ended this one's validity).
 */
export type ArchivedGraphRelationship = Omit<GraphRelationshipRecord, 'agentId'>

/** Where an entity or relationship (exactly one) was learnt: the agent's memory and/or message ids. */
export interface ArchivedGraphEvidence {
  entityId: string | null
  relationshipId: string | null
  memoryId: string | null
  messageId: string | null
  createdAt: Date
}

/** The agent's knowledge graph. */
export interface ArchivedGraph {
  /** Oldest first (createdAt, then id). */
  entities: ArchivedGraphEntity[]
  /** Oldest first (createdAt, then id). */
  relationships: ArchivedGraphRelationship[]
  /** In the order it was recorded. */
  evidence: ArchivedGraphEvidence[]
}

/** Everything an agent owns, each list in the order an export document lists it. */
export interface AgentArchive {
  agent: {
    id: string
    name: string
    memorySettings: StoredMemorySettings
    /** As stored; an unknown mode reads as `redact` and unreadable patterns as none (fail closed). */
    privacyPolicy: ArchivedPrivacyPolicy
  }
  /** Oldest first (createdAt, then id). */
  memories: ArchivedMemory[]
  /** Oldest first (createdAt, then id). */
  knowledge: ArchivedKnowledge[]
  /** Oldest first (createdAt, then conversation id). */
  sessions: ArchivedSession[]
  /** Only the vectors of the model asked for: others are not comparable with the current ones. */
  vectors: ArchivedVector[]
  /** The optimizer's parameters and lifetime totals, by key. */
  parameters: { key: string; value: number }[]
  /** Optimizer runs oldest first; null when not asked for. */
  snapshots: ArchivedSnapshot[] | null
  /** The knowledge graph (its ids are the store's). */
  graph: ArchivedGraph
  /**
   * Trajectory memory (issue 16): the run registry and every scope's records, as the trajectory
   * repository's snapshot gives them (its ids: run ids are the agent's own, the rest the store's).
   */
  trajectories: TrajectoryMemorySnapshot
}

/** What clearing removed, as the clearAll operation reports it. */
export interface ClearedCounts {
  memories: number
  knowledge: number
  sessions: number
}

export interface AgentArchiveRepository {
  /** The agent's whole memory, or null when there is no such agent. */
  read(
    agentId: string,
    options: { vectorModel: string; includeSnapshots: boolean },
  ): Promise<AgentArchive | null>
  /**
   * Deletes everything the agent remembers: memories, knowledge, conversations, entries, vectors
   * and cached embeddings, optimizer runs and parameters, its knowledge graph, its trajectory
   * memory (runs, trajectories, run sessions, app facts, selectors, hints), and its queued jobs
   * (their handlers would find nothing, but the queue's depth would report them). The agent, its
   * keys and settings stay.
   */
  clear(agentId: string): Promise<ClearedCounts>
  /** Every agent's id: clearing all agents clears each. */
  agentIds(): Promise<string[]>
  setMemorySettings(agentId: string, settings: StoredMemorySettings): Promise<void>
  setPrivacyPolicy(agentId: string, policy: ArchivedPrivacyPolicy): Promise<void>
  /** The first of these conversations the agent already has, or null (a merge must not mix two). */
  existingConversation(agentId: string, conversationIds: readonly string[]): Promise<string | null>
  /** Adds memories in order; returns their ids in the same order. */
  addMemories(agentId: string, memories: readonly NewArchivedMemory[]): Promise<string[]>
  /** Marks each memory as replaced by another of the agent's. */
  linkSupersessions(agentId: string, links: readonly { id: string; supersededById: string }[]): Promise<void>
  /** Creates each fact or overwrites the one with its category and key; returns their ids in order. */
  putKnowledge(agentId: string, facts: readonly Omit<ArchivedKnowledge, 'id'>[]): Promise<string[]>
  /** Drops the vectors of these owners (a merged fact's vectors are of its old value). */
  removeVectors(agentId: string, kind: string, ownerIds: readonly string[]): Promise<void>
  /** Adds a conversation with its messages and their entries; returns the message ids in order. */
  addConversation(agentId: string, session: NewArchivedSession): Promise<string[]>
  addSnapshots(agentId: string, snapshots: readonly ArchivedSnapshot[]): Promise<void>
  addVectors(agentId: string, vectors: readonly NewArchivedVector[]): Promise<void>
  /**
   * Adds a knowledge graph. Its ids are the caller's keys, linking its rows to one another (the
   * rows get new ids); the evidence's memory and message ids are already the agent's.
   */
  addGraph(agentId: string, graph: ArchivedGraph): Promise<void>
  /**
   * Writes trajectory memory records as they are (the trajectory repository's restore: ids kept,
   * a record with the same id or natural key replaced).
   */
  addTrajectoryMemory(agentId: string, memory: TrajectoryMemorySnapshot): Promise<void>
}
