import { z } from 'zod'
import { BuiltContextSchema } from './context-builder.ts'
import {
  ContextSectionSchema,
  ExtractorChoiceSchema,
  ExtractorSchema,
  FormationOutcomeSchema,
  FormationWorkKindSchema,
  FormationWriterSchema,
  KnowledgeCategorySchema,
  LlmCircuitStateSchema,
  MemoryCategorySchema,
  MemoryEntryTypeSchema,
  MemoryTierSchema,
  MemoryWriteOutcomeSchema,
  ProfileTriggerSchema,
  RoleSchema,
  SearchScopeSchema,
  SummaryStrategySchema,
  SummaryTriggerSchema,
  VerificationLayerSchema,
} from './enums.ts'
import { ExtractionSettingsSchema, ProfileSettingsSchema, SummarySettingsSchema } from './fields.ts'
import { GraphEntitySchema, GraphRelationshipSchema } from './graph.ts'

// ---------------------------------------------------------------------------------------------
// Outputs: the fields every door returns. Dates travel as ISO 8601 strings, JSON as plain values.

const date = z.string()
const json = z.record(z.string(), z.unknown())

export const PageInfoSchema = z.object({
  hasNextPage: z.boolean(),
  hasPreviousPage: z.boolean(),
  startCursor: z.string().nullable(),
  endCursor: z.string().nullable(),
})

export const MessageSchema = z.object({
  id: z.string(),
  role: RoleSchema,
  content: z.string(),
  speaker: z.string().nullable(),
  metadata: json,
  timestamp: date,
  tokenCount: z.number().int(),
  isCompressed: z.boolean(),
})

export const SessionSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  conversationId: z.string(),
  messageCount: z.number().int(),
  createdAt: date,
  updatedAt: date,
})

export const AddMessagesPayloadSchema = z.object({ session: SessionSchema, messages: z.array(MessageSchema) })
export const SessionPageSchema = z.object({
  totalCount: z.number().int(),
  pageInfo: PageInfoSchema,
  sessions: z.array(SessionSchema),
})
export const DeleteSessionPayloadSchema = z.object({ conversationId: z.string(), deleted: z.boolean() })

export const CompressedMessageSchema = z.object({
  message: MessageSchema,
  content: z.string(),
  tokenCount: z.number().int(),
})
export const ContextWindowSchema = z.object({
  availableBudget: z.number().int(),
  full: z.array(MessageSchema),
  compressed: z.array(CompressedMessageSchema),
  dropped: z.array(MessageSchema),
  fullTokens: z.number().int(),
  compressedTokens: z.number().int(),
  droppedTokens: z.number().int(),
  originalTokens: z.number().int(),
  totalTokens: z.number().int(),
  usageRatio: z.number(),
  underPressure: z.boolean(),
  overBudget: z.boolean(),
  trimmedFullMessages: z.number().int(),
})

export const MemoryItemSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  userId: z.string().nullable(),
  content: z.string(),
  category: MemoryCategorySchema,
  tags: z.array(z.string()),
  importance: z.number(),
  confidence: z.number(),
  pinned: z.boolean(),
  isCurrent: z.boolean(),
  accessCount: z.number().int(),
  lastAccessedAt: date.nullable(),
  validFrom: date,
  validUntil: date.nullable(),
  supersededById: z.string().nullable(),
  sourceConversationId: z.string().nullable(),
  sourceMessageId: z.string().nullable(),
  metadata: json,
  tokenCount: z.number().int(),
  createdAt: date,
  updatedAt: date,
})

export const MemoryWriteSchema = z.object({
  outcome: MemoryWriteOutcomeSchema,
  memory: MemoryItemSchema,
  duplicateOf: MemoryItemSchema.nullable(),
  superseded: MemoryItemSchema.nullable(),
  evicted: z.array(MemoryItemSchema),
  layer: VerificationLayerSchema.nullable(),
  similarity: z.number().nullable(),
})

export const MemoryPageSchema = z.object({
  totalCount: z.number().int(),
  pageInfo: PageInfoSchema,
  memories: z.array(MemoryItemSchema),
})

export const KnowledgeSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  category: KnowledgeCategorySchema,
  key: z.string(),
  value: z.string(),
  confidence: z.number(),
  useCount: z.number().int(),
  storeCount: z.number().int(),
  lastUsedAt: date.nullable(),
  createdAt: date,
  updatedAt: date,
})
export const KnowledgePageSchema = z.object({
  totalCount: z.number().int(),
  pageInfo: PageInfoSchema,
  knowledge: z.array(KnowledgeSchema),
})
export const KnowledgeMatchSchema = z.object({
  knowledge: KnowledgeSchema,
  score: z.number(),
  matchedTerms: z.array(z.string()),
})
export const RelevantKnowledgeSchema = z.object({ matches: z.array(KnowledgeMatchSchema) })

