import type { z } from 'zod'
import { maintenanceOperations } from './catalog-maintenance.ts'
import { metricsOperations } from './catalog-metrics.ts'
import { poolOperations } from './catalog-pools.ts'
import { runOperations } from './catalog-runs.ts'
import { workingContextOperations } from './catalog-working-context.ts'
import { operation } from './operation.ts'
import * as s from './schemas.ts'

export type { GraphqlBinding, OperationKind, OperationSpec } from './operation.ts'

/**
 * Every operation of an agent's work, once. The GraphQL door is checked against it
 * (catalog.test.ts), the SDK's methods and types derive from it, the MCP tools take their input
 * schemas from it and the CLI its commands.
 */
export const catalog = {
  // Conversations ------------------------------------------------------------------------------
  addMessage: operation({
    kind: 'mutation',
    description:
      'Appends one message to a conversation (created on first use) and keeps it as a short-term memory entry.',
    input: s.AddMessageInputSchema,
    output: s.MessageSchema,
    graphql: { field: 'addMessage', inputArg: 'input' },
  }),
  addMessages: operation({
    kind: 'mutation',
    description: 'Appends a batch of messages to a conversation in one transaction: all of them or none.',
    input: s.AddMessagesInputSchema,
    output: s.AddMessagesPayloadSchema,
    graphql: { field: 'addMessages', inputArg: 'input' },
  }),
  session: operation({
    kind: 'query',
    description: 'One conversation by its id, or null when the agent has none by that id.',
    input: s.SessionInputSchema,
    output: s.SessionSchema.nullable(),
    graphql: { field: 'session' },
  }),
  sessions: operation({
    kind: 'query',
    description: 'Conversations, most recently active first, a page at a time.',
    input: s.SessionsInputSchema,
    output: s.SessionPageSchema,
    graphql: { field: 'sessions', connection: 'sessions' },
  }),
  deleteSession: operation({
    kind: 'mutation',
    description: 'Deletes a conversation with all its messages and memory entries.',
    input: s.DeleteSessionInputSchema,
    output: s.DeleteSessionPayloadSchema,
    destructive: true,
    graphql: { field: 'deleteSession' },
  }),
  contextWindow: operation({
    kind: 'query',
    description:
      'What to send to the LLM for a conversation: recent messages in full, older ones compressed, the oldest dropped, within the token budget.',
    input: s.ContextWindowInputSchema,
    output: s.ContextWindowSchema,
    graphql: { field: 'contextWindow' },
  }),

  // Memories -----------------------------------------------------------------------------------
  createMemory: operation({
    kind: 'mutation',
    description:
      'Stores a long-term memory through verification: it may be stored, found to duplicate one, or supersede an older one.',
    input: s.CreateMemoryInputSchema,
    output: s.MemoryWriteSchema,
    graphql: { field: 'createMemory', inputArg: 'input' },
  }),
  rememberThis: operation({
    kind: 'mutation',
    description:
      'Remembers what the user asked to be remembered ("remember that I prefer tabs"): the statement is stored, its category inferred unless given.',
    input: s.RememberThisInputSchema,
    output: s.MemoryWriteSchema,
    graphql: { field: 'rememberThis', inputArg: 'input' },
  }),
  syncMemory: operation({
    kind: 'mutation',
    description:
      'Forms now what is pending (memory formation otherwise runs on its own a few seconds after a conversation goes quiet): memories from every turn not yet extracted, summaries of conversations with turns not yet summarised, and the profiles those memories make due. Returns what was formed.',
    input: s.SyncMemoryInputSchema,
    output: s.SyncMemoryPayloadSchema,
    graphql: { field: 'syncMemory' },
  }),
  classify: operation({
    kind: 'query',
    description:
      'Routes one turn as ingestion would: its tier (working, episodic, semantic), category, memory type and initial importance, with the reasons. Stores nothing.',
    input: s.ClassifyInputSchema,
    output: s.ClassificationSchema,
    graphql: { field: 'classify', inputArg: 'input' },
  }),
  memoryFormationSettings: operation({
    kind: 'query',
    description:
      'The agent’s memory-formation settings: the master switch, the extractor (offline or the language model) and core model, how conversations are summarised (strategy, debounce, retention, token threshold, size) and when the user profile is rebuilt and how long it may be.',
    input: s.MemoryFormationSettingsInputSchema,
    output: s.MemoryFormationSettingsSchema,
    graphql: { field: 'memoryFormationSettings' },
  }),
  updateMemoryFormationSettings: operation({
    kind: 'mutation',
    description:
      'Changes some of the agent’s memory-formation settings; the rest keep their values. The whole is validated first: one value out of its limits changes nothing. Turning formation off drops what was pending.',
    input: s.UpdateMemoryFormationSettingsInputSchema,
    output: s.MemoryFormationSettingsSchema,
    graphql: { field: 'updateMemoryFormationSettings' },
  }),
  summaries: operation({
    kind: 'query',
    description:
      'The automatic summaries of the agent’s conversations (of one when named), newest first: each with the range of messages it covers, its strategy and who wrote it.',
    input: s.SummariesInputSchema,
    output: s.SummarySchema.array(),
    graphql: { field: 'summaries' },
  }),
  summary: operation({
    kind: 'query',
    description:
      'One automatic summary by its id, with the range of messages it covers; NOT_FOUND when the agent has none by that id.',
    input: s.SummaryInputSchema,
    output: s.SummarySchema,
    graphql: { field: 'summary' },
  }),
  formationActivity: operation({
    kind: 'query',
    description:
      'Memory formation’s processing statistics for the agent (counted by this server since it started): calls, successes, failures with the latest reason and average duration per kind of work (extraction, summary, profile), its queued jobs, the extractor and the language model’s circuit state.',
    input: s.FormationActivityInputSchema,
    output: s.FormationActivitySchema,
    graphql: { field: 'formationActivity' },
  }),
  summarize: operation({
    kind: 'mutation',
    description:
      'Summarises a conversation’s turns not yet in a summary now, without waiting for it to go quiet; the strategy is the call’s, else the agent’s setting. Answers a null summary when there is nothing new to summarise.',
    input: s.SummarizeInputSchema,
    output: s.SummarizePayloadSchema,
    graphql: { field: 'summarize' },
  }),
  userProfile: operation({
    kind: 'query',
    description:
      'The generated profile of the agent’s user (one per user; without userId, of the memories that name no user): its current version, null until one was generated. Rebuilt on its own as memories about the user accumulate; pinned memories always show first.',
    input: s.UserProfileInputSchema,
    output: s.UserProfileSchema,
    graphql: { field: 'userProfile' },
  }),
  profileVersions: operation({
    kind: 'query',
    description:
      'Every version of a user’s generated profile, newest first, a page at a time (offset, limit 1-100).',
    input: s.ProfileVersionsInputSchema,
    output: s.ProfileVersionPageSchema,
    graphql: { field: 'profileVersions' },
  }),
  profileDiff: operation({
    kind: 'query',
    description: 'What changed between two versions of a user’s profile: lines added, lines removed.',
    input: s.ProfileDiffInputSchema,
    output: s.ProfileDiffSchema,
    graphql: { field: 'profileDiff' },
  }),
  regenerateProfile: operation({
    kind: 'mutation',
    description:
      'Builds a new version of the user’s profile now from the current memories, whatever the counts say (every earlier version is kept).',
    input: s.RegenerateProfileInputSchema,
    output: s.ProfileVersionSchema,
    graphql: { field: 'regenerateProfile' },
  }),
  updateMemory: operation({
    kind: 'mutation',
    description: 'Changes some fields of a memory; the rest keep their values.',
    input: s.UpdateMemoryInputSchema,
    output: s.MemoryItemSchema,
    graphql: { field: 'updateMemory', inputArg: 'input' },
  }),
  deleteMemory: operation({
    kind: 'mutation',
    description: 'Deletes a memory for good and returns it as it was.',
    input: s.MemoryByIdInputSchema,
    output: s.MemoryItemSchema,
    destructive: true,
    graphql: { field: 'deleteMemory' },
  }),
  memories: operation({
    kind: 'query',
    description: 'Memories, by default those valid now, newest first, a page at a time.',
    input: s.MemoriesInputSchema,
    output: s.MemoryPageSchema,
    graphql: { field: 'memories', connection: 'memories' },
  }),
  memory: operation({
    kind: 'query',
    description: 'One memory by id.',
    input: s.MemoryByIdInputSchema,
    output: s.MemoryItemSchema,
    graphql: { field: 'memory' },
  }),
  search: operation({
    kind: 'query',
    description:
      'Ranked search over the agent’s messages, summaries, memories, knowledge and knowledge graph (scopes), each hit with its score broken down.',
    input: s.SearchInputSchema,
    output: s.SearchResultSchema,
    graphql: { field: 'search', inputArg: 'input' },
  }),
  memoryContext: operation({
    kind: 'query',
    description:
      'The memory block to put in a prompt: overrides, profile, working memory, summaries, relevant memories, knowledge and recent turns, each section within its token budget.',
    input: s.MemoryContextInputSchema,
    output: s.MemoryContextSchema,
    graphql: { field: 'memoryContext', inputArg: 'input' },
  }),
  profile: operation({
    kind: 'query',
    description: 'What the agent knows about its user: the profile section of the memory context.',
    input: s.ProfileInputSchema,
    output: s.MemoryContextSchema,
    graphql: { field: 'memoryContext', inputArg: 'input', fixed: { sections: ['PROFILE'] } },
  }),

  // Knowledge ----------------------------------------------------------------------------------
  storeKnowledge: operation({
    kind: 'mutation',
    description:
      'Stores a cross-session fact (category, key, value); storing the same key again updates it and raises its confidence.',
    input: s.StoreKnowledgeInputSchema,
    output: s.KnowledgeSchema,
    graphql: { field: 'storeKnowledge', inputArg: 'input' },
  }),
  updateKnowledge: operation({
    kind: 'mutation',
    description: 'Changes some fields of a fact.',
    input: s.UpdateKnowledgeInputSchema,
    output: s.KnowledgeSchema,
    graphql: { field: 'updateKnowledge', inputArg: 'input' },
  }),
  deleteKnowledge: operation({
    kind: 'mutation',
    description: 'Deletes a fact for good.',
    input: s.KnowledgeByIdInputSchema,
    output: s.KnowledgeSchema,
    destructive: true,
    graphql: { field: 'deleteKnowledge' },
  }),
  knowledge: operation({
    kind: 'query',
    description: 'Cross-session knowledge, highest confidence first, a page at a time.',
    input: s.KnowledgeInputSchema,
    output: s.KnowledgePageSchema,
    graphql: { field: 'knowledge', connection: 'knowledge' },
  }),
  relevantKnowledge: operation({
    kind: 'query',
    description: 'The facts that bear on a domain or a task, best first.',
    input: s.RelevantKnowledgeInputSchema,
    output: s.RelevantKnowledgeSchema,
    graphql: { field: 'relevantKnowledge' },
  }),
  recordKnowledgeUse: operation({
    kind: 'mutation',
    description: 'Records that a fact was used: its confidence grows and it stays clear of decay.',
    input: s.KnowledgeByIdInputSchema,
    output: s.KnowledgeSchema,
    graphql: { field: 'recordKnowledgeUse' },
  }),

  // Knowledge graph (issue 15) -----------------------------------------------------------------
  graphEntities: operation({
    kind: 'query',
    description:
      'Entities of the agent’s knowledge graph (people, companies, places, projects, tools, concepts, events), by name (fuzzy: exact names and aliases first, then shared words and close spellings) and type; those Engram had learnt by knownAt (default now). No asOf: an entity has no validity of its own, ask its relationships.',
    input: s.GraphEntitiesInputSchema,
    output: s.GraphEntityPageSchema,
    graphql: { field: 'graphEntities' },
  }),
  graphEntity: operation({
    kind: 'query',
    description:
      'One entity of the knowledge graph by id, as Engram knew it at knownAt (default now): NOT_FOUND when it was learnt later.',
    input: s.GraphEntityReadInputSchema,
    output: s.GraphEntitySchema,
    graphql: { field: 'graphEntity' },
  }),
  graphRelationships: operation({
    kind: 'query',
    description:
      'Relationships of the knowledge graph by relation type ("works at") and/or entity, highest confidence first; those holding at asOf (valid time) as Engram knew them at knownAt, both default now.',
    input: s.GraphRelationshipsInputSchema,
    output: s.GraphRelationshipPageSchema,
    graphql: { field: 'graphRelationships' },
  }),
  graphRelationship: operation({
    kind: 'query',
    description:
      'One relationship by id, with its validity and the memories and messages it was learnt from.',
    input: s.GraphRelationshipByIdInputSchema,
    output: s.GraphRelationshipSchema,
    graphql: { field: 'graphRelationship' },
  }),
  graphNeighbourhood: operation({
    kind: 'query',
    description:
      'The entities and relationships around one entity (by id or fuzzy name) up to a depth (default 2, at most 4), as of a time; says when a dense hub cut the walk.',
    input: s.GraphNeighbourhoodInputSchema,
    output: s.GraphNeighbourhoodSchema,
    graphql: { field: 'graphNeighbourhood' },
  }),
  graphPaths: operation({
    kind: 'query',
    description: 'The shortest chains of relationships linking two entities (at most 4 hops), as of a time.',
    input: s.GraphPathsInputSchema,
    output: s.GraphPathsSchema,
    graphql: { field: 'graphPaths' },
  }),
  createGraphEntity: operation({
    kind: 'mutation',
    description: 'Adds an entity to an agent’s graph by hand (kept until an operator removes it).',
    input: s.CreateGraphEntityInputSchema,
    output: s.GraphEntitySchema,
    admin: true,
    graphql: { field: 'createGraphEntity', inputArg: 'input' },
  }),
  updateGraphEntity: operation({
    kind: 'mutation',
    description: 'Corrects an entity: its type, canonical name, aliases or summary.',
    input: s.UpdateGraphEntityInputSchema,
    output: s.GraphEntitySchema,
    admin: true,
    graphql: { field: 'updateGraphEntity', inputArg: 'input' },
  }),
  mergeGraphEntities: operation({
    kind: 'mutation',
    description:
      'Makes two entities one: the first’s relationships, names and sources move onto the second, and the first is deleted.',
    input: s.MergeGraphEntitiesInputSchema,
    output: s.GraphEntitySchema,
    admin: true,
    destructive: true,
    graphql: { field: 'mergeGraphEntities' },
  }),
  deleteGraphEntity: operation({
    kind: 'mutation',
    description: 'Deletes an entity and every relationship touching it.',
    input: s.GraphEntityByIdInputSchema,
    output: s.GraphDeletedSchema,
    admin: true,
    destructive: true,
    graphql: { field: 'deleteGraphEntity' },
  }),
  createGraphRelationship: operation({
    kind: 'mutation',
    description:
      'Adds a relationship between two entities by hand; a current one of the same exclusive kind (works at, lives in) has its validity ended, not overwritten.',
    input: s.CreateGraphRelationshipInputSchema,
    output: s.GraphRelationshipSchema,
    admin: true,
    graphql: { field: 'createGraphRelationship', inputArg: 'input' },
  }),
  updateGraphRelationship: operation({
    kind: 'mutation',
    description: 'Corrects a relationship: its ends, relation, confidence or validity.',
    input: s.UpdateGraphRelationshipInputSchema,
    output: s.GraphRelationshipSchema,
    admin: true,
    graphql: { field: 'updateGraphRelationship', inputArg: 'input' },
  }),
  retireGraphRelationship: operation({
    kind: 'mutation',
    description:
      'Marks a relationship as wrong: Engram stops believing it from now on, and reads made with an earlier knownAt still see it.',
    input: s.RetireGraphRelationshipInputSchema,
    output: s.GraphRelationshipSchema,
    admin: true,
    graphql: { field: 'retireGraphRelationship', inputArg: 'input' },
  }),
  deleteGraphRelationship: operation({
    kind: 'mutation',
    description: 'Deletes a relationship for good, with its history.',
    input: s.GraphRelationshipByIdInputSchema,
    output: s.GraphDeletedSchema,
    admin: true,
    destructive: true,
    graphql: { field: 'deleteGraphRelationship' },
  }),

  // Optimizer ----------------------------------------------------------------------------------
  optimizerStatus: operation({
    kind: 'query',
    description: 'The optimizer’s efficiency report: runs, tokens saved, the parameters it has learned.',
    input: s.AgentOnlyInputSchema,
    output: s.OptimizerStatusSchema,
    graphql: { field: 'optimizerStatus' },
  }),
  runOptimizer: operation({
    kind: 'mutation',
    description: 'Runs the optimizer now for the agent (or one conversation) and returns what the run did.',
    input: s.RunOptimizerInputSchema,
    output: s.OptimizationSnapshotSchema,
    graphql: { field: 'runOptimizer' },
  }),

  // Export, import, backup ---------------------------------------------------------------------
  exportMemory: operation({
    kind: 'query',
    description: 'The agent’s memories, knowledge, conversations and vectors as one versioned JSON document.',
    input: s.ExportMemoryInputSchema,
    output: s.MemoryExportSchema,
    graphql: { field: 'exportMemory' },
  }),
  importMemory: operation({
    kind: 'mutation',
    description:
      'Imports an exported document in one transaction. REPLACE clears the agent’s memory first; MERGE adds to it.',
    input: s.ImportMemoryInputSchema,
    output: s.ImportReportSchema,
    destructive: true,
    graphql: { field: 'importMemory' },
  }),
  backupDatabase: operation({
    kind: 'mutation',
    description: 'A consistent copy of the whole database, taken while it serves.',
    input: s.NoInputSchema,
    output: s.BackupSchema,
    admin: true,
    graphql: { field: 'backupDatabase' },
  }),
  backups: operation({
    kind: 'query',
    description: 'The backups in the server’s backup folder, newest first.',
    input: s.NoInputSchema,
    output: s.BackupSchema.array(),
    admin: true,
    graphql: { field: 'backups' },
  }),
  restoreDatabase: operation({
    kind: 'mutation',
    description: 'Replaces all data with a backup, in one transaction; API keys are kept.',
    input: s.RestoreDatabaseInputSchema,
    output: s.RestorePayloadSchema,
    admin: true,
    destructive: true,
    graphql: { field: 'restoreDatabase' },
  }),

  // Keys and agents ----------------------------------------------------------------------------
  createApiKey: operation({
    kind: 'mutation',
    description: 'A new key for an agent (the agent is created if new). The secret is returned this once.',
    input: s.CreateApiKeyInputSchema,
    output: s.CreatedApiKeySchema,
    admin: true,
    graphql: { field: 'createApiKey' },
  }),
  apiKeys: operation({
    kind: 'query',
    description: 'Keys as stored (prefix and label, never the secret), of one agent or all.',
    input: s.ApiKeysInputSchema,
    output: s.ApiKeySchema.array(),
    admin: true,
    graphql: { field: 'apiKeys' },
  }),
  revokeApiKey: operation({
    kind: 'mutation',
    description: 'The key stops working at once.',
    input: s.RevokeApiKeyInputSchema,
    output: s.ApiKeySchema,
    admin: true,
    destructive: true,
    graphql: { field: 'revokeApiKey' },
  }),
  agents: operation({
    kind: 'query',
    description: 'Agents: every agent for an admin key, its own for an agent key.',
    input: s.NoInputSchema,
    output: s.AgentSchema.array(),
    graphql: { field: 'agents' },
  }),
  createAgent: operation({
    kind: 'mutation',
    description: 'Creates (or renames) an agent.',
    input: s.CreateAgentInputSchema,
    output: s.AgentSchema,
    admin: true,
    graphql: { field: 'createAgent' },
  }),

  // Trajectory memory (issue 16, spec 004): catalog-runs.ts
  ...runOperations,
  ...maintenanceOperations,
  ...poolOperations,
  // The server's metrics (issue 17): catalog-metrics.ts
  ...metricsOperations,
  // The working context and recency retrieval (issue 17, spec 002's L1): catalog-working-context.ts
  ...workingContextOperations,

  // Subscriptions ------------------------------------------------------------------------------
  watchOptimizerSnapshots: operation({
    kind: 'subscription',
    description: 'Each optimizer snapshot as it is recorded (an agent key receives its own).',
    input: s.OptimizerSnapshotsSubscriptionInputSchema,
    output: s.OptimizationSnapshotSchema,
    graphql: { field: 'optimizerSnapshots' },
  }),
  formationActivityEvents: operation({
    kind: 'subscription',
    description:
      'Each unit of memory formation work as it ends (extraction, summary, profile; success or failure with its reason). An agent key receives its own agent’s; an admin key one agent’s, or every agent’s when none is named.',
    input: s.FormationActivityEventsInputSchema,
    output: s.FormationActivityEventSchema,
    graphql: { field: 'formationActivityEvents' },
  }),
  watchEmbeddingProgress: operation({
    kind: 'subscription',
    description: 'Re-embedding progress as it happens (admin keys).',
    input: s.NoInputSchema,
    output: s.EmbeddingProgressSchema,
    admin: true,
    graphql: { field: 'embeddingProgress' },
  }),
  runEvents: operation({
    kind: 'subscription',
    description:
      'Each start, progress report and end of the agent’s runs as it happens (one run’s, a domain’s, or all).',
    input: s.RunEventsInputSchema,
    output: s.RunEventSchema,
    graphql: { field: 'runEvents' },
  }),
} as const

export type Catalog = typeof catalog
export type OperationName = keyof Catalog
export const OPERATION_NAMES = Object.keys(catalog) as OperationName[]

export type InputOf<N extends OperationName> = z.input<Catalog[N]['input']>
export type ParsedInputOf<N extends OperationName> = z.output<Catalog[N]['input']>
export type OutputOf<N extends OperationName> = z.output<Catalog[N]['output']>
