import { z } from 'zod'
import { AGENT_ID_PATTERN, CONVERSATION_ID_PATTERN, CONTRACT_LIMITS as L } from './limits.ts'

// ---------------------------------------------------------------------------------------------
// Enums: the GraphQL enums' values, spelled the same (catalog.test.ts compares them).

export const RoleSchema = z.enum(['USER', 'ASSISTANT', 'SYSTEM', 'TOOL'])
export const MemoryCategorySchema = z.enum([
  'FACT',
  'PREFERENCE',
  'DECISION',
  'CORRECTION',
  'RELATIONSHIP',
  'SKILL',
  'COMMITMENT',
  'CONTEXT',
  'PAST_CONVERSATION',
])
export const KnowledgeCategorySchema = z.enum([
  'DOMAIN',
  'EXECUTION_PATTERN',
  'USER_PREFERENCE',
  'WEBSITE_KNOWLEDGE',
  'ERROR_PATTERN',
])
export const SearchScopeSchema = z.enum(['MESSAGES', 'SUMMARIES', 'MEMORIES', 'KNOWLEDGE'])
export const SearchStrategySchema = z.enum([
  'HYBRID',
  'LEXICAL',
  'SIMILARITY',
  'RECENCY',
  'IMPORTANCE',
  'WEIGHTED',
  'SIMILARITY_IMPORTANCE',
])
export const ContextSectionSchema = z.enum([
  'USER_OVERRIDES',
  'PROFILE',
  'WORKING_MEMORY',
  'SUMMARIES',
  'RELATIONSHIPS',
  'RELEVANT_MEMORIES',
  'KNOWLEDGE',
  'CONVERSATION',
])
export const MemoryOrderSchema = z.enum(['NEWEST', 'UPDATED', 'IMPORTANCE', 'ACCESSED', 'ACCESS_COUNT'])
export const KnowledgeOrderSchema = z.enum(['CONFIDENCE', 'UPDATED', 'LAST_USED', 'USES'])
export const ImportModeSchema = z.enum(['MERGE', 'REPLACE'])
export const MemoryWriteOutcomeSchema = z.enum(['STORED', 'DUPLICATE', 'SUPERSEDED'])
export const VerificationLayerSchema = z.enum(['JACCARD', 'SEMANTIC'])
export const MemoryTierSchema = z.enum(['WORKING', 'EPISODIC', 'SEMANTIC'])
export const MemoryEntryTypeSchema = z.enum([
  'FACT',
  'PREFERENCE',
  'DECISION',
  'CORRECTION',
  'COMMITMENT',
  'RELATIONSHIP',
  'SKILL',
])
export const ExtractorSchema = z.enum(['OFFLINE', 'LLM', 'OFFLINE_FALLBACK'])
/** Spec 002's summary strategies (core's SUMMARY_STRATEGIES; map-reduce spelled MAP_REDUCE). */
export const SummaryStrategySchema = z.enum(['SIMPLE', 'HIERARCHICAL', 'EXTRACTIVE', 'MAP_REDUCE'])
/** Who wrote a summary or a profile version: the language model, or the offline extractive writer. */
export const FormationWriterSchema = z.enum(['LLM', 'EXTRACTIVE'])
export const SummaryTriggerSchema = z.enum(['DEBOUNCE', 'SWITCH', 'THRESHOLD', 'REQUEST'])
export const ProfileTriggerSchema = z.enum(['CONTRIBUTIONS', 'OVERRIDES', 'MEMORY_DELETED', 'REQUEST'])

// ---------------------------------------------------------------------------------------------
// Field rules shared by several operations. Each message says the limit it checks, and the limit
// travels with the issue (params.limit) so a door can show it.

const limitIssue = (limit: number | string) => ({ params: { limit } })

export const AgentIdSchema = z
  .string()
  .max(L.maxAgentIdChars)
  .regex(AGENT_ID_PATTERN, 'must be a lowercase slug: a-z, 0-9, "_" or "-", starting with a letter or digit')
export const ConversationIdSchema = z
  .string()
  .max(L.maxConversationIdChars)
  .regex(
    CONVERSATION_ID_PATTERN,
    'must start with a letter or digit and use only letters, digits and . _ : @ / - (no spaces)',
  )
export const IdSchema = z.string().min(1).max(64)
export const DateTimeSchema = z.iso.datetime({ offset: true })
const unit = z.number().min(0).max(1)
const pageSize = z.number().int().min(0).max(L.maxPageSize)
const cursor = z.string().max(512)
const speaker = z
  .string()
  .refine((s) => s.trim().length >= 1, { message: 'must not be blank', ...limitIssue(1) })
  .refine((s) => s.trim().length <= L.maxSpeakerChars, {
    message: `must be at most ${L.maxSpeakerChars} characters after trimming`,
    ...limitIssue(L.maxSpeakerChars),
  })

