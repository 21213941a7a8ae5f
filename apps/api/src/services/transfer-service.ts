import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {
  type Clock,
  ContextBudgetsSchema,
  compilePrivacyPatterns,
  DEFAULT_OPTIMIZER_PARAMETERS,
  KNOWLEDGE_CATEGORIES,
  type Limits,
  MEMORY_CATEGORIES,
  OptimizerParametersSchema,
  PRIVACY_MODES,
  parseMemorySettings,
  ROLES,
  speakerOf,
  type TokenCounter,
  ValidationError,
  validationErrorFromZod,
} from '@engram/core'
import {
  type AgentWrites,
  contentHash,
  type EmbeddingService,
  PARAMETER_KEYS,
  type PrivacyService,
  STAT_KEYS,
  type StoredPrivacyPolicy,
} from '@engram/engine'
import type { Database } from '@engram/store-sqlite'
import { parseMetadata } from '@engram/store-sqlite'
import Database3 from 'better-sqlite3'
import { z } from 'zod'
import type { AgentLifecycle } from './agent-lifecycle.ts'
import { safeJson } from './memory-item-service.ts'

export const EXPORT_FORMAT = 'engram.export'
// 2 adds the agent's settings, optimizer parameters, privacy policy and (when asked) snapshots;
// 3 adds each message's speaker. Older documents still import: they simply carry none of those
// (their messages' speakers are taken from metadata, as a write takes them).
export const EXPORT_VERSION = 3
const IMPORTABLE_VERSIONS = [1, 2, 3] as const
/** Vector owners name one of the document's items as `kind:ref`. */
const VECTOR_KINDS = ['memory', 'message', 'knowledge'] as const
const PARAMETER_ROW_KEYS: readonly string[] = [...PARAMETER_KEYS, ...Object.values(STAT_KEYS)]
/** Bounds an import: what one request may bring (the request body limit bounds it too). */
export const MAX_IMPORT_ITEMS = 200_000

const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s))
const nullableDate = isoDate.nullable()
const json = z.record(z.string(), z.unknown())

const ExportDocumentSchema = z.object({
  format: z.literal(EXPORT_FORMAT),
  version: z.union(IMPORTABLE_VERSIONS.map((v) => z.literal(v))),
  agent: z.object({ id: z.string(), name: z.string() }),
  /** Memory settings and context budgets as stored: only what differs from the defaults. */
  settings: z.object({ settings: json.optional(), contextBudgets: json.optional() }).optional(),
  /** The optimizer's learned parameters and lifetime totals, by key. */
  parameters: z
    .array(
      z.object({
        key: z.string().refine((key) => PARAMETER_ROW_KEYS.includes(key), {
          message: `must be one of ${PARAMETER_ROW_KEYS.join(', ')}`,
        }),
        value: z.number().finite(),
      }),
    )
    .max(PARAMETER_ROW_KEYS.length)
    .optional(),
  privacyPolicy: z
    .object({
      mode: z.enum(PRIVACY_MODES),
      patterns: z.array(z.object({ name: z.string(), pattern: z.string() })),
    })
    .optional(),
  /** Optimizer runs, oldest first: only when the export was asked for them. */
  snapshots: z
    .array(
      z.object({
        tokensBefore: z.number().int().min(0),
        tokensAfter: z.number().int().min(0),
        entriesCompressed: z.number().int().min(0),
        entriesDropped: z.number().int().min(0),
        entriesPromoted: z.number().int().min(0),
        usageRatio: z.number().finite(),
        compressionTriggerRatio: z.number().finite(),
        fullMessageWindow: z.number().int(),
        minRelevanceScore: z.number().finite(),
        timestamp: isoDate,
      }),
    )
    .max(MAX_IMPORT_ITEMS)
    .optional(),
  embeddingModel: z.string().nullable(),
  memories: z
    .array(
      z.object({
        ref: z.string().min(1).max(64),
        content: z.string().min(1).max(10_000),
        category: z.enum(MEMORY_CATEGORIES),
        tags: z.array(z.string().min(1).max(64)).max(20),
        importance: z.number().min(0).max(1),
        confidence: z.number().min(0).max(1),
        pinned: z.boolean(),
        userId: z.string().max(128).nullable(),
        sourceConversationId: z.string().max(256).nullable(),
        sourceMessageId: z.string().max(256).nullable(),
        accessCount: z.number().int().min(0),
        lastAccessedAt: nullableDate,
        validFrom: isoDate,
        validUntil: nullableDate,
        supersededBy: z.string().nullable(),
        metadata: json,
        createdAt: isoDate,
        updatedAt: isoDate,
      }),
    )
    .max(MAX_IMPORT_ITEMS),
  knowledge: z
    .array(
      z.object({
        category: z.enum(KNOWLEDGE_CATEGORIES),
        key: z.string().min(1),
        value: z.string(),
        confidence: z.number().min(0).max(1),
        storeCount: z.number().int().min(1),
        useCount: z.number().int().min(0),
        lastUsedAt: nullableDate,
        lastDecayAt: nullableDate,
        createdAt: isoDate,
        updatedAt: isoDate,
      }),
    )
    .max(MAX_IMPORT_ITEMS),
  sessions: z
    .array(
      z.object({
        conversationId: z.string().min(1).max(128),
        createdAt: isoDate,
        updatedAt: isoDate,
        messages: z
          .array(
            z.object({
              role: z.enum(ROLES),
              /** Absent in documents before version 3; null when the message named no one. */
              speaker: z.string().nullable().optional(),
              content: z.string(),
              tokenCount: z.number().int().min(0),
              isCompressed: z.boolean(),
              metadata: json,
              timestamp: isoDate,
              createdAt: isoDate,
              entry: z
                .object({
                  type: z.enum(['short_term', 'long_term']),
                  content: z.string(),
                  tokenCount: z.number().int().min(0),
                  relevance: z.number(),
                  isCompressed: z.boolean(),
                  metadata: json,
                  timestamp: isoDate,
                  createdAt: isoDate,
                })
                .nullable(),
            }),
          )
          .max(MAX_IMPORT_ITEMS),
      }),
    )
    .max(MAX_IMPORT_ITEMS),
  vectors: z
    .array(
      z.object({
        owner: z.string().min(1),
        dimensions: z.number().int().min(1).max(16_384),
        vector: z.base64(),
      }),
    )
    .max(MAX_IMPORT_ITEMS * 3),
})
export type ExportDocument = z.input<typeof ExportDocumentSchema>

