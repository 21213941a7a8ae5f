import type { Metadata, PrivacyMode, PrivacyPattern } from '@engram/core'
import type { VectorKind } from './document.ts'

// What transfer calls on services other groups are moving into the engine in parallel (privacy,
// embeddings, the agent lifecycle): only the members used here, which apps/api's classes satisfy
// structurally until they move and the lead unifies the types.

/** The agent's sensitive-data policy (spec 001), as stored. */
export interface TransferPrivacyPolicy {
  mode: PrivacyMode
  patterns: PrivacyPattern[]
}

/** apps/api's PrivacyService: the policy in force and the guard every write goes through. */
export interface TransferPrivacy {
  policy(agentId: string): Promise<TransferPrivacyPolicy>
  /** Each text redacted (or a rejection naming its field), each metadata object likewise. */
  guard(
    agentId: string,
    texts: { field: string; text: string }[],
    metadata?: { field: string; value: Metadata | null | undefined }[],
  ): Promise<{ texts: string[]; metadata: (Metadata | null | undefined)[] }>
}

/** apps/api's EmbeddingService: which model vectors belong to and how missing ones get made. */
export interface TransferEmbeddings {
  readonly model: string
  /** Whether embedding runs in this process (cheap): an import then embeds at once. */
  readonly isLocal: boolean
  fill(agentId: string, kind: VectorKind): Promise<number>
  enqueueMissing(agentId: string | null): Promise<number>
}

/** apps/api's AgentLifecycle: dropping in-process state and purging deleted data. */
export interface TransferLifecycle {
  /** Forgets caches about the agent (all agents when none is named). */
  forget(agentId?: string): void
  /** The agent (all agents) may be another now: grants and caches end. */
  ended(agentId?: string): void
  /** Drops what replicas share beside the database (the L2 episodic sets) for the agent (all agents). */
  dropShared(agentId?: string): Promise<void>
  /** Makes deleted data unrecoverable (files, full-text segments, the WAL). */
  purge(agentId?: string): Promise<void>
}