/** How deep a JSON value nests, with an explicit stack so hostile nesting cannot overflow. */
export function jsonDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (node === null || typeof node !== 'object') continue
    const here = depth + 1
    if (here > deepest) deepest = here
    if (deepest > stopAbove) return stopAbove + 1
    for (const child of Array.isArray(node) ? node : Object.values(node as Record<string, unknown>))
      if (child !== null && typeof child === 'object') stack.push([child, here])
  }
  return deepest
}

/** A JSON object within the metadata limits: depth first, so the byte count never walks a bomb. */
export const MetadataSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (jsonDepth(value, L.maxMetadataDepth) > L.maxMetadataDepth) {
    ctx.addIssue({
      code: 'custom',
      message: `must nest at most ${L.maxMetadataDepth} levels`,
      params: { limit: L.maxMetadataDepth },
    })
    return
  }
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length
  if (bytes > L.maxMetadataBytes) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at most ${L.maxMetadataBytes} bytes as JSON (got ${bytes})`,
      params: { limit: L.maxMetadataBytes },
    })
  }
})

/** An admin key names the agent to act for; an agent key may leave it out (its own agent). */
const agent = { agentId: AgentIdSchema.optional() }

// ---------------------------------------------------------------------------------------------
// Inputs. Each is the flat argument object of one client method.

export const MessageInputSchema = z.object({
  role: RoleSchema,
  content: z.string().max(L.maxContentChars),
  speaker: speaker.nullish(),
  metadata: MetadataSchema.nullish(),
  timestamp: DateTimeSchema.nullish(),
  tokenCount: z.number().int().min(0).max(L.maxTokenCount).nullish(),
})

export const AddMessageInputSchema = MessageInputSchema.extend({
  ...agent,
  conversationId: ConversationIdSchema,
})

export const AddMessagesInputSchema = z.object({
  ...agent,
  conversationId: ConversationIdSchema,
  messages: z.array(MessageInputSchema).min(1).max(L.maxBatchMessages),
})

export const SessionInputSchema = z.object({ ...agent, conversationId: ConversationIdSchema })
export const SessionsInputSchema = z.object({
  ...agent,
  first: pageSize.optional(),
  after: cursor.optional(),
  last: pageSize.optional(),
  before: cursor.optional(),
})
export const DeleteSessionInputSchema = SessionInputSchema

export const TokenBudgetInputSchema = z.object({
  maxContextTokens: z.number().int().min(1).max(L.maxTokenCount).optional(),
  systemPromptTokens: z.number().int().min(0).max(L.maxTokenCount).optional(),
  responseReserveTokens: z.number().int().min(0).max(L.maxTokenCount).optional(),
  fullMessageWindow: z.number().int().min(0).max(10_000).optional(),
  compressionTriggerRatio: unit.optional(),
})
export const ContextWindowInputSchema = z.object({
  ...agent,
  conversationId: ConversationIdSchema,
  budget: TokenBudgetInputSchema.optional(),
})

const tags = z
  .array(
    z
      .string()
      .min(1)
      .max(L.maxTagChars)
      .regex(/^[^\s,]+$/, 'must be one word (no spaces or commas)'),
  )
  .max(L.maxTags)
const memoryContent = z
  .string()
  .max(L.maxMemoryChars)
  .refine((s) => s.trim().length > 0, { message: 'must not be empty', ...limitIssue(1) })
const userId = z.string().min(1).max(L.maxUserIdChars)
const sourceId = z.string().min(1).max(L.maxSourceIdChars)

export const CreateMemoryInputSchema = z.object({
  ...agent,
  content: memoryContent,
  category: MemoryCategorySchema,
  tags: tags.optional(),
  importance: unit.optional(),
  confidence: unit.optional(),
  pinned: z.boolean().optional(),
  userId: userId.optional(),
  sourceConversationId: sourceId.optional(),
  sourceMessageId: sourceId.optional(),
  validFrom: DateTimeSchema.optional(),
  validUntil: DateTimeSchema.optional(),
  metadata: MetadataSchema.optional(),
})

/** Memory formation (issue 13): run what is pending now. */
export const SyncMemoryInputSchema = z.object({ ...agent })

/** The router of spec 002: one turn, as ingestion would see it. */
export const ClassifyInputSchema = z.object({
  content: z.string().min(1).max(L.maxContentChars),
  role: RoleSchema.optional(),
})

// Memory formation settings (issue 13 §5). The bounds are core's SummarySettingsSchema and
// ProfileSettingsSchema (the contract carries no runtime dependency on core; the engine's
// operations test checks the two agree), so a door refuses a bad value before the engine does.
const summarySettingRules = {
  strategy: SummaryStrategySchema,
  summaryDebounceSeconds: z.number().int().min(10).max(3_600),
  summaryRetentionDays: z.number().int().min(1).max(365),
  summarizationThresholdTokens: z.number().int().min(1_000).max(10_000_000),
  summaryMaxTokens: z.number().int().min(50).max(10_000),
}
const profileSettingRules = {
  profileRegenerateThreshold: z.number().int().min(1).max(100),
  profileMaxTokens: z.number().int().min(100).max(50_000),
}
const nullishEach = <T extends Record<string, z.ZodType>>(rules: T) =>
  Object.fromEntries(Object.entries(rules).map(([key, rule]) => [key, rule.nullish()])) as {
    [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>>
  }

export const MemoryFormationSettingsInputSchema = z.object({ ...agent })

/** Changes to an agent's formation settings: any part left out keeps its value; the whole is validated first. */
export const UpdateMemoryFormationSettingsInputSchema = z.object({
  ...agent,
  settings: z.object({
    enabled: z.boolean().nullish(),
    summaries: z.object(nullishEach(summarySettingRules)).nullish(),
    profile: z.object(nullishEach(profileSettingRules)).nullish(),
  }),
})

/** An agent's automatic conversation summaries, newest first (the engine's MAX_SUMMARY_LIST at most). */
export const SummariesInputSchema = z.object({
  ...agent,
  conversationId: ConversationIdSchema.optional(),
  limit: z.number().int().min(1).max(100).optional(),
})

/** Summarise a conversation's turns not yet in a summary, now. */
export const SummarizeInputSchema = z.object({
  ...agent,
  conversationId: ConversationIdSchema,
  strategy: SummaryStrategySchema.optional(),
})

/** The generated user profile (issue 13 §4): one per agent and user; no userId is the agent's memories that name no user. */
export const UserProfileInputSchema = z.object({ ...agent, userId: userId.optional() })
export const RegenerateProfileInputSchema = UserProfileInputSchema
export const ProfileVersionsInputSchema = z.object({
  ...agent,
  userId: userId.optional(),
  /** Versions skipped, newest first. */
  offset: z.number().int().min(0).max(1_000_000).optional(),
  /** Versions answered at most (the engine's MAX_PROFILE_VERSIONS_PAGE). */
  limit: z.number().int().min(1).max(100).optional(),
})
const profileVersionNumber = z.number().int().min(1).max(1_000_000_000)
export const ProfileDiffInputSchema = z.object({
  ...agent,
  userId: userId.optional(),
  from: profileVersionNumber,
  to: profileVersionNumber,
})

export const RememberThisInputSchema = z.object({
  ...agent,
  text: memoryContent,
  category: MemoryCategorySchema.optional(),
  importance: unit.optional(),
  pinned: z.boolean().optional(),
  tags: tags.optional(),
  userId: userId.optional(),
  conversationId: ConversationIdSchema.optional(),
  messageId: sourceId.optional(),
})

export const UpdateMemoryInputSchema = z.object({
  ...agent,
  id: IdSchema,
  content: memoryContent.optional(),
  category: MemoryCategorySchema.optional(),
  tags: tags.optional(),
  importance: unit.optional(),
  confidence: unit.optional(),
  pinned: z.boolean().optional(),
  metadata: MetadataSchema.optional(),
  validFrom: DateTimeSchema.optional(),
  validUntil: DateTimeSchema.optional(),
  clearValidUntil: z.boolean().optional(),
})

export const MemoryByIdInputSchema = z.object({ ...agent, id: IdSchema })

export const MemoryFilterInputSchema = z.object({
  categories: z.array(MemoryCategorySchema).max(MemoryCategorySchema.options.length).optional(),
  tags: tags.optional(),
  userId: userId.optional(),
  pinned: z.boolean().optional(),
  minImportance: unit.optional(),
  search: z.string().max(L.maxFilterSearchChars).optional(),
  asOf: DateTimeSchema.optional(),
  createdAfter: DateTimeSchema.optional(),
  createdBefore: DateTimeSchema.optional(),
  includeSuperseded: z.boolean().optional(),
})

export const MemoriesInputSchema = z.object({
  ...agent,
  filter: MemoryFilterInputSchema.optional(),
  orderBy: MemoryOrderSchema.optional(),
  first: pageSize.optional(),
  after: cursor.optional(),
  last: pageSize.optional(),
  before: cursor.optional(),
})

export const SearchWeightsInputSchema = z.object({
  bm25: unit.optional(),
  vector: unit.optional(),
  context: unit.optional(),
  episode: unit.optional(),
  time: unit.optional(),
  speaker: unit.optional(),
  feedback: unit.optional(),
  cooccurrence: unit.optional(),
  recency: unit.optional(),
  similarity: unit.optional(),
  importance: unit.optional(),
})

export const SearchInputSchema = z.object({
  ...agent,
  query: z.string().max(L.maxQueryChars),
  scopes: z.array(SearchScopeSchema).min(1).max(SearchScopeSchema.options.length).optional(),
  strategy: SearchStrategySchema.optional(),
  limit: z.number().int().min(1).max(L.maxSearchLimit).optional(),
  threshold: z.number().finite().optional(),
  conversationId: ConversationIdSchema.optional(),
  decay: z.boolean().optional(),
  mmrLambda: unit.optional(),
  contextTurns: z.number().int().min(1).max(L.maxContextTurns).optional(),
  windowDays: z.number().int().min(0).max(L.maxWindowDays).optional(),
  mentionedTimes: z.boolean().optional(),
  weights: SearchWeightsInputSchema.optional(),
  filters: z
    .object({
      conversationId: ConversationIdSchema.optional(),
      since: DateTimeSchema.optional(),
      until: DateTimeSchema.optional(),
      memories: MemoryFilterInputSchema.optional(),
    })
    .optional(),
})

export const MemoryContextInputSchema = z.object({
  ...agent,
  query: z.string().max(L.maxContentChars).optional(),
  conversationId: ConversationIdSchema.optional(),
  userId: userId.optional(),
  budgetTokens: z.number().int().min(1).max(L.maxContextBudgetTokens).optional(),
  sections: z.array(ContextSectionSchema).max(ContextSectionSchema.options.length).optional(),
})

/** The profile: what memoryContext's PROFILE section holds about the agent's user. */
export const ProfileInputSchema = z.object({
  ...agent,
  userId: userId.optional(),
  budgetTokens: z.number().int().min(1).max(L.maxContextBudgetTokens).optional(),
})

const knowledgeKey = z.string().min(1).max(L.maxKnowledgeKeyChars)
const knowledgeValue = z.string().max(L.maxKnowledgeValueChars)
export const StoreKnowledgeInputSchema = z.object({
  ...agent,
  category: KnowledgeCategorySchema,
  key: knowledgeKey,
  value: knowledgeValue,
  confidence: unit.optional(),
})
export const UpdateKnowledgeInputSchema = z.object({
  ...agent,
  id: IdSchema,
  category: KnowledgeCategorySchema.optional(),
  key: knowledgeKey.optional(),
  value: knowledgeValue.optional(),
  confidence: unit.optional(),
})
export const KnowledgeInputSchema = z.object({
  ...agent,
  filter: z
    .object({
      category: KnowledgeCategorySchema.optional(),
      minConfidence: unit.optional(),
      search: z.string().max(L.maxKnowledgeKeyChars).optional(),
    })
    .optional(),
  orderBy: KnowledgeOrderSchema.optional(),
  first: pageSize.optional(),
  after: cursor.optional(),
  last: pageSize.optional(),
  before: cursor.optional(),
})
export const RelevantKnowledgeInputSchema = z.object({
  ...agent,
  text: z
    .string()
    .max(L.maxContentChars)
    .refine((s) => s.trim().length > 0, { message: 'must not be empty', ...limitIssue(1) }),
  limit: z.number().int().min(1).max(L.maxSearchLimit).optional(),
  minConfidence: unit.optional(),
})
export const KnowledgeByIdInputSchema = z.object({ ...agent, id: IdSchema })

export const AgentOnlyInputSchema = z.object({ ...agent })
export const RunOptimizerInputSchema = z.object({ ...agent, conversationId: ConversationIdSchema.optional() })

export const ExportMemoryInputSchema = z.object({ ...agent, includeSnapshots: z.boolean().optional() })
/** The document exportMemory returned; the server checks its inside (format, version, limits). */
export const ImportMemoryInputSchema = z.object({
  ...agent,
  document: z.record(z.string(), z.unknown()),
  mode: ImportModeSchema.optional(),
})

export const NoInputSchema = z.object({})
export const RestoreDatabaseInputSchema = z.object({
  name: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^/\\]+$/, 'must be a backup name, not a path'),
})

export const CreateApiKeyInputSchema = z.object({
  agentId: AgentIdSchema,
  label: z.string().max(L.maxKeyLabelChars).optional(),
})
export const ApiKeysInputSchema = z.object({ ...agent })
export const RevokeApiKeyInputSchema = z.object({ id: IdSchema })
export const CreateAgentInputSchema = z.object({
  id: AgentIdSchema,
  name: z.string().min(1).max(L.maxKeyLabelChars).optional(),
})

export const OptimizerSnapshotsSubscriptionInputSchema = z.object({ ...agent })

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

export const SummarySettingsSchema = z.object(summarySettingRules)
export const ProfileSettingsSchema = z.object(profileSettingRules)
export const MemoryFormationSettingsSchema = z.object({
  /** Off: nothing is extracted or summarised for the agent. */
  enabled: z.boolean(),
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