export type ImportMode = 'REPLACE' | 'MERGE'

export interface ImportReport {
  memories: number
  knowledge: number
  sessions: number
  messages: number
  vectors: number
  /** True when the document's vectors were of another model: they were embedded again. */
  reembedded: boolean
}

export interface BackupInfo {
  name: string
  bytes: number
  createdAt: Date
}

const BACKUP_NAME = /^engram-[0-9TZ-]+\.db$/
/** Tables a restore leaves as they are: access control and migration history are not memory. */
const RESTORE_KEEPS = new Set(['ApiKey', '_prisma_migrations'])

const iso = (d: Date | null) => (d ? d.toISOString() : null)

/**
 * An agent's memory as one versioned JSON document (export / import), whole-database backups
 * (SQLite `VACUUM INTO`) and restore, and clearing. Imports and restores are one transaction each.
 */
export class TransferService {
  constructor(
    private readonly db: Database,
    private readonly databaseFile: string | null,
    private readonly backupDirectory: string | null,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly limits: Limits,
    private readonly privacy: PrivacyService,
    private readonly embeddings: EmbeddingService,
    private readonly writes: AgentWrites,
    private readonly lifecycle: Pick<AgentLifecycle, 'forget' | 'ended' | 'purge'>,
  ) {}

  /** Everything that belongs to the agent; its optimizer runs too when `includeSnapshots`. */
  async exportAgent(scope: string, { includeSnapshots = false } = {}): Promise<ExportDocument> {
    const agent = await this.db.agent.findUniqueOrThrow({ where: { id: scope } })
    const [memories, knowledge, sessions, vectors, parameters, snapshots] = await Promise.all([
      this.db.memoryItem.findMany({
        where: { agentId: scope },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
      this.db.knowledge.findMany({
        where: { agentId: scope },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      }),
      this.db.session.findMany({
        where: { agentId: scope },
        orderBy: [{ createdAt: 'asc' }, { conversationId: 'asc' }],
        include: { messages: { orderBy: [{ timestamp: 'asc' }, { id: 'asc' }], include: { entry: true } } },
      }),
      this.db.embedding.findMany({ where: { agentId: scope, model: this.embeddings.model } }),
      this.db.adaptiveParameter.findMany({ where: { agentId: scope }, orderBy: { key: 'asc' } }),
      includeSnapshots
        ? this.db.optimizationSnapshot.findMany({
            where: { agentId: scope },
            orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
          })
        : Promise.resolve(null),
    ])
    const storedSettings = safeJson(agent.memorySettings)
    const policy = await this.privacy.policy(scope)
    const memoryRef = new Map(memories.map((m, i) => [m.id, `m${i + 1}`]))
    const messageRef = new Map<number, string>()
    for (const session of sessions)
      for (const [i, message] of session.messages.entries())
        messageRef.set(message.id, `${session.conversationId}#${i + 1}`)
    const knowledgeRef = new Map(knowledge.map((k) => [k.id, `${k.category}/${k.key}`]))
    const ownerRef = (kind: string, id: number) =>
      kind === 'memory' ? memoryRef.get(id) : kind === 'message' ? messageRef.get(id) : knowledgeRef.get(id)
    return {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      agent: { id: agent.id, name: agent.name },
      settings: {
        settings: storedSettings.settings ?? {},
        contextBudgets: storedSettings.contextBudgets ?? {},
      },
      parameters: parameters.map((p) => ({ key: p.key, value: p.value })),
      privacyPolicy: { mode: policy.mode, patterns: policy.patterns },
      ...(snapshots
        ? {
            snapshots: snapshots.map((s) => ({
              tokensBefore: s.tokensBefore,
              tokensAfter: s.tokensAfter,
              entriesCompressed: s.entriesCompressed,
              entriesDropped: s.entriesDropped,
              entriesPromoted: s.entriesPromoted,
              usageRatio: s.usageRatio,
              compressionTriggerRatio: s.compressionTriggerRatio,
              fullMessageWindow: s.fullMessageWindow,
              minRelevanceScore: s.minRelevanceScore,
              timestamp: s.timestamp.toISOString(),
            })),
          }
        : {}),
      embeddingModel: this.embeddings.model,
      memories: memories.map((m) => ({
        ref: memoryRef.get(m.id) as string,
        content: m.content,
        category: m.category as (typeof MEMORY_CATEGORIES)[number],
        tags: JSON.parse(m.tags) as string[],
        importance: m.importance,
        confidence: m.confidence,
        pinned: m.pinned,
        userId: m.userId,
        sourceConversationId: m.sourceConversationId,
        sourceMessageId: m.sourceMessageId,
        accessCount: m.accessCount,
        lastAccessedAt: iso(m.lastAccessedAt),
        validFrom: m.validFrom.toISOString(),
        validUntil: iso(m.validUntil),
        supersededBy: m.supersededById == null ? null : (memoryRef.get(m.supersededById) ?? null),
        metadata: parseMetadata(m.metadata),
        createdAt: m.createdAt.toISOString(),
        updatedAt: m.updatedAt.toISOString(),
      })),
      knowledge: knowledge.map((k) => ({
        category: k.category as (typeof KNOWLEDGE_CATEGORIES)[number],
        key: k.key,
        value: k.value,
        confidence: k.confidence,
        storeCount: k.storeCount,
        useCount: k.useCount,
        lastUsedAt: iso(k.lastUsedAt),
        lastDecayAt: iso(k.lastDecayAt),
        createdAt: k.createdAt.toISOString(),
        updatedAt: k.updatedAt.toISOString(),
      })),
      sessions: sessions.map((s) => ({
        conversationId: s.conversationId,
        createdAt: s.createdAt.toISOString(),
        updatedAt: s.updatedAt.toISOString(),
        messages: s.messages.map((m) => ({
          role: m.role as (typeof ROLES)[number],
          speaker: m.speaker,
          content: m.content,
          tokenCount: m.tokenCount,
          isCompressed: m.isCompressed,
          metadata: parseMetadata(m.metadata),
          timestamp: m.timestamp.toISOString(),
          createdAt: m.createdAt.toISOString(),
          entry: m.entry
            ? {
                type: m.entry.type as 'short_term' | 'long_term',
                content: m.entry.content,
                tokenCount: m.entry.tokenCount,
                relevance: m.entry.relevance,
                isCompressed: m.entry.isCompressed,
                metadata: parseMetadata(m.entry.metadata),
                timestamp: m.entry.timestamp.toISOString(),
                createdAt: m.entry.createdAt.toISOString(),
              }
            : null,
        })),
      })),
      vectors: vectors
        .flatMap((v) => {
          const ref = ownerRef(v.kind, v.ownerId)
          return ref
            ? [
                {
                  owner: `${v.kind}:${ref}`,
                  dimensions: v.dimensions,
                  vector: Buffer.from(v.vector).toString('base64'),
                },
              ]
            : []
        })
        .sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0)),
    }
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
    const parsed = ExportDocumentSchema.safeParse(input)
    if (!parsed.success) throw validationErrorFromZod(parsed.error, 'document')
    const doc = parsed.data
    this.assertReferences(doc)
    // REPLACE takes the agent's settings, parameters and policy from the document; MERGE only adds
    // memory and keeps the agent's own.
    const replacing = mode === 'REPLACE'
    const policy = replacing ? await this.documentPolicy(scope, doc, admin) : undefined
    const settings = replacing && doc.settings ? this.documentSettings(doc) : undefined
    this.assertParameters(doc)
    // The data is guarded by the policy in force when it arrives, like every write; a policy the
    // document brings applies to what is written after.
    const redacted = await this.guardDocument(scope, doc)
    this.settleSpeakers(doc)
    const sameModel = doc.embeddingModel === this.embeddings.model
    const now = this.clock.now()

    const report = await this.db.$transaction(
      async (tx) => {
        if (mode === 'REPLACE') {
          await this.clearAgentData(tx, scope)
          if (settings) await tx.agent.update({ where: { id: scope }, data: { memorySettings: settings } })
          if (policy)
            await tx.agent.update({
              where: { id: scope },
              data: { privacyMode: policy.mode, privacyPatterns: JSON.stringify(policy.patterns) },
            })
          for (const p of doc.parameters ?? [])
            await tx.adaptiveParameter.create({ data: { agentId: scope, key: p.key, value: p.value } })
        } else {
          const clash = await tx.session.findFirst({
            where: { agentId: scope, conversationId: { in: doc.sessions.map((s) => s.conversationId) } },
          })
          if (clash)
            throw new ValidationError([
              {
                field: 'document.sessions',
                message: `conversation ${clash.conversationId} already exists (use REPLACE)`,
              },
            ])
        }
        const memoryIds = new Map<string, number>()
        /** The text each vector owner (kind:ref) is embedded from, for the vectors' content hash. */
        const ownerText = new Map<string, string>()
        for (const m of doc.memories) {
          const content = m.content
          const row = await tx.memoryItem.create({
            data: {
              agentId: scope,
              userId: m.userId,
              content,
              category: m.category,
              tags: JSON.stringify(m.tags),
              importance: m.importance,
              confidence: m.confidence,
              pinned: m.pinned,
              sourceConversationId: m.sourceConversationId,
              sourceMessageId: m.sourceMessageId,
              accessCount: m.accessCount,
              lastAccessedAt: m.lastAccessedAt,
              validFrom: m.validFrom,
              validUntil: m.validUntil,
              metadata: JSON.stringify(m.metadata),
              contentHash: contentHash(content),
              tokenCount: this.tokenCounter.count(content),
              createdAt: m.createdAt,
              updatedAt: m.updatedAt,
            },
          })
          memoryIds.set(m.ref, row.id)
          ownerText.set(`memory:${m.ref}`, content)
        }
        for (const m of doc.memories) {
          if (m.supersededBy)
            await tx.memoryItem.update({
              where: { id: memoryIds.get(m.ref) as number },
              data: { supersededById: memoryIds.get(m.supersededBy) as number },
            })
        }
        const knowledgeIds = new Map<string, number>()
        for (const k of doc.knowledge) {
          const row = await tx.knowledge.upsert({
            where: { agentId_category_key: { agentId: scope, category: k.category, key: k.key } },
            create: { agentId: scope, ...k },
            update: { ...k },
          })
          knowledgeIds.set(`${k.category}/${k.key}`, row.id)
          ownerText.set(`knowledge:${k.category}/${k.key}`, `${k.key}: ${k.value}`)
        }
        // A merged fact the agent already had keeps its row: its vectors are of the old value (and
        // the document's would collide with them).
        if (mode === 'MERGE' && knowledgeIds.size > 0)
          await tx.embedding.deleteMany({
            where: { kind: 'knowledge', ownerId: { in: [...knowledgeIds.values()] } },
          })
        const messageIds = new Map<string, number>()
        let messages = 0
        for (const s of doc.sessions) {
          const session = await tx.session.create({
            data: {
              id: randomUUID(),
              agentId: scope,
              conversationId: s.conversationId,
              messageCount: s.messages.length,
              createdAt: s.createdAt,
              updatedAt: s.updatedAt,
            },
          })
          for (const [j, m] of s.messages.entries()) {
            const row = await tx.message.create({
              data: {
                sessionId: session.id,
                agentId: scope,
                role: m.role,
                speaker: m.speaker ?? null,
                content: m.content,
                tokenCount: m.tokenCount,
                isCompressed: m.isCompressed,
                metadata: JSON.stringify(m.metadata),
                timestamp: m.timestamp,
                createdAt: m.createdAt,
              },
            })
            messageIds.set(`${s.conversationId}#${j + 1}`, row.id)
            ownerText.set(`message:${s.conversationId}#${j + 1}`, m.content)
            if (m.entry) {
              await tx.memoryEntry.create({
                data: {
                  agentId: scope,
                  sessionId: session.id,
                  messageId: row.id,
                  type: m.entry.type,
                  role: m.role,
                  content: m.entry.content,
                  tokenCount: m.entry.tokenCount,
                  relevance: m.entry.relevance,
                  isCompressed: m.entry.isCompressed,
                  metadata: JSON.stringify(m.entry.metadata),
                  timestamp: m.entry.timestamp,
                  createdAt: m.entry.createdAt,
                },
              })
            }
            messages++
          }
        }
        if (doc.snapshots?.length)
          await tx.optimizationSnapshot.createMany({
            data: doc.snapshots.map((snapshot) => ({ agentId: scope, ...snapshot })),
          })
        let vectors = 0
        if (sameModel && doc.embeddingModel) {
          const rows = doc.vectors.flatMap((v) => {
            const [kind, ...rest] = v.owner.split(':')
            const ref = rest.join(':')
            const ownerId =
              kind === 'memory'
                ? memoryIds.get(ref)
                : kind === 'message'
                  ? messageIds.get(ref)
                  : knowledgeIds.get(ref)
            // A redacted text's vector was computed from what was redacted: it is embedded again.
            // Owners and sizes were checked (assertReferences): a miss here is a redacted text.
            if (ownerId == null || !kind || redacted.has(v.owner)) return []
            const bytes = Buffer.from(v.vector, 'base64')
            return [
              {
                kind,
                ownerId,
                agentId: scope,
                model: doc.embeddingModel as string,
                dimensions: v.dimensions,
                vector: new Uint8Array(bytes),
                contentHash: contentHash(ownerText.get(v.owner) ?? ''),
                createdAt: now,
              },
            ]
          })
          if (rows.length) await tx.embedding.createMany({ data: rows })
          vectors = rows.length
        }
        return {
          memories: doc.memories.length,
          knowledge: doc.knowledge.length,
          sessions: doc.sessions.length,
          messages,
          vectors,
          reembedded: !sameModel,
        }
      },
      { timeout: 600_000, maxWait: 30_000 },
    )
    this.writes.touch(scope)
    this.lifecycle.forget(scope)
    // What REPLACE deleted is deleted everywhere (files, full-text segments, the WAL).
    if (mode === 'REPLACE') await this.lifecycle.purge(scope)
    // A different model's vectors are not comparable: everything is embedded with the current one.
    if (!sameModel && this.embeddings.isLocal)
      for (const kind of ['memory', 'message', 'knowledge'] as const) await this.embeddings.fill(scope, kind)
    // Whatever arrived without a vector of the current model is embedded by the job queue.
    await this.embeddings.enqueueMissing(scope)
    return report
  }

