import type { MemoryEntry, MemoryType, Metadata } from '@engram/core'
import type { TimeIdPageQuery } from '../paging/cursor.ts'
import type { AgentArchiveRepository } from './agent-archive.ts'

/**
 * Repositories, one per aggregate. Each method runs in the transaction its repository was handed
 * out for (UnitOfWork.transaction) or on its own when taken from the store outside one. Ids are
 * strings at this boundary whatever the adapter keys rows with.
 */

export type { SessionRepository } from '@engram/core'

/** A memory entry as stored: the core entry plus who owns it and when it changed. */
export interface EntryView extends MemoryEntry {
  agentId: string
  messageId: string | null
  metadata: Metadata
  createdAt: Date
  updatedAt: Date
}

export interface NewEntry {
  type: MemoryType
  role: MemoryEntry['role']
  content: string
  tokenCount: number
  relevance: number
  timestamp: Date
  sessionId?: string | null
  messageId?: string | null
  isCompressed?: boolean
  metadata?: Metadata
}

export interface EntryChanges {
  type?: MemoryType
  relevance?: number
  content?: string
  tokenCount?: number
  isCompressed?: boolean
}

/** What a listing of memory entries narrows to; every field optional. */
export interface EntryFilter {
  sessionId?: string
  type?: MemoryType
  isCompressed?: boolean
  minRelevance?: number
  /** A plain substring of the content (not a search: the search operations rank). */
  contentContains?: string
}

/** An entry's embedding as stored beside it (one per entry, the agent's dimensions throughout). */
export interface EntryVector {
  entryId: string
  vector: Float32Array
}

/** Memory entries (spec 000's short- and long-term memory) and their vectors. */
export interface MemoryEntryRepository {
  /** Entries made outside a conversation (an import, a test); a message's entry comes with it. */
  create(agentId: string, entry: NewEntry): Promise<EntryView>
  find(agentId: string, id: string): Promise<EntryView | null>
  /** The agent's entries (of one conversation when sessionId is given), oldest first. */
  list(agentId: string, sessionId: string | null): Promise<EntryView[]>
  findMany(agentId: string, ids: readonly string[]): Promise<EntryView[]>
  /** One page of the agent's entries in (timestamp, id) order. */
  page(agentId: string, filter: EntryFilter, query: TimeIdPageQuery): Promise<EntryView[]>
  update(agentId: string, id: string, changes: EntryChanges): Promise<EntryView>
  delete(agentId: string, id: string): Promise<void>
  vectors(agentId: string): Promise<EntryVector[]>
  upsertVector(agentId: string, entryId: string, vector: Float32Array): Promise<void>
  /** The dimensions of the agent's entry vectors other than `exceptEntryId`'s, or null when none. */
  vectorDimensions(agentId: string, exceptEntryId: string): Promise<number | null>
}

/** The spec's `adaptive_parameters` key-value rows of one agent. */
export interface ParameterRepository {
  /** Stored values by key (only the keys asked for when given). */
  values(agentId: string, keys?: readonly string[]): Promise<Map<string, number>>
  put(agentId: string, key: string, value: number): Promise<void>
}

export interface AgentRecord {
  id: string
  name: string
  createdAt: Date
}

/** Agents own every record: deleting one deletes what it owns. */
export interface AgentRepository {
  find(id: string): Promise<AgentRecord | null>
  /** Creates the agent, or renames it when `name` is given and it exists. */
  upsert(id: string, name: string | null): Promise<AgentRecord>
  delete(id: string): Promise<boolean>
  /** Every agent, by id (an operator's list). */
  list(): Promise<AgentRecord[]>
}

/** The repositories a unit of work hands out, all bound to one transaction. */
export interface Repositories {
  agents: AgentRepository
  memoryEntries: MemoryEntryRepository
  parameters: ParameterRepository
  archive: AgentArchiveRepository
}
