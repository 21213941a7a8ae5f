import {
  ContextBuilderRulesSchema,
  createHashingEmbedder,
  DEFAULT_LIMITS,
  DEFAULT_OPTIMIZER_CONFIG,
  isPoolStorageAgent,
  LexicalPlanConfigSchema,
  MaintenanceRulesSchema,
  PersistentSessionManager,
  PoolLimitsSchema,
  parseWith,
  summarizeMessages,
  TrajectoryLimitsSchema,
  TrajectoryRulesSchema,
  WorkingContextRulesSchema,
} from '@engram/core'
import { AgentLifecycle } from './agents/agent-lifecycle.ts'
import { AgentService } from './agents/agent-service.ts'
import { AgentWrites } from './agents/agent-writes.ts'
import { announcingSettings } from './agents/announcing-settings.ts'
import { ContextBuilder } from './context/context-builder.ts'
import { ContextService } from './context/context-service.ts'
import { ConversationReads } from './conversations/conversation-reads.ts'
import { MessageTokenCounts } from './conversations/message-token-counts.ts'
import { wireEmbedJobs } from './embeddings/embed-jobs.ts'
import { EmbeddingService } from './embeddings/embedding-service.ts'
import type { EngineDeps, SyncResult } from './engine-deps.ts'
import { EpisodicLayer } from './episodic/episodic-layer.ts'
import { InProcessEventBus } from './events/in-process-event-bus.ts'
import { ReplicaCaches } from './events/replica-caches.ts'
import { type FormationActivity, FormationActivityTracker } from './formation/formation-activity.ts'
import { registerExtractJobs } from './formation/formation-jobs.ts'
import { FormationConfigSchema, FormationService } from './formation/formation-service.ts'
import { FormationSettingsService } from './formation/formation-settings.ts'
import { FormationStats } from './formation/formation-stats.ts'
import { forgetDeletedTurns } from './graph/forget-turns.ts'
import { GraphFormation, registerGraphJobs } from './graph/graph-formation.ts'
import { GraphService } from './graph/graph-service.ts'
import { JobWorker } from './jobs/job-worker.ts'
import { KnowledgeService } from './knowledge/knowledge-service.ts'
import { InProcessLease } from './leases/in-process-lease.ts'
import { MaintenanceService } from './maintenance/maintenance-service.ts'
import { MemoryService } from './memory/memory-service.ts'
import { MemoryItemService } from './memory-items/memory-item-service.ts'
import { OptimizerService } from './optimizer/optimizer-service.ts'
import { ParameterStore } from './parameters/parameter-store.ts'
import { PoolService, readablePoolsOf } from './pools/pool-service.ts'
import { NO_SERVER_METRICS } from './ports/server-metrics.ts'
import type { Storage } from './ports/storage.ts'
import { NO_TELEMETRY } from './ports/telemetry.ts'
import { PrivacyService } from './privacy/privacy-service.ts'
import { ProfileService, registerProfileJobs } from './profile/profile-service.ts'
import { withScheduler } from './scheduling/scheduler.ts'
import { AgentLexicalIndexes, LexicalIndexCacheConfigSchema } from './search/lexical-indexes.ts'
import { SearchService } from './search/search-service.ts'
import { followTurns } from './summaries/follow-turns.ts'
import { registerSummaryJobs, SummaryService } from './summaries/summary-service.ts'
import { AgentMemoryTransfer } from './trajectories/agent-memory-transfer.ts'
import { RunContextService } from './trajectories/run-context.ts'
import type { TextGuard } from './trajectories/run-input.ts'
import { RunMemory } from './trajectories/run-memory.ts'
import { RunRegistry } from './trajectories/run-registry.ts'
import { TransferService } from './transfer/transfer-service.ts'
import { WorkingContextService } from './working-context/working-context-service.ts'

// The engine's inputs are their own file (engine-deps.ts); callers import them from here as before.
export type { EngineDeps, ReplicaOptions, SyncResult } from './engine-deps.ts'