  /**
   * Puts every text and metadata object of the document through the agent's privacy policy, as
   * the single writes do: a rejection names the field; redactions are made in the document (token
   * counts follow). Returns the vector owners (kind:ref) whose text changed.
   */
  private async guardDocument(
    scope: string,
    doc: z.infer<typeof ExportDocumentSchema>,
  ): Promise<Set<string>> {
    const texts: { field: string; text: string; owner?: string; set: (text: string) => void }[] = []
    const metadata: {
      field: string
      value: Record<string, unknown>
      set: (value: Record<string, unknown>) => void
    }[] = []
    for (const [i, m] of doc.memories.entries()) {
      const at = `document.memories.${i}`
      texts.push({
        field: `${at}.content`,
        text: m.content,
        owner: `memory:${m.ref}`,
        set: (t) => (m.content = t),
      })
      for (const [j, tag] of m.tags.entries())
        texts.push({ field: `${at}.tags.${j}`, text: tag, set: (t) => (m.tags[j] = t) })
      metadata.push({ field: `${at}.metadata`, value: m.metadata, set: (v) => (m.metadata = v) })
    }
    for (const [i, k] of doc.knowledge.entries()) {
      const owner = `knowledge:${k.category}/${k.key}`
      texts.push({ field: `document.knowledge.${i}.key`, text: k.key, owner, set: (t) => (k.key = t) })
      texts.push({ field: `document.knowledge.${i}.value`, text: k.value, owner, set: (t) => (k.value = t) })
    }
    for (const [i, s] of doc.sessions.entries()) {
      for (const [j, m] of s.messages.entries()) {
        const at = `document.sessions.${i}.messages.${j}`
        texts.push({
          field: `${at}.content`,
          text: m.content,
          owner: `message:${s.conversationId}#${j + 1}`,
          set: (t) => {
            m.content = t
            m.tokenCount = this.tokenCounter.count(t)
          },
        })
        metadata.push({ field: `${at}.metadata`, value: m.metadata, set: (v) => (m.metadata = v) })
        const speaker = m.speaker
        if (speaker != null)
          texts.push({ field: `${at}.speaker`, text: speaker, set: (t) => (m.speaker = t) })
        const entry = m.entry
        if (!entry) continue
        texts.push({
          field: `${at}.entry.content`,
          text: entry.content,
          set: (t) => {
            entry.content = t
            entry.tokenCount = this.tokenCounter.count(t)
          },
        })
        metadata.push({
          field: `${at}.entry.metadata`,
          value: entry.metadata,
          set: (v) => (entry.metadata = v),
        })
      }
    }
    const guarded = await this.privacy.guard(scope, texts, metadata)
    const redacted = new Set<string>()
    for (const [i, t] of texts.entries()) {
      const safe = guarded.texts[i] as string
      if (safe === t.text) continue
      t.set(safe)
      if (t.owner) redacted.add(t.owner)
    }
    for (const [i, m] of metadata.entries()) m.set((guarded.metadata[i] ?? {}) as Record<string, unknown>)
    return redacted
  }