export const ScoreComponentsSchema = z.object({
  bm25: z.number(),
  vector: z.number(),
  recency: z.number(),
  importance: z.number(),
  confidence: z.number(),
  decay: z.number(),
  context: z.number(),
  episode: z.number(),
  time: z.number(),
  speaker: z.number(),
  feedback: z.number(),
  cooccurrence: z.number(),
  /** Graph expansion's score before weighting (0 when no named entity's neighbourhood reached it). */
  graph: z.number(),
})
export const SearchHitSchema = z.object({
  id: z.string(),
  rank: z.number().int(),
  scope: SearchScopeSchema,
  text: z.string(),
  score: z.number(),
  relevance: z.number(),
  mmrScore: z.number(),
  timestamp: date,
  conversationId: z.string().nullable(),
  components: ScoreComponentsSchema,
  message: MessageSchema.nullable(),
  memory: MemoryItemSchema.nullable(),
  knowledge: KnowledgeSchema.nullable(),
  /** A GRAPH hit: the entity, or the relationship (with its ends and sources). */
  entity: GraphEntitySchema.nullable(),
  relationship: GraphRelationshipSchema.nullable(),
  /** A POOLS hit: the shared pool its memory is in; null for the other scopes. */
  poolId: z.string().nullable(),
})
export const SearchResultSchema = z.object({ mmrLambda: z.number(), hits: z.array(SearchHitSchema) })

export const ContextSectionReportSchema = z.object({
  section: ContextSectionSchema,
  title: z.string(),
  budgetTokens: z.number().int().nullable(),
  usedTokens: z.number().int(),
  includedCount: z.number().int(),
  omittedCount: z.number().int(),
  included: z.array(z.string()),
  omitted: z.array(z.string()),
})
export const MemoryContextSchema = z.object({
  text: z.string(),
  totalTokens: z.number().int(),
  budgetTokens: z.number().int(),
  cached: z.boolean(),
  generatedAt: date,
  sections: z.array(ContextSectionReportSchema),
  /** Spec 002's built prompt when buildContext was asked for (issue 17). */
  built: BuiltContextSchema.nullable().optional(),
})

export const OptimizerParametersSchema = z.object({
  compressionTrigger: z.number(),
  fullMessageWindow: z.number().int(),
  minRelevance: z.number(),
  targetUsageRatio: z.number(),
})
export const OptimizerStatusSchema = z.object({
  totalOptimizations: z.number().int(),
  totalTokensSaved: z.number().int(),
  avgSavingsPerRun: z.number().int(),
  averageTokensSavedPerRun: z.number(),
  currentParameters: OptimizerParametersSchema,
  lastRunAt: date.nullable(),
  intervalMs: z.number().int(),
})
export const OptimizationSnapshotSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  tokensBefore: z.number().int(),
  tokensAfter: z.number().int(),
  tokensSaved: z.number().int(),
  entriesCompressed: z.number().int(),
  entriesDropped: z.number().int(),
  entriesPromoted: z.number().int(),
  usageRatio: z.number(),
  compressionTriggerRatio: z.number(),
  fullMessageWindow: z.number().int(),
  minRelevanceScore: z.number(),
  timestamp: date,
})

export const MemoryExportSchema = z.object({
  document: json,
  exportedAt: date,
  sessions: z.number().int(),
  messages: z.number().int(),
  memories: z.number().int(),
  knowledge: z.number().int(),
  vectors: z.number().int(),
})
export const ImportReportSchema = z.object({
  sessions: z.number().int(),
  messages: z.number().int(),
  memories: z.number().int(),
  knowledge: z.number().int(),
  vectors: z.number().int(),
  reembedded: z.boolean(),
})

export const BackupSchema = z.object({ name: z.string(), bytes: z.number().int(), createdAt: date })
export const RestorePayloadSchema = z.object({ name: z.string(), tables: z.number().int() })

export const ApiKeySchema = z.object({
  id: z.string(),
  agentId: z.string().nullable(),
  role: z.string(),
  label: z.string(),
  keyPrefix: z.string(),
  createdAt: date,
  revokedAt: date.nullable(),
})
export const CreatedApiKeySchema = z.object({ key: z.string(), apiKey: ApiKeySchema })
export const AgentSchema = z.object({ id: z.string(), name: z.string(), createdAt: date })

export const EmbeddingProgressSchema = z.object({
  state: z.enum(['IDLE', 'RUNNING', 'DONE', 'FAILED']),
  model: z.string(),
  total: z.number().int(),
  done: z.number().int(),
  failed: z.number().int(),
  error: z.string().nullable(),
  startedAt: date.nullable(),
  finishedAt: date.nullable(),
})

