import {
  DEFAULT_GRAPH_LIMITS,
  ENTITY_TYPES,
  GRAPH_ORIGINS,
  KNOWLEDGE_CATEGORIES,
  MEMORY_CATEGORIES,
  PRIVACY_MODES,
  ROLES,
} from '@engram/core'
import { z } from 'zod'
import { PARAMETER_KEYS, STAT_KEYS } from '../parameters/parameter-store.ts'
import { TrajectoryMemoryDocumentSchema } from './trajectory-document.ts'

export const EXPORT_FORMAT = 'engram.export'
// 2 adds the agent's settings, optimizer parameters, privacy policy and (when asked) snapshots;
// 3 adds each message's speaker; 4 the knowledge graph; 5 trajectory memory (issue 16). Older
// documents still import: they simply carry none of those (their messages' speakers are taken from
// metadata, as a write takes them).
export const EXPORT_VERSION = 5
const IMPORTABLE_VERSIONS = [1, 2, 3, 4, 5] as const
/** Vector owners name one of the document's items as `kind:ref`. */
export const VECTOR_KINDS = ['memory', 'message', 'knowledge'] as const
export type VectorKind = (typeof VECTOR_KINDS)[number]
const PARAMETER_ROW_KEYS: readonly string[] = [...PARAMETER_KEYS, ...Object.values(STAT_KEYS)]
/** Bounds an import: what one request may bring (the request body limit bounds it too). */
export const MAX_IMPORT_ITEMS = 200_000

const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s))
const nullableDate = isoDate.nullable()
const json = z.record(z.string(), z.unknown())

const GRAPH_REF = z.string().min(1).max(64)
const { maxEntityNameChars, maxAliasesPerEntity, maxEntitySummaryChars, maxRelationChars } =
  DEFAULT_GRAPH_LIMITS

/**
 * The knowledge graph (version 4): entities `e1…` and relationships `r1…` named by refs the
 * document defines; evidence names its subject by ref and its sources as memory refs (`m1`) and
 * message refs (`conversation#n`) of this document.
 */
export const GraphDocumentSchema = z.object({
  entities: z
    .array(
      z.object({
        ref: GRAPH_REF,
        userId: z.string().max(128).nullable(),
        type: z.enum(ENTITY_TYPES),
        name: z.string().min(1).max(maxEntityNameChars),
        aliases: z.array(z.string().min(1).max(maxEntityNameChars)).max(maxAliasesPerEntity),
        summary: z.string().max(maxEntitySummaryChars).nullable(),
        /** The name's embedding, float32 bytes in base64 (of the document's embedding model). */
        embedding: z.base64().nullable(),
        mentionCount: z.number().int().min(0),
        origin: z.enum(GRAPH_ORIGINS),
        firstSeenAt: isoDate,
        lastSeenAt: isoDate,
        createdAt: isoDate,
        updatedAt: isoDate,
      }),
    )
    .max(MAX_IMPORT_ITEMS),
  relationships: z
    .array(
      z.object({
        ref: GRAPH_REF,
        userId: z.string().max(128).nullable(),
        source: GRAPH_REF,
        relation: z.string().min(1).max(maxRelationChars),
        target: GRAPH_REF,
        confidence: z.number().min(0).max(1),
        validFrom: nullableDate,
        validUntil: nullableDate,
        learntAt: isoDate,
        retiredAt: nullableDate,
        retiredReason: z.string().max(maxEntitySummaryChars).nullable(),
        supersededBy: GRAPH_REF.nullable(),
        origin: z.enum(GRAPH_ORIGINS),
        createdAt: isoDate,
        updatedAt: isoDate,
      }),
    )
    .max(MAX_IMPORT_ITEMS),
  evidence: z
    .array(
      z.object({
        entity: GRAPH_REF.nullable(),
        relationship: GRAPH_REF.nullable(),
        memory: z.string().max(256).nullable(),
        message: z.string().max(256).nullable(),
        createdAt: isoDate,
      }),
    )
    .max(MAX_IMPORT_ITEMS * 3),
})

export const ExportDocumentSchema = z.object({
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
        /** The source turn's ref (`conversation#n`) when the document holds it, else its id. */
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
  /** Absent in documents before version 4. */
  graph: GraphDocumentSchema.optional(),
  /** Runs and trajectory memory (trajectory-document.ts); absent in documents before version 5. */
  trajectoryMemory: TrajectoryMemoryDocumentSchema.optional(),
})
/** The document as exported (dates as ISO strings) and as an import accepts it. */
export type ExportDocument = z.input<typeof ExportDocumentSchema>
/** The graph section as exported. */
export type GraphDocument = z.input<typeof GraphDocumentSchema>
/** The document once parsed (dates as Dates): what validation and writing work on. */
export type ParsedDocument = z.infer<typeof ExportDocumentSchema>

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
