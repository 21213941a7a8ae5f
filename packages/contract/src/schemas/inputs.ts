import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'
import { BuildContextInputSchema } from './context-builder.ts'
import {
  ContextSectionSchema,
  ExtractorChoiceSchema,
  ImportModeSchema,
  KnowledgeCategorySchema,
  KnowledgeOrderSchema,
  MemoryCategorySchema,
  MemoryOrderSchema,
  RoleSchema,
  SearchScopeSchema,
  SearchStrategySchema,
  SummaryStrategySchema,
} from './enums.ts'
import {
  AgentIdSchema,
  agent,
  ConversationIdSchema,
  cursor,
  DateTimeSchema,
  IdSchema,
  limitIssue,
  MetadataSchema,
  memoryContent,
  modelName,
  nullishEach,
  pageSize,
  profileSettingRules,
  sourceId,
  speaker,
  summarySettingRules,
  tags,
  unit,
  userId,
} from './fields.ts'

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

export const MemoryFormationSettingsInputSchema = z.object({ ...agent })

/** Changes to an agent's formation settings: any part left out keeps its value; the whole is validated first. */
export const UpdateMemoryFormationSettingsInputSchema = z.object({
  ...agent,
  settings: z.object({
    enabled: z.boolean().nullish(),
    /** A null model goes back to the server's; a model left out keeps the agent's. */
    extraction: z
      .object({ extractor: ExtractorChoiceSchema.nullish(), model: modelName.nullish() })
      .nullish(),
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

/** One summary by its id (another agent's id is not found). */
export const SummaryInputSchema = z.object({ ...agent, id: IdSchema })

/** Memory formation's processing statistics of one agent. */
export const FormationActivityInputSchema = z.object({ ...agent })
/** Formation work as it ends: an agent key its own agent's; an admin key one agent's, or every agent's. */
export const FormationActivityEventsInputSchema = z.object({ ...agent })

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
  /** Graph expansion: share of a graph-reached turn's or memory's graph score it gains (0: off). */
  graph: unit.optional(),
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
  /** Spec 002's context builder (issue 17): the answer's `built` is a whole prompt for a model window. */
  buildContext: BuildContextInputSchema.optional(),
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