  /**
   * Each message's speaker as a write would store it, once the document is guarded. A speaker the
   * document gives is checked like addMessage's (a ValidationError naming it). A document from
   * before speakers has none: they are taken from the metadata, and a value a write would refuse
   * is left out rather than refusing a backup that was valid when it was made.
   */
  private settleSpeakers(doc: z.infer<typeof ExportDocumentSchema>): void {
    for (const [i, s] of doc.sessions.entries())
      for (const [j, m] of s.messages.entries()) {
        if (m.speaker === undefined) {
          const derived = speakerOf({ metadata: m.metadata })
          m.speaker = derived.issue ? null : derived.speaker
        } else if (m.speaker !== null) {
          const given = speakerOf({ speaker: m.speaker }, `document.sessions.${i}.messages.${j}`)
          if (given.issue) throw new ValidationError([given.issue])
          m.speaker = given.speaker
        }
      }
  }

  private assertReferences(doc: z.infer<typeof ExportDocumentSchema>): void {
    const refs = new Set<string>()
    for (const [i, m] of doc.memories.entries()) {
      if (refs.has(m.ref))
        throw new ValidationError([
          { field: `document.memories.${i}.ref`, message: `duplicate ref ${m.ref}` },
        ])
      refs.add(m.ref)
    }
    for (const [i, m] of doc.memories.entries()) {
      if (m.supersededBy && !refs.has(m.supersededBy))
        throw new ValidationError([
          {
            field: `document.memories.${i}.supersededBy`,
            message: `names no memory of this document (${m.supersededBy})`,
          },
        ])
    }
    const facts = new Set<string>()
    for (const [i, k] of doc.knowledge.entries()) {
      // One row per category and key: a second would overwrite the first and be counted twice.
      if (facts.has(`${k.category}/${k.key}`))
        throw new ValidationError([
          { field: `document.knowledge.${i}.key`, message: `duplicate ${k.category}/${k.key}` },
        ])
      facts.add(`${k.category}/${k.key}`)
    }
    const conversations = new Set<string>()
    for (const [i, s] of doc.sessions.entries()) {
      if (conversations.has(s.conversationId))
        throw new ValidationError([
          { field: `document.sessions.${i}.conversationId`, message: `duplicate ${s.conversationId}` },
        ])
      conversations.add(s.conversationId)
      for (const [j, m] of s.messages.entries()) {
        if (m.content.length > this.limits.maxContentChars)
          throw new ValidationError([
            {
              field: `document.sessions.${i}.messages.${j}.content`,
              message: `must be at most ${this.limits.maxContentChars} characters`,
              limit: this.limits.maxContentChars,
            },
          ])
      }
    }
    const messages = new Set<string>()
    for (const s of doc.sessions)
      for (const j of s.messages.keys()) messages.add(`${s.conversationId}#${j + 1}`)
    const owners = { memory: refs, message: messages, knowledge: facts }
    const seen = new Set<string>()
    for (const [i, v] of doc.vectors.entries()) {
      const field = `document.vectors.${i}`
      const colon = v.owner.indexOf(':')
      const kind = v.owner.slice(0, colon) as (typeof VECTOR_KINDS)[number]
      const ref = v.owner.slice(colon + 1)
      // Every stored vector must be one a delete of its owner removes: a known kind, a real owner.
      if (colon < 0 || !VECTOR_KINDS.includes(kind))
        throw new ValidationError([
          {
            field: `${field}.owner`,
            message: `"${v.owner}" must be kind:ref with kind one of ${VECTOR_KINDS.join(', ')}`,
          },
        ])
      if (!owners[kind].has(ref))
        throw new ValidationError([
          { field: `${field}.owner`, message: `"${v.owner}" names no ${kind} of this document` },
        ])
      if (seen.has(v.owner))
        throw new ValidationError([{ field: `${field}.owner`, message: `duplicate vector for ${v.owner}` }])
      seen.add(v.owner)
      const bytes = Buffer.from(v.vector, 'base64').byteLength
      if (bytes !== v.dimensions * 4)
        throw new ValidationError([
          {
            field: `${field}.vector`,
            message: `holds ${bytes} bytes, not ${v.dimensions} dimensions × 4`,
            limit: v.dimensions * 4,
          },
        ])
    }
  }

