/**
 * The limits a door checks before it sends anything: the API's defaults, restated here because the
 * catalog is bundled into the published SDK and must not pull the engine (and its NLP tables) in.
 * limits.test.ts fails when one of them no longer equals the value the API enforces.
 */
export const CONTRACT_LIMITS = {
  /** A message's content (core DEFAULT_LIMITS.maxContentChars). */
  maxContentChars: 100_000,
  /** Metadata as JSON text, in UTF-8 bytes (maxMetadataBytes). */
  maxMetadataBytes: 16_384,
  /** How deep metadata may nest (maxMetadataDepth). */
  maxMetadataDepth: 32,
  /** Messages in one addMessages batch (maxBatchMessages). */
  maxBatchMessages: 500,
  /** A compression summary (maxSummaryChars). */
  maxSummaryChars: 20_000,
  maxKnowledgeKeyChars: 256,
  maxKnowledgeValueChars: 10_000,
  /** first/last of a page (maxPageSize). */
  maxPageSize: 200,
  /** Hits of one search (maxSearchLimit). */
  maxSearchLimit: 100,
  /** A pre-computed token count of one message (maxTokenCount). */
  maxTokenCount: 10_000_000,
  /** A search query (the search service's MAX_QUERY_CHARS). */
  maxQueryChars: 2_000,
  /** A long-term memory's content (MAX_MEMORY_CHARS): a paragraph or a list, not a document. */
  maxMemoryChars: 10_000,
  maxTags: 20,
  maxTagChars: 64,
  maxUserIdChars: 128,
  maxSourceIdChars: 256,
  maxFilterSearchChars: 2_000,
  /** memoryContext's budgetTokens (core MAX_CONTEXT_BUDGET_TOKENS). */
  maxContextBudgetTokens: 200_000,
  /** memoryContext's buildContext window (core MIN_/MAX_CONTEXT_WINDOW_TOKENS) and tools (MAX_BUILD_TOOL_COUNT). */
  minContextWindowTokens: 1_000,
  maxContextWindowTokens: 2_000_000,
  maxBuildToolCount: 1_000,
  /** Dialogue context of a search, turns each side. */
  maxContextTurns: 5,
  /** windowDays of a search: a hundred years. */
  maxWindowDays: 36_500,
  maxConversationIdChars: 128,
  maxSpeakerChars: 128,
  maxAgentIdChars: 64,
  /** A key's label (the agent service's MAX_LABEL_CHARS). */
  maxKeyLabelChars: 200,
  /** How many optimizer snapshots are kept, and so may be asked for. */
  maxSnapshotHistory: 500,
  // The knowledge graph (core's DEFAULT_GRAPH_LIMITS).
  maxEntityNameChars: 200,
  maxAliasesPerEntity: 50,
  maxEntitySummaryChars: 2_000,
  maxRelationChars: 100,
  maxGraphDepth: 4,
  maxGraphResultSize: 500,
  maxGraphPaths: 20,
  maxRetiredReasonChars: 500,
  // Trajectory memory (core's DEFAULT_TRAJECTORY_LIMITS).
  maxRunIdChars: 128,
  maxGoalChars: 2_000,
  maxDomainChars: 253,
  maxUrlChars: 2_048,
  maxOutcomeChars: 10_000,
  maxStepsPerTrajectory: 500,
  maxActionChars: 64,
  maxSelectorChars: 1_000,
  maxStepValueChars: 10_000,
  maxElementChars: 500,
  maxFactKeyChars: 200,
  maxFactValueChars: 2_000,
  maxFactsPerCall: 100,
  maxSelectorsPerCall: 200,
  maxHintChars: 20_000,
  maxArtifactPaths: 100,
  maxTurns: 1_000_000,
  maxModelChars: 200,
  maxScopeChars: 140,
  maxRunListLimit: 200,
  maxLineageRuns: 500,
  maxImportFiles: 20_000,
  maxImportBytes: 50_000_000,
  /** An agent's retention in days (core's RETENTION_DAYS_MIN/MAX). */
  minRetentionDays: 1,
  maxRetentionDays: 36_500,
  /** Maintenance runs of one page. */
  maxMaintenanceRunsPage: 100,
  // Shared memory pools (core's DEFAULT_POOL_LIMITS).
  maxPoolNameChars: 100,
  maxPoolDescriptionChars: 2_000,
  maxPoolMembersPerCall: 100,
  maxPoolQueryLimit: 50,
  /** The longest window serverMetrics reads (core MAX_METRICS_WINDOW_SECONDS: a day). */
  maxMetricsWindowSeconds: 86_400,
  // The working context (core's DEFAULT_WORKING_CONTEXT_RULES and tool-call constants).
  maxWorkingMessagesPerAppend: 100,
  maxScratchpadChars: 50_000,
  maxToolResultChars: 100_000,
  maxToolCallIdChars: 128,
  maxToolNameChars: 128,
  maxRecentMemoryLimit: 100,
} as const

export type ContractLimits = typeof CONTRACT_LIMITS

// Same patterns as core's limits.ts: ids from agents' own systems, lowercase agent slugs.
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/
/** Run and session ids, memory scopes (core's RUN_ID_PATTERN / RUN_SCOPE_PATTERN). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/
export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/
