import type { FullTextCollection, FullTextDocument, Storage, StorageCapabilities } from '@engram/engine'

/** A clock the spec moves by hand: leases expire and jobs come due without sleeping. */
export class ManualClock {
  constructor(private current = new Date('2026-01-15T10:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current)
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms)
  }
}

/** A turn of a conversation as a spec writes it. */
export interface TurnSeed {
  content: string
  speaker?: string | null
  timestamp: Date
}

/** A memory item as a spec writes it (the rest takes the store's defaults). */
export interface MemoryItemSeed {
  content: string
  userId?: string | null
  importance?: number
  tags?: string[]
  validFrom: Date
  validUntil?: Date | null
  createdAt: Date
  /** The turn it was formed from (its first source). */
  sourceMessageId?: string | null
}

/** A knowledge row as a spec writes it. */
export interface KnowledgeSeed {
  key: string
  value: string
  confidence: number
  updatedAt: Date
}

/** A fresh storage bundle, and how a spec puts documents where the adapter's full-text index sees them. */
export interface StorageFixture {
  storage: Storage
  clock: ManualClock
  /** Stores documents of a collection the adapter's way (rows with triggers, or the index directly); returns their ids. */
  addDocuments(collection: FullTextCollection, documents: Omit<FullTextDocument, 'id'>[]): Promise<string[]>
  /** Stores a conversation's turns the adapter's way (rows, or the recall sources directly). */
  addTurns(
    agentId: string,
    conversationId: string,
    turns: TurnSeed[],
  ): Promise<{ sessionId: string; ids: string[] }>
  /** Stores memory items the adapter's way; returns their ids. */
  addMemoryItems(agentId: string, items: MemoryItemSeed[]): Promise<string[]>
  /** Stores knowledge rows the adapter's way; returns their ids. */
  addKnowledge(agentId: string, rows: KnowledgeSeed[]): Promise<string[]>
  /** A second bundle on the same store, as another process would open it (null when unsupported). */
  openAnother(): Promise<Storage | null>
}

/**
 * One adapter under test: its name, what it can do, and a fresh store per spec. Every spec file
 * takes an initializer, so a new adapter (Postgres, issue 10) joins by adding one.
 */
export interface StorageInitializer {
  name: string
  capabilities: StorageCapabilities
  /** Whether its vector store saves index graphs beside the rows (persisted() then lists them). */
  persistsVectorIndexes?: boolean
  create(): Promise<StorageFixture>
  destroy(fixture: StorageFixture): Promise<void>
}