  /**
   * The document's privacy policy, checked like setPrivacyPolicy. Only an admin may change an
   * agent's policy, so an agent key importing a different one is refused rather than obeyed.
   */
  private async documentPolicy(
    scope: string,
    doc: z.infer<typeof ExportDocumentSchema>,
    admin: boolean,
  ): Promise<StoredPrivacyPolicy | undefined> {
    if (!doc.privacyPolicy) return undefined
    const policy = { mode: doc.privacyPolicy.mode, patterns: doc.privacyPolicy.patterns }
    compilePrivacyPatterns(policy.patterns, 'document.privacyPolicy.patterns')
    if (admin) return policy
    const current = await this.privacy.policy(scope)
    if (JSON.stringify(current) !== JSON.stringify(policy))
      throw new ValidationError([
        {
          field: 'document.privacyPolicy',
          message: "differs from the agent's policy; only an admin key may import a privacy policy",
        },
      ])
    return undefined
  }

  /** The document's settings, validated as updateMemorySettings validates them, as stored JSON. */
  private documentSettings(doc: z.infer<typeof ExportDocumentSchema>): string {
    const settings = doc.settings?.settings ?? {}
    const contextBudgets = doc.settings?.contextBudgets ?? {}
    try {
      parseMemorySettings(settings)
    } catch (error) {
      if (error instanceof ValidationError)
        throw new ValidationError(
          error.issues.map((issue) => ({ ...issue, field: `document.settings.${issue.field}` })),
        )
      throw error
    }
    const budgets = ContextBudgetsSchema.safeParse(contextBudgets)
    if (!budgets.success) throw validationErrorFromZod(budgets.error, 'document.settings.contextBudgets')
    return JSON.stringify({ settings, contextBudgets })
  }