export type Engine<S extends Storage = Storage> = ReturnType<typeof createEngine<S>>

/**
 * The engine's facade: every use case of memory wired to one storage adapter. Doors (the GraphQL
 * API, the embedded SDK, MCP and the CLI through them) call these and nothing below them.
 */
export function createEngine<S extends Storage>(deps: EngineDeps<S>) {
  const { storage, tokenCounter } = deps
  const clock = withScheduler(deps.clock, deps.scheduler)
  const limits = deps.limits ?? DEFAULT_LIMITS
  const log = deps.log ?? console
  const events = deps.events ?? new InProcessEventBus()
  const telemetry = deps.telemetry ?? NO_TELEMETRY
  const parameters = new ParameterStore(storage.repositories.parameters)
  const memory = new MemoryService(
    storage.repositories.memoryEntries,
    clock,
    tokenCounter,
    limits,
    parameters,
  )
  // Spec 002's L2: the conversation reads that want the newest messages ask it first, and every
  // write to a conversation's messages keeps it exact.
  const episodic = deps.replicas?.episodic
    ? new EpisodicLayer(deps.replicas.episodic, storage.history, storage.sessions)
    : null
  // Stored turns schedule their conversation's summary; the summary service is bound below.
  let summaries: SummaryService | null = null
  // A deleted conversation's turns leave the knowledge graph with it; graph formation is bound below.
  let graphFormation: GraphFormation | null = null
  const sessions = new PersistentSessionManager({
    repository: followTurns(
      forgetDeletedTurns(
        episodic ? episodic.writesThrough(storage.sessions) : storage.sessions,
        storage.history,
        () => graphFormation,
      ),
      () => (deps.automaticSummaries === false ? null : summaries),
      log,
      (stored) => formation.turnsCommitted(stored),
    ),
    clock,
    tokenCounter,
    summarize: (messages) => summarizeMessages(messages),
    limits,
  })
  // One durable queue for all background work; each kind registers its handler on the worker.
  const jobs = new JobWorker<S['jobs']>(storage.jobs, clock, log, deps.jobPollIntervalMs, deps.jobGatherMs)
  const messageTokens = new MessageTokenCounts(tokenCounter, deps.messageTokenCounts)
  const conversations = new ConversationReads(storage.history, sessions, parameters, messageTokens, episodic)
  // Every write an agent makes passes its sensitive-data policy.
  const privacy = new PrivacyService(storage.privacyPolicies)
  const agents = new AgentService(storage.repositories.agents, storage.apiKeys)
  // Caches of derived data are keyed by each agent's write version.
  const writes = new AgentWrites()
  // Every settings write is announced as such: other replicas drop the settings they keep only
  // then, not after every turn another replica stores (each turn would read them again).
  const settingsStore = announcingSettings(storage.memoryItems, writes)
  const embeddings = new EmbeddingService({
    vectors: storage.vectors,
    repository: storage.embeddings,
    embedder: deps.embedder ?? createHashingEmbedder(),
    clock,
    events,
    log,
    writes,
    telemetry,
  })
  wireEmbedJobs(embeddings, jobs, storage.jobs, storage.embeddings)
  const memoryItems = new MemoryItemService(settingsStore, clock, tokenCounter, limits, privacy, embeddings)
  const llm = deps.llm ?? null
  // Processing statistics of formation (calls, failures, durations), counted in this process.
  const formationStats = new FormationStats()
  const activity = new FormationActivityTracker({
    stats: formationStats,
    clock,
    events,
    queue: storage.jobs,
    log,
    llm,
  })
  // Automatic memory formation: stored turns queue their conversation's extraction in the same
  // transaction, and the extract jobs store what they find through the memory-item pipeline.
  const formation = new FormationService({
    repository: storage.formation,
    queue: storage.jobs,
    memoryItems,
    settingsStore,
    clock,
    log,
    config: parseWith(FormationConfigSchema, deps.formation ?? {}, 'formation'),
    llm,
    ...(deps.offlineExtractor ? { offline: deps.offlineExtractor } : {}),
    activity,
  })
  registerExtractJobs(jobs, formation)
  storage.formation.addMessageJobs((agentId, messageIds, session) =>
    formation.jobsFor(agentId, messageIds, session),
  )
  summaries = new SummaryService({
    repository: storage.summaries,
    history: storage.history,
    episodic,
    sessions,
    queue: storage.jobs,
    settingsStore,
    clock,
    tokenCounter,
    log,
    llm,
    models: formation,
    writes,
    activity,
    ...(deps.offlineSummarizer ? { offline: deps.offlineSummarizer } : {}),
    vectors: embeddings,
    scheduled: formation.scheduled,
  })
  registerSummaryJobs(jobs, summaries)
  // A turn's summary cursor is written in its messages' transaction where the store can (one commit per turn).
  if (deps.automaticSummaries !== false) storage.formation.addTurnRecorder?.(summaries.recordInAppend)
  const profiles = new ProfileService({
    repository: storage.profiles,
    items: settingsStore,
    queue: storage.jobs,
    clock,
    tokenCounter,
    log,
    llm,
    models: formation,
    writes,
    automatic: deps.automaticProfile ?? true,
    activity,
  })
  registerProfileJobs(jobs, profiles)
  // A pool's storage agent (issue 17) holds shared memories, not a user's: no profile, no graph.
  memoryItems.onChange((scope, changes) =>
    isPoolStorageAgent(scope) ? Promise.resolve() : profiles.memoriesChanged(scope, changes),
  )
  // The knowledge graph (issue 15): every memory written queues its graph job; a deleted one's
  // evidence goes in the deletion's path (MemoryItemService awaits its listeners).
  graphFormation = new GraphFormation({
    graph: storage.graph,
    memories: {
      find: (agentId, id) => memoryItems.find(agentId, id),
      page: async (agentId, offset, limit) =>
        (await memoryItems.list(agentId, { includeSuperseded: true }, 'createdAt')).page(offset, limit),
    },
    queue: storage.jobs,
    clock,
    log,
    models: formation,
    embeddings,
    enabled: async (agentId) => (await formation.settings(agentId)).enabled,
    automatic: deps.automaticGraph ?? true,
    ...(deps.graphLimits ? { limits: deps.graphLimits } : {}),
  })
  registerGraphJobs(jobs, graphFormation)
  const forming = graphFormation
  memoryItems.onChange((scope, changes) =>
    isPoolStorageAgent(scope) ? Promise.resolve() : forming.memoriesChanged(scope, changes),
  )
  // The switch, summary and profile settings read and changed as one object (issue 13 §5).
  const formationSettings = new FormationSettingsService({
    store: settingsStore,
    formation,
    summaries,
    profiles,
  })
  const lexicalIndexConfig = parseWith(
    LexicalIndexCacheConfigSchema,
    deps.lexicalIndexes ?? {},
    'lexicalIndexes',
  )
  const lexicalIndexes = new AgentLexicalIndexes(storage.fullText, writes, lexicalIndexConfig, clock)
  const search = new SearchService({
    lexicalIndexes: lexicalIndexConfig.enabled ? lexicalIndexes : null,
    fullText: storage.fullText,
    recall: storage.recall,
    embeddings,
    memories: memoryItems,
    limits,
    clock,
    writes,
    lexicalPlan: parseWith(LexicalPlanConfigSchema, deps.lexicalPlan ?? {}, 'lexicalPlan'),
    accessFlush: deps.accessFlush ?? {},
    ...(deps.dialogueReads ? { dialogueReads: deps.dialogueReads } : {}),
    ...(deps.candidateRows ? { candidateRows: deps.candidateRows } : {}),
    log,
    graph: storage.graph,
    telemetry,
  })
  search.useAutomaticSummaries(storage.summaries)
  // The POOLS scope and context section (issue 17): every membership reads (READER or CONTRIBUTOR);
  // kept per agent write version, which every membership change bumps, so a removal holds from
  // the next request without a database read on every one.
  const readablePools = readablePoolsOf(storage.pools, writes)
  search.usePools(readablePools)
  const contextSources = episodic ? episodic.contextSources(storage.contextSources) : storage.contextSources
  const context = new ContextService(contextSources, clock, tokenCounter, memoryItems, search, writes)
  context.useMessageTokens(messageTokens)
  context.useGraph(storage.graph)
  context.usePools(readablePools)
  // memoryContext's buildContext option (issue 17): spec 002's prompt over the same search, and
  // the overflow summarised as stored summaries are written.
  const summaryWriter = summaries
  context.useBuilder(
    new ContextBuilder({
      search,
      summaries: { write: (agentId, turns, maxTokens) => summaryWriter.write(agentId, turns, maxTokens) },
      tokenCounter,
      rules: parseWith(ContextBuilderRulesSchema, deps.contextBuilder ?? {}, 'contextBuilder'),
      maxCandidates: limits.maxSearchLimit,
      maxContentChars: limits.maxContentChars,
    }),
  )
  // Issue 17's metrics: the context cache's hit rate, the optimizer's savings, job outcomes.
  context.reportTo(telemetry)
  jobs.reportTo(telemetry)
  context.useFormation({
    profileLines: (scope, userId) => profiles.contextLines(scope, userId),
    summaries: (scope, options) =>
      storage.summaries.list(scope, { since: options.since, limit: options.limit }),
  })
  const optimizer = new OptimizerService(
    storage.optimizer,
    clock,
    tokenCounter,
    parameters,
    memory,
    events,
    {
      intervalMs: deps.optimizer?.intervalMs ?? DEFAULT_OPTIMIZER_CONFIG.intervalMs,
      snapshotHistoryLimit: DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit,
      keyFactMode: deps.optimizer?.keyFactMode ?? 'spec',
      leaseTtlMs: deps.optimizer?.leaseTtlMs,
      leaseRenewMs: deps.optimizer?.leaseRenewMs,
      cachedEntries: deps.optimizer?.cachedEntries,
    },
    log,
    writes,
    deps.lease,
  )
  optimizer.reportTo(telemetry)
  const knowledge = new KnowledgeService(storage.knowledge, clock, limits, embeddings)
  // The knowledge graph's reads and an operator's corrections (issue 15), within the same limits
  // as its formation.
  const graph = new GraphService({
    repository: storage.graph,
    clock,
    recall: storage.recall,
    ...(deps.graphLimits ? { limits: deps.graphLimits } : {}),
  })
  // Spec 002's L1 (issue 17): a flush stores through the conversation's own path (addMessages),
  // so full text, vectors, the L2 layer and memory formation see it like any stored turn.
  const workingContext = new WorkingContextService({
    rules: parseWith(WorkingContextRulesSchema, deps.workingContext?.rules ?? {}, 'workingContext'),
    limits,
    clock,
    tokenCounter,
    telemetry,
    store: deps.workingContext?.store ?? null,
    storeBatch: async (agentId, batch) => {
      for (let from = 0; from < batch.messages.length; from += limits.maxBatchMessages)
        await sessions.addMessages(
          agentId,
          batch.conversationId,
          batch.messages.slice(from, from + limits.maxBatchMessages),
        )
    },
    history: storage.history,
    sessions: storage.sessions,
    episodic,
  })
  const lifecycle = new AgentLifecycle({
    data: storage.agentData,
    agents,
    writes,
    context,
    embeddings,
    sessions,
    memory,
    search,
    optimizer,
    events,
    formationStats,
    scheduledJobs: formation.scheduled,
    lexicalIndexes,
    messageTokens,
    ...(episodic ? { shared: episodic } : {}),
    workingContext,
    // The memories an agent contributed to pools leave them before its rows go (issue 17).
    beforeDelete: (agentId) => pools.forgetAgent(agentId),
  })
  // Shared memory pools (issue 17): their memories are memory items of an internal storage agent.
  const pools = new PoolService({
    pools: storage.pools,
    agents: storage.repositories.agents,
    requireAgent: (agentId) => agents.requireAgent(agentId),
    memoryItems,
    search,
    endStorageAgent: async (storageAgentId) => {
      lifecycle.ended(storageAgentId)
      await lifecycle.purge(storageAgentId)
      await lifecycle.dropShared(storageAgentId)
    },
    guard: async (agentId, texts) => (await privacy.guard(agentId, texts)).texts,
    clock,
    limits: parseWith(PoolLimitsSchema, deps.poolLimits ?? {}, 'poolLimits'),
    membershipChanged: (agentIds) => {
      for (const agentId of agentIds) writes.touch(agentId)
    },
  })
  const transfer = new TransferService({
    storage,
    clock,
    tokenCounter,
    limits,
    privacy,
    embeddings,
    writes,
    lifecycle,
    // A document that brought memories but no graph (an export from before issue 15) has its
    // graph formed from them; one that brought its graph keeps it as it was.
    afterImport: async (scope) => {
      if ((await storage.graph.countEntities(scope, {})) === 0) await forming.formAgent(scope)
    },
  })
  // Trajectory memory (spec 004, issue 16): the run registry records a run's end in its memory.
  const random = deps.random ?? Math.random
  const trajectoryRules = parseWith(TrajectoryRulesSchema, deps.trajectoryRules ?? {}, 'trajectoryRules')
  const trajectoryLimits = parseWith(TrajectoryLimitsSchema, deps.trajectoryLimits ?? {}, 'trajectoryLimits')
  // What an acting agent types (passwords into login forms) passes its sensitive-data policy,
  // whether it arrives from a run or from an imported `.agent-memory/` directory.
  const runTextGuard: TextGuard = async (agentId, texts) => (await privacy.guard(agentId, texts)).texts
  const runMemory = new RunMemory({
    repository: storage.trajectories,
    clock,
    rules: trajectoryRules,
    limits: trajectoryLimits,
    random,
    guard: runTextGuard,
  })
  const runs = new RunRegistry({ repository: storage.trajectories, memory: runMemory, clock, events, random })
  // Spec 004's `.agent-memory/` directories into and out of a memory scope (issue 16).
  const agentMemory = new AgentMemoryTransfer({
    repository: storage.trajectories,
    clock,
    rules: trajectoryRules,
    limits: trajectoryLimits,
    guard: runTextGuard,
  })
  // What an acting agent's next decision needs from that memory, and reference matching.
  const runContext = new RunContextService({
    repository: storage.trajectories,
    clock,
    tokenCounter,
    rules: trajectoryRules,
  })
  // Another replica's changes drop what this process holds (only when the bus crosses processes).
  const replicas = deps.replicas?.invalidateCaches
    ? new ReplicaCaches(
        events,
        {
          writes,
          dropDerived: (agentId) => lifecycle.dropDerived(agentId),
          dropWritten: (agentId) => {
            // Its session rows (counters, a deleted conversation) and entry vectors changed there.
            sessions.forgetCached(agentId)
            memory.invalidate(agentId)
            context.forget(agentId)
            // Not the kept token counts: no message's text changes under its id, no id is reused (a
            // conversation deleted there leaves counts nobody asks for again, until evicted).
          },
          dropSettings: (agentId) => {
            summaries?.forgetSettings(agentId)
            formation.forgetSettings(agentId)
          },
        },
        log,
      )
    : null
  replicas?.start()

  /**
   * Deletes a conversation as deleteSession does: its turns, entries and everything derived from
   * them (full text, vectors, L2, graph evidence, summaries), its queued extraction, the caches.
   */
  async function deleteConversation(agentId: string, conversationId: string): Promise<boolean> {
    const deleted = await sessions.delete(agentId, conversationId)
    // Its queued extraction goes too (the watermark went with the session row).
    await formation.forgetConversation(agentId, conversationId)
    if (deleted) {
      messageTokens.forgetConversation(agentId, conversationId)
      memory.invalidate(agentId)
      search.forgetAgent(agentId)
    }
    return deleted
  }

  // Spec 002's maintenance (issue 17 §4): retention, summary retention and compaction, scheduled
  // once across replicas (the same lease port as the optimizer's) or run on demand.
  const summaryService = summaries
  const maintenance = new MaintenanceService({
    repository: storage.maintenance,
    compaction: storage.compaction,
    agentIds: () => storage.agentData.agentIds(),
    settingsStore,
    deleteConversation,
    summaries: {
      retentionCutoff: async (agentId) =>
        new Date(
          clock.now().getTime() - (await summaryService.settings(agentId)).summaryRetentionDays * 86_400_000,
        ),
      removeExpired: (agentId) => summaryService.removeExpired(agentId),
    },
    clock,
    rules: parseWith(MaintenanceRulesSchema, deps.maintenance ?? {}, 'maintenance'),
    lease: deps.lease ?? new InProcessLease(clock),
    log,
    telemetry,
  })

  /**
   * 003's "Sync now": everything pending for the agent formed at once: memories from the turns not
   * yet extracted, then summaries of conversations with turns not yet summarised, then the profiles
   * those memories make due (in that order, so the summaries and profile see the new memories).
   */
  async function syncMemory(agentId: string): Promise<SyncResult> {
    const formed = await formation.syncMemory(agentId)
    const newSummaries = (await summaries?.summarizePending(agentId)) ?? []
    const profileVersions = await profiles.refreshAgent(agentId)
    return { ...formed, summaries: newSummaries, profileVersions }
  }

  /**
   * The agent's formation activity (issue 13 §5): calls, successes, failures and durations of
   * each kind of work in this process, its queued jobs, the extractor and the model's circuit.
   */
  async function formationActivity(agentId: string): Promise<FormationActivity> {
    return activity.activity(agentId, (await formation.settings(agentId)).extraction.extractor)
  }

  return {
    syncMemory,
    formationActivity,
    deleteConversation,
    /** Retention, compaction and their runs (issue 17 §4); start() its scheduler in a server. */
    maintenance,
    formationStats,
    storage,
    clock,
    tokenCounter,
    limits,
    log,
    events,
    /** Where metrics observations go (the API's Prometheus registry; nowhere by default). */
    telemetry,
    /** The server's sampled metrics for the admin query serverMetrics (empty in an embedded engine). */
    serverMetrics: deps.serverMetrics ?? NO_SERVER_METRICS,
    writes,
    parameters,
    memory,
    sessions,
    conversations,
    jobs,
    privacy,
    agents,
    embeddings,
    memoryItems,
    formation,
    search,
    context,
    optimizer,
    knowledge,
    graph,
    lifecycle,
    transfer,
    agentMemory,
    summaries,
    profiles,
    formationSettings,
    /** Each agent's in-process lexical index per collection, kept in step with the store (issue 18). */
    lexicalIndexes,
    /** contextWindow's and memoryContext's kept token counts of messages (issue 18). */
    messageTokens,
    /** Knowledge-graph formation from every memory written (issue 15). */
    graphFormation: forming,
    /** Cross-replica cache invalidation when configured (stop it when the engine is closed). */
    replicas,
    /** Spec 002's L2 episodic layer when configured. */
    episodic,
    /** Spec 004's run registry (start, progress, end, resume, fork, lineage). */
    runs,
    /** Trajectory memory's records: trajectories, session history, app facts, selectors, hints. */
    runMemory,
    /** What an acting agent's next decision needs from trajectory memory (issue 16). */
    runContext,
    /** Shared memory pools (issue 17). */
    pools,
    /** Spec 002's L1 working context and recency retrieval (issue 17). */
    workingContext,
  }
}
