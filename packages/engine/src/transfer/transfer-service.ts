import {
  type Clock,
  type Limits,
  type TokenCounter,
  ValidationError,
  validationErrorFromZod,
} from '@engram/core'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { ClearedCounts } from '../ports/agent-archive.ts'
import type { BackupInfo, RestoreResult } from '../ports/backup-store.ts'
import type { Storage } from '../ports/storage.ts'
import { Backups } from './backups.ts'
import type { TransferEmbeddings, TransferLifecycle, TransferPrivacy } from './collaborators.ts'
import { type ExportDocument, ExportDocumentSchema, type ImportMode, type ImportReport } from './document.ts'
import { toExportDocument } from './export.ts'
import {
  assertParameters,
  assertReferences,
  documentPolicy,
  documentSettings,
  guardDocument,
  settleSpeakers,
} from './import-validation.ts'
import { writeImport } from './import-writing.ts'

/** Imports and clearing may hold the store's write lock this long (a 200k-item document). */
const BULK_TRANSACTION = { timeoutMs: 600_000 }
const IMPORT_TRANSACTION = { ...BULK_TRANSACTION, maxWaitMs: 30_000 }

export interface TransferServiceDeps {
  storage: Pick<Storage, 'unitOfWork' | 'repositories' | 'capabilities' | 'backups'>
  clock: Clock
  tokenCounter: TokenCounter
  limits: Limits
  privacy: TransferPrivacy
  embeddings: TransferEmbeddings
  writes: Pick<AgentWrites, 'touch' | 'touchAll'>
  lifecycle: TransferLifecycle
  /** After an import committed: derived data that follows the memories (the knowledge graph) catches up. */
  afterImport?: (scope: string) => Promise<void>
}

/**
 * An agent's memory as one versioned JSON document (export / import), whole-store backups and
 * restore, and clearing. Imports and clearing are one unit of work each: all of it or nothing.
 */
export class TransferService {
  private readonly backups: Backups

  constructor(private readonly deps: TransferServiceDeps) {
    this.backups = new Backups(deps.storage)
  }

  /** Everything that belongs to the agent; its optimizer runs too when `includeSnapshots`. */
  async exportAgent(scope: string, { includeSnapshots = false } = {}): Promise<ExportDocument> {
    const { storage, embeddings } = this.deps
    const archive = await storage.repositories.archive.read(scope, {
      vectorModel: embeddings.model,
      includeSnapshots,
    })
    if (!archive) throw new Error(`no agent ${scope} to export`)
    return toExportDocument(archive, embeddings.model)
  }

  /**
   * Imports a document into an agent in one transaction. REPLACE clears the agent's memory first
   * (spec 002 restore); MERGE adds to it. Vectors are kept when the document's model is the current
   * one, and embedded again otherwise. Sensitive data is guarded like any other write.
   */
  async importAgent(
    scope: string,
    input: unknown,
    mode: ImportMode,
    { admin = false }: { admin?: boolean } = {},
  ): Promise<ImportReport> {
    const { storage, clock, tokenCounter, limits, privacy, embeddings, writes, lifecycle } = this.deps
    const parsed = ExportDocumentSchema.safeParse(input)
    if (!parsed.success) throw validationErrorFromZod(parsed.error, 'document')
    const doc = parsed.data
    assertReferences(doc, limits)
    // REPLACE takes the agent's settings, parameters and policy from the document; MERGE only adds
    // memory and keeps the agent's own.
    const replacing = mode === 'REPLACE'
    const policy = replacing ? await documentPolicy(privacy, scope, doc, admin) : undefined
    const settings = replacing && doc.settings ? documentSettings(doc) : undefined
    assertParameters(doc)
    // The data is guarded by the policy in force when it arrives, like every write; a policy the
    // document brings applies to what is written after.
    const redacted = await guardDocument(privacy, tokenCounter, scope, doc)
    settleSpeakers(doc)
    const sameModel = doc.embeddingModel === embeddings.model
    const now = clock.now()

    const written = await storage.unitOfWork.transaction(
      (tx) => writeImport(tx, tokenCounter, { scope, doc, mode, settings, policy, redacted, sameModel, now }),
      IMPORT_TRANSACTION,
    )
    const report = { ...written, reembedded: !sameModel }
    writes.touch(scope)
    lifecycle.forget(scope)
    // A merge may add turns among a conversation's held ones: its sets are read again.
    await lifecycle.dropShared(scope)
    // What REPLACE deleted is deleted everywhere (files, full-text segments, the WAL).
    if (mode === 'REPLACE') await lifecycle.purge(scope)
    // A different model's vectors are not comparable: everything is embedded with the current one.
    if (!sameModel && embeddings.isLocal)
      for (const kind of ['memory', 'message', 'knowledge'] as const) await embeddings.fill(scope, kind)
    // Whatever arrived without a vector of the current model is embedded by the job queue.
    await embeddings.enqueueMissing(scope)
    await this.deps.afterImport?.(scope)
    return report
  }

  /** Clears one agent's memory, or every agent's (agentId null). Needs the confirmation text. */
  async clearAll(agentId: string | null, confirm: string): Promise<ClearedCounts> {
    const { storage, writes, lifecycle } = this.deps
    const expected = agentId ? `CLEAR ${agentId}` : 'CLEAR ALL AGENTS'
    if (confirm !== expected)
      throw new ValidationError([
        { field: 'confirm', message: `must be exactly "${expected}" to clear`, limit: expected },
      ])
    const agents = agentId ? [agentId] : await storage.repositories.archive.agentIds()
    const total = { memories: 0, knowledge: 0, sessions: 0 }
    await storage.unitOfWork.transaction(async (tx) => {
      for (const id of agents) {
        const cleared = await tx.archive.clear(id)
        total.memories += cleared.memories
        total.knowledge += cleared.knowledge
        total.sessions += cleared.sessions
      }
    }, BULK_TRANSACTION)
    for (const id of agents) writes.touch(id)
    lifecycle.forget(agentId ?? undefined)
    await lifecycle.dropShared(agentId ?? undefined)
    await lifecycle.purge(agentId ?? undefined)
    return total
  }

  /** A consistent copy of the whole store while it serves. */
  async backup(): Promise<BackupInfo> {
    return this.backups.create()
  }

  async listBackups(): Promise<BackupInfo[]> {
    return this.backups.list()
  }

  /**
   * Replaces all data with a backup's, keeping API keys. Every agent may be another now (or gone):
   * nothing granted or cached for the old ones carries over, and the replaced rows are deleted data.
   */
  async restore(name: string): Promise<RestoreResult> {
    const { writes, lifecycle } = this.deps
    const restored = await this.backups.restore(name)
    writes.touchAll()
    lifecycle.ended()
    await lifecycle.dropShared()
    await lifecycle.purge()
    return restored
  }
}