  /** Learned parameters within the optimizer's ranges; lifetime totals whole and not negative. */
  private assertParameters(doc: z.infer<typeof ExportDocumentSchema>): void {
    const given = doc.parameters ?? []
    const keys = new Set<string>()
    for (const [i, p] of given.entries()) {
      if (keys.has(p.key))
        throw new ValidationError([{ field: `document.parameters.${i}.key`, message: `duplicate ${p.key}` }])
      keys.add(p.key)
      if (!(PARAMETER_KEYS as readonly string[]).includes(p.key) && !(p.value >= 0))
        throw new ValidationError([
          { field: `document.parameters.${i}.value`, message: 'must not be negative', limit: 0 },
        ])
    }
    const candidate: Record<string, number> = { ...DEFAULT_OPTIMIZER_PARAMETERS }
    for (const p of given)
      if ((PARAMETER_KEYS as readonly string[]).includes(p.key)) candidate[p.key] = p.value
    const parsed = OptimizerParametersSchema.safeParse(candidate)
    if (!parsed.success) throw validationErrorFromZod(parsed.error, 'document.parameters')
  }

  /** Everything an agent remembers; the agent, its keys and its settings stay. */
  private async clearAgentData(tx: Parameters<Parameters<Database['$transaction']>[0]>[0], scope: string) {
    await tx.memoryItem.updateMany({ where: { agentId: scope }, data: { supersededById: null } })
    const counts = await Promise.all([
      tx.memoryItem.deleteMany({ where: { agentId: scope } }),
      tx.knowledge.deleteMany({ where: { agentId: scope } }),
      tx.session.deleteMany({ where: { agentId: scope } }),
      tx.memoryEntry.deleteMany({ where: { agentId: scope } }),
      tx.embedding.deleteMany({ where: { agentId: scope } }),
      tx.embeddingCache.deleteMany({ where: { agentId: scope } }),
      tx.optimizationSnapshot.deleteMany({ where: { agentId: scope } }),
      tx.adaptiveParameter.deleteMany({ where: { agentId: scope } }),
      // Queued work about the cleared rows (its handlers would find nothing, but the queue's
      // depth would report it) and dead letters holding their errors.
      tx.job.deleteMany({ where: { agentId: scope } }),
    ])
    return {
      memories: counts[0].count,
      knowledge: counts[1].count,
      sessions: counts[2].count,
    }
  }