export const SyncMemoryPayloadSchema = z.object({
  /** Conversations that had turns past their extraction watermark. */
  conversations: z.number().int(),
  turns: z.number().int(),
  /** New memories (stored, or superseding an older one). */
  stored: z.array(MemoryItemSchema),
  duplicates: z.number().int(),
  superseded: z.number().int(),
  rejected: z.number().int(),
  extractors: z.array(ExtractorSchema),
  /** Conversation summaries formed from turns not yet summarised. */
  summaries: z.number().int(),
  /** Profile versions written because the new memories made them due. */
  profileVersions: z.number().int(),
})

export const ClassificationSchema = z.object({
  tier: MemoryTierSchema,
  category: MemoryCategorySchema,
  memoryType: MemoryEntryTypeSchema,
  importance: z.number(),
  reasons: z.array(z.string()),
})

export const MemoryFormationSettingsSchema = z.object({
  /** Off: nothing is extracted or summarised for the agent. */
  enabled: z.boolean(),
  /** The extractor new turns are read by and the model it (and the summaries and profile it writes) asks for. */
  extraction: ExtractionSettingsSchema,
  summaries: SummarySettingsSchema,
  profile: ProfileSettingsSchema,
})

export const SummarySchema = z.object({
  id: z.string(),
  agentId: z.string(),
  conversationId: z.string(),
  content: z.string(),
  strategy: SummaryStrategySchema,
  writer: FormationWriterSchema,
  trigger: SummaryTriggerSchema,
  /** The range of the conversation's messages it covers. */
  firstMessageId: z.string(),
  lastMessageId: z.string(),
  messageCount: z.number().int(),
  tokenCount: z.number().int(),
  /** When Engram stored it; retention counts from here. */
  createdAt: date,
})

export const SummarizePayloadSchema = z.object({
  /** Null when every turn of the conversation is already in a summary. */
  summary: SummarySchema.nullable(),
})

export const ProfileVersionSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  /** Null: the profile of the agent's memories that name no user. */
  userId: z.string().nullable(),
  /** 1, 2, 3… per agent and user. */
  version: z.number().int(),
  content: z.string(),
  tokenCount: z.number().int(),
  writer: FormationWriterSchema,
  trigger: ProfileTriggerSchema,
  /** The memories it was built from. */
  sourceMemoryIds: z.array(z.string()),
  /** The pinned memories (user overrides) it shows first and whole. */
  overrideIds: z.array(z.string()),
  createdAt: date,
})

export const UserProfileSchema = z.object({
  /** The newest version; null until a profile was generated for the user. */
  current: ProfileVersionSchema.nullable(),
})

export const ProfileVersionPageSchema = z.object({
  totalCount: z.number().int(),
  /** Newest first. */
  versions: z.array(ProfileVersionSchema),
})

export const ProfileDiffSchema = z.object({
  from: z.number().int(),
  to: z.number().int(),
  /** Lines of `to` that `from` did not have. */
  added: z.array(z.string()),
  /** Lines of `from` that `to` no longer has. */
  removed: z.array(z.string()),
  /** Lines both have. */
  unchanged: z.number().int(),
})

// Memory formation's processing statistics (issue 13 §5, spec 003).

export const FormationWorkStatsSchema = z.object({
  kind: FormationWorkKindSchema,
  calls: z.number().int(),
  successes: z.number().int(),
  failures: z.number().int(),
  /** successes / calls; null before the first call. */
  successRate: z.number().nullable(),
  totalDurationMs: z.number(),
  /** 0 before the first call. */
  averageDurationMs: z.number(),
  lastRunAt: date.nullable(),
  /** The latest failure, its reason cut to 500 characters. */
  lastFailure: z.object({ reason: z.string(), at: date }).nullable(),
})

export const FormationQueueDepthSchema = z.object({
  kind: FormationWorkKindSchema,
  /** The job kind on the queue. */
  jobKind: z.string(),
  pending: z.number().int(),
  running: z.number().int(),
  /** Dead-lettered after their last attempt. */
  failed: z.number().int(),
})

export const FormationActivitySchema = z.object({
  agentId: z.string(),
  /** The extractor the agent's new turns are read by. */
  extractor: ExtractorChoiceSchema,
  /** The model's circuit breaker; null without a language model. */
  circuitState: LlmCircuitStateSchema.nullable(),
  work: z.array(FormationWorkStatsSchema),
  queue: z.array(FormationQueueDepthSchema),
})

export const FormationActivityEventSchema = z.object({
  agentId: z.string(),
  kind: FormationWorkKindSchema,
  outcome: FormationOutcomeSchema,
  /** Why it failed; null on success. */
  reason: z.string().nullable(),
  durationMs: z.number(),
  at: date,
  /** The agent's jobs of this kind still pending when it ended. */
  queueDepth: z.number().int(),
})