  /** Clears one agent's memory, or every agent's (agentId null). Needs the confirmation text. */
  async clearAll(
    agentId: string | null,
    confirm: string,
  ): Promise<{ memories: number; knowledge: number; sessions: number }> {
    const expected = agentId ? `CLEAR ${agentId}` : 'CLEAR ALL AGENTS'
    if (confirm !== expected)
      throw new ValidationError([
        { field: 'confirm', message: `must be exactly "${expected}" to clear`, limit: expected },
      ])
    const agents = agentId
      ? [agentId]
      : (await this.db.agent.findMany({ select: { id: true } })).map((a) => a.id)
    const total = { memories: 0, knowledge: 0, sessions: 0 }
    await this.db.$transaction(
      async (tx) => {
        for (const id of agents) {
          const cleared = await this.clearAgentData(tx, id)
          total.memories += cleared.memories
          total.knowledge += cleared.knowledge
          total.sessions += cleared.sessions
        }
      },
      { timeout: 600_000 },
    )
    for (const id of agents) this.writes.touch(id)
    this.lifecycle.forget(agentId ?? undefined)
    await this.lifecycle.purge(agentId ?? undefined)
    return total
  }

  // --- whole-database backups -------------------------------------------------------------------

  private requireFiles(): { file: string; dir: string } {
    if (!this.databaseFile || !this.backupDirectory)
      throw new ValidationError([
        { field: 'backup', message: 'backups need a database file and ENGRAM_BACKUP_DIR' },
      ])
    return { file: this.databaseFile, dir: this.backupDirectory }
  }

  /** A consistent copy of the whole database while it serves (SQLite VACUUM INTO). */
  async backup(): Promise<BackupInfo> {
    const { dir } = this.requireFiles()
    fs.mkdirSync(dir, { recursive: true })
    const now = this.clock.now()
    let name = `engram-${now.toISOString().replace(/[:.]/g, '-')}.db`
    for (let n = 1; fs.existsSync(path.join(dir, name)); n++) name = name.replace(/(-\d+)?\.db$/, `-${n}.db`)
    const target = path.join(dir, name)
    await this.db.$executeRawUnsafe(`VACUUM INTO '${target.replaceAll("'", "''")}'`)
    return { name, bytes: fs.statSync(target).size, createdAt: now }
  }

  listBackups(): BackupInfo[] {
    const { dir } = this.requireFiles()
    if (!fs.existsSync(dir)) return []
    return fs
      .readdirSync(dir)
      .filter((name) => BACKUP_NAME.test(name))
      .map((name) => {
        const stat = fs.statSync(path.join(dir, name))
        return { name, bytes: stat.size, createdAt: stat.mtime }
      })
      .sort((a, b) => b.name.localeCompare(a.name))
  }

  /**
   * Replaces every table's rows with the backup's, in one transaction on a second connection to
   * the same file (WAL lets the server keep reading until it commits). API keys stay as they are,
   * so the operator restoring keeps access. The backup must have the same migrations.
   */
  async restore(name: string): Promise<{ name: string; tables: number }> {
    const { file, dir } = this.requireFiles()
    if (!BACKUP_NAME.test(name) || !fs.existsSync(path.join(dir, name)))
      throw new ValidationError([{ field: 'name', message: `no backup named ${name} in the backup folder` }])
    const connection = new Database3(file)
    let tables: string[]
    try {
      connection.pragma('foreign_keys = OFF')
      // The rows a restore replaces are deleted data like any other (see CONNECTION_PRAGMAS).
      connection.pragma('secure_delete = ON')
      connection.prepare('ATTACH DATABASE ? AS backup').run(path.join(dir, name))
      const migrations = (schema: string) =>
        connection
          .prepare(
            `SELECT migration_name FROM ${schema}._prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name`,
          )
          .all()
          .map((r) => (r as { migration_name: string }).migration_name)
          .join(',')
      if (migrations('main') !== migrations('backup'))
        throw new ValidationError([
          { field: 'name', message: 'the backup was made with other migrations than this server has' },
        ])
      tables = (
        connection
          .prepare(
            `SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%Search_%'`,
          )
          .all() as { name: string }[]
      )
        .map((r) => r.name)
        .filter((t) => !RESTORE_KEEPS.has(t))
      connection.transaction(() => {
        for (const table of tables) connection.prepare(`DELETE FROM main."${table}"`).run()
        for (const table of tables)
          connection.prepare(`INSERT INTO main."${table}" SELECT * FROM backup."${table}"`).run()
        // Keys of agents the backup does not have would dangle: they go.
        connection
          .prepare(
            `DELETE FROM main."ApiKey" WHERE "agentId" IS NOT NULL AND "agentId" NOT IN (SELECT "id" FROM main."Agent")`,
          )
          .run()
        const broken = connection.prepare('PRAGMA main.foreign_key_check').all()
        if (broken.length) throw new Error(`restore would break ${broken.length} references`)
      })()
      this.writes.touchAll()
    } finally {
      try {
        connection.prepare('DETACH DATABASE backup').run()
      } catch {}
      connection.close()
    }
    // Every agent may be another now (or gone): nothing granted or cached for the old ones carries
    // over, and the replaced rows are deleted data.
    this.lifecycle.ended()
    await this.lifecycle.purge()
    return { name, tables: tables.length }
  }
}
