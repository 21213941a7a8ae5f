import type { Catalog, OperationName, OutputOf, ParsedInputOf } from '@engram/contract'
import {
  type ContextSectionName,
  type KnowledgeCategory,
  type MemoryCategory,
  NotFoundError,
  type Role,
  type SpeakerRole,
  ValidationError,
} from '@engram/core'
import type { Engine } from '../engine.ts'
import type { MemoryFilter } from '../memory-items/memory-item-rules.ts'
import { offsetConnection } from '../paging/offset-connection.ts'
import { agentMemoryHandlers } from './agent-memory-handlers.ts'
import { type GuardedMessage, guardMessages } from './guard-messages.ts'
import { maintenanceHandlers } from './maintenance-handlers.ts'
import { metricsHandlers } from './metrics-handlers.ts'
import { poolHandlers } from './pool-handlers.ts'
import { type Principal, scopeOf } from './principal.ts'
import { rememberThisMemory, searchOptionsOf } from './requests.ts'
import { runContextHandlers } from './run-context-handlers.ts'
import { runHandlers } from './run-handlers.ts'
import { eventStream } from './streams.ts'
import * as wire from './wire.ts'
import { workingContextHandlers } from './working-context-handlers.ts'

type QueryOrMutationName = {
  [N in OperationName]: Catalog[N]['kind'] extends 'subscription' ? never : N
}[OperationName]
export type SubscriptionName = Exclude<OperationName, QueryOrMutationName>
export type { QueryOrMutationName }

/** One operation's call as its handler sees it: who calls, and the scope helpers bound to them. */
export interface OperationCall {
  principal: Principal
  /** The agent acted on (see agentScopeOf); a mutation records it so caches see its writes. */
  agentScope(agentId: string | null | undefined): Promise<string>
  /** A list's scope: null for the operator naming no agent (every agent). */
  listScope(agentId: string | null | undefined): Promise<string | null>
}

/**
 * One handler per catalog entry, over the input the catalog's schema parsed. A catalog entry
 * without a handler here fails the type check (the mapped type requires every name).
 */
export type OperationHandlers = {
  [N in QueryOrMutationName]: (call: OperationCall, input: ParsedInputOf<N>) => Promise<OutputOf<N>>
} & {
  [N in SubscriptionName]: (
    call: OperationCall,
    input: ParsedInputOf<N>,
  ) => AsyncIterableIterator<OutputOf<N>>
}

const date = (value: string | null | undefined) => (value == null ? value : new Date(value))
const lower = <T extends string>(value: string) => value.toLowerCase() as T

const MEMORY_ORDER = {
  NEWEST: 'createdAt',
  UPDATED: 'updatedAt',
  IMPORTANCE: 'importance',
  ACCESSED: 'lastAccessedAt',
  ACCESS_COUNT: 'accessCount',
} as const
const KNOWLEDGE_ORDER = {
  CONFIDENCE: 'confidence',
  LAST_USED: 'lastUsedAt',
  USES: 'useCount',
  UPDATED: 'updatedAt',
} as const

type MemoryFilterInput = NonNullable<ParsedInputOf<'memories'>['filter']>

function memoryFilterOf(filter: MemoryFilterInput | undefined): MemoryFilter {
  return {
    userId: filter?.userId,
    categories: filter?.categories?.map((c) => lower<MemoryCategory>(c)),
    tags: filter?.tags,
    minImportance: filter?.minImportance,
    createdAfter: date(filter?.createdAfter),
    createdBefore: date(filter?.createdBefore),
    asOf: date(filter?.asOf),
    includeSuperseded: filter?.includeSuperseded,
    pinned: filter?.pinned,
    search: filter?.search,
  }
}

/** Fields given a value: an update changes these and keeps the rest. */
function given<T extends Record<string, unknown>>(changes: T): Partial<T> {
  return Object.fromEntries(Object.entries(changes).filter(([, v]) => v != null)) as Partial<T>
}

/**
 * The handlers: each operation's use case with its answer shaped as the catalog's output. The
 * GraphQL resolvers and the embedded SDK answer through these, so the doors cannot drift.
 */
export function operationHandlers(engine: Engine): OperationHandlers {
  const now = () => engine.clock.now()
  return {
    // Conversations ----------------------------------------------------------------------------
    async addMessage(call, input) {
      const scope = await call.agentScope(input.agentId)
      const [guarded] = await guardMessages(engine.privacy, scope, [input], () => 'message')
      const stored = await engine.sessions.addMessage(scope, input.conversationId, {
        role: lower<Role>(input.role),
        tokenCount: input.tokenCount,
        timestamp: date(input.timestamp),
        ...(guarded as GuardedMessage),
      })
      return wire.messageOut(stored)
    },
    async addMessages(call, input) {
      const scope = await call.agentScope(input.agentId)
      const guarded = await guardMessages(engine.privacy, scope, input.messages, (i) => `messages.${i}`)
      const messages = await engine.sessions.addMessages(
        scope,
        input.conversationId,
        input.messages.map((m, i) => ({
          role: lower<Role>(m.role),
          tokenCount: m.tokenCount,
          timestamp: date(m.timestamp),
          ...(guarded[i] as GuardedMessage),
        })),
      )
      const session = await engine.sessions.getOrCreate(scope, input.conversationId)
      return { session: wire.sessionOut(session), messages: messages.map(wire.messageOut) }
    },
    async session(call, input) {
      const scope = await call.agentScope(input.agentId)
      const session = await engine.sessions.find(scope, input.conversationId)
      return session ? wire.sessionOut(session) : null
    },
    async sessions(call, input) {
      const scope = await call.listScope(input.agentId)
      const { conversations } = engine
      const page = await offsetConnection(
        input,
        engine.limits,
        await conversations.sessionCount(scope),
        (p) => conversations.sessionPage(scope, p),
      )
      return {
        totalCount: page.totalCount,
        pageInfo: page.pageInfo,
        sessions: page.nodes.map(wire.sessionOut),
      }
    },
    async deleteSession(call, input) {
      const scope = await call.agentScope(input.agentId)
      const deleted = await engine.deleteConversation(scope, input.conversationId)
      return { conversationId: input.conversationId, deleted }
    },
    async contextWindow(call, input) {
      const scope = await call.agentScope(input.agentId)
      const plan = await engine.conversations.contextWindow(scope, input.conversationId, input.budget ?? {})
      return wire.contextWindowOut(plan)
    },

    // Memories ---------------------------------------------------------------------------------
    async createMemory(call, input) {
      const { agentId, category, validFrom, validUntil, ...fields } = input
      const scope = await call.agentScope(agentId)
      const written = await engine.memoryItems.create(scope, {
        ...fields,
        category: lower<MemoryCategory>(category),
        validFrom: date(validFrom),
        validUntil: date(validUntil),
      })
      return wire.memoryWriteOut(written, now())
    },
    async syncMemory(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.syncMemoryOut(await engine.syncMemory(scope), now())
    },
    async classify(_call, input) {
      // Pure routing: nothing of the caller's is read or written, so any key may ask.
      const role = input.role ? lower<SpeakerRole>(input.role) : 'user'
      return wire.classificationOut(
        engine.formation.classify({ content: input.content, role }, engine.limits),
      )
    },
    async memoryFormationSettings(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.formationSettingsOut(await engine.formationSettings.get(scope))
    },
    async updateMemoryFormationSettings(call, input) {
      const scope = await call.agentScope(input.agentId)
      const { enabled, extraction, summaries, profile } = input.settings
      const strategy = summaries?.strategy
      const extractor = extraction?.extractor
      try {
        return wire.formationSettingsOut(
          await engine.formationSettings.update(scope, {
            enabled,
            extraction: extraction && {
              extractor: extractor ? lower<'offline' | 'llm'>(extractor) : null,
              // Left out keeps the agent's model; null goes back to the server's.
              model: extraction.model,
            },
            summaries: summaries && {
              ...summaries,
              strategy: strategy ? wire.summaryStrategyIn(strategy) : null,
            },
            profile,
          }),
        )
      } catch (error) {
        // The engine names fields within the settings; the caller sent them under `settings`.
        if (!(error instanceof ValidationError)) throw error
        throw new ValidationError(
          error.issues.map((issue) => ({ ...issue, field: `settings.${issue.field}` })),
        )
      }
    },
    async summary(call, input) {
      const scope = await call.agentScope(input.agentId)
      const found = await engine.summaries.find(scope, input.id)
      if (!found) throw new NotFoundError('Summary', input.id)
      return wire.summaryOut(found)
    },
    async formationActivity(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.formationActivityOut(await engine.formationActivity(scope))
    },
    async summaries(call, input) {
      const scope = await call.agentScope(input.agentId)
      const listed = await engine.summaries.list(scope, {
        conversationId: input.conversationId ?? null,
        ...(input.limit != null ? { limit: input.limit } : {}),
      })
      return listed.map(wire.summaryOut)
    },
    async summarize(call, input) {
      const scope = await call.agentScope(input.agentId)
      const strategy = input.strategy ? wire.summaryStrategyIn(input.strategy) : null
      const summary = await engine.summaries.summarize(scope, input.conversationId, strategy)
      return { summary: summary && wire.summaryOut(summary) }
    },
    async userProfile(call, input) {
      const scope = await call.agentScope(input.agentId)
      const current = await engine.profiles.current(scope, input.userId ?? null)
      return { current: current && wire.profileVersionOut(current) }
    },
    async profileVersions(call, input) {
      const scope = await call.agentScope(input.agentId)
      const { items, total } = await engine.profiles.versions(scope, input.userId ?? null, {
        ...(input.offset != null ? { offset: input.offset } : {}),
        ...(input.limit != null ? { limit: input.limit } : {}),
      })
      return { totalCount: total, versions: items.map(wire.profileVersionOut) }
    },
    async profileDiff(call, input) {
      const scope = await call.agentScope(input.agentId)
      const diff = await engine.profiles.diff(scope, input.userId ?? null, input.from, input.to)
      return { from: input.from, to: input.to, ...diff }
    },
    async regenerateProfile(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.profileVersionOut(await engine.profiles.regenerate(scope, input.userId ?? null))
    },
    async rememberThis(call, input) {
      const scope = await call.agentScope(input.agentId)
      const written = await engine.memoryItems.create(
        scope,
        rememberThisMemory({
          ...input,
          category: input.category ? lower<MemoryCategory>(input.category) : null,
        }),
      )
      return wire.memoryWriteOut(written, now())
    },
    async updateMemory(call, input) {
      const { agentId, id, clearValidUntil, category, validFrom, validUntil, ...changes } = input
      const scope = await call.agentScope(agentId)
      const updated = await engine.memoryItems.update(scope, id, {
        ...given({
          ...changes,
          category: category ? lower<MemoryCategory>(category) : undefined,
          validFrom: date(validFrom),
          validUntil: date(validUntil),
        }),
        ...(clearValidUntil ? { validUntil: null } : {}),
      })
      // Its user may have changed: search's participants are rebuilt.
      engine.search.forgetAgent(scope)
      return wire.memoryOut(updated, now())
    },
    async deleteMemory(call, input) {
      const scope = await call.agentScope(input.agentId)
      const deleted = await engine.memoryItems.delete(scope, input.id)
      engine.search.forgetAgent(scope)
      engine.search.forgetAccesses(scope, [deleted.id])
      return wire.memoryOut(deleted, now())
    },
    async memories(call, input) {
      const scope = await call.listScope(input.agentId)
      const { totalCount, page } = await engine.memoryItems.list(
        scope,
        memoryFilterOf(input.filter),
        MEMORY_ORDER[input.orderBy ?? 'NEWEST'],
      )
      const connection = await offsetConnection(input, engine.limits, totalCount, ({ offset, limit }) =>
        page(offset, limit),
      )
      const at = now()
      return {
        totalCount,
        pageInfo: connection.pageInfo,
        memories: connection.nodes.map((m) => wire.memoryOut(m, at)),
      }
    },
    async memory(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.memoryOut(await engine.memoryItems.get(scope, input.id), now())
    },
    async search(call, input) {
      const scope = await call.agentScope(input.agentId)
      const ranked = await engine.search.rank(
        scope,
        input.query,
        searchOptionsOf(
          // The API's defaults for what the request leaves out.
          { ...input, scopes: input.scopes ?? ['MESSAGES'], strategy: input.strategy ?? 'HYBRID' },
          {
            memoryFilter: memoryFilterOf(input.filters?.memories),
            since: date(input.filters?.since),
            until: date(input.filters?.until),
          },
        ),
      )
      return wire.searchOut(ranked, now())
    },
    async memoryContext(call, input) {
      const scope = await call.agentScope(input.agentId)
      const built = await engine.context.build(scope, {
        query: input.query,
        conversationId: input.conversationId,
        userId: input.userId,
        budgetTokens: input.budgetTokens,
        sections: input.sections?.map((s) => lower<ContextSectionName>(s)),
        buildContext: input.buildContext,
      })
      return wire.memoryContextOut(built)
    },
    async profile(call, input) {
      const scope = await call.agentScope(input.agentId)
      const built = await engine.context.build(scope, {
        userId: input.userId,
        budgetTokens: input.budgetTokens,
        sections: ['profile'],
      })
      return wire.memoryContextOut(built)
    },

    // Knowledge --------------------------------------------------------------------------------
    async storeKnowledge(call, input) {
      const scope = await call.agentScope(input.agentId)
      const [key, value] = (
        await engine.privacy.guard(scope, [
          { field: 'key', text: input.key },
          { field: 'value', text: input.value },
        ])
      ).texts
      const stored = await engine.knowledge.store(scope, {
        category: lower<KnowledgeCategory>(input.category),
        key: key as string,
        value: value as string,
        confidence: input.confidence,
      })
      return wire.knowledgeOut(stored)
    },
    async updateKnowledge(call, input) {
      const { agentId, id, category, ...changes } = input
      const scope = await call.agentScope(agentId)
      const texts = (['key', 'value'] as const).flatMap((field) =>
        changes[field] == null ? [] : [{ field, text: changes[field] as string }],
      )
      const guarded = (await engine.privacy.guard(scope, texts)).texts
      texts.forEach((t, i) => {
        changes[t.field] = guarded[i] as string
      })
      const updated = await engine.knowledge.update(scope, id, {
        ...given(changes),
        ...(category ? { category: lower<KnowledgeCategory>(category) } : {}),
      })
      return wire.knowledgeOut(updated)
    },
    async deleteKnowledge(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.knowledgeOut(await engine.knowledge.delete(scope, input.id))
    },
    async knowledge(call, input) {
      const scope = await call.listScope(input.agentId)
      const { totalCount, page } = await engine.knowledge.list(
        scope,
        {
          category: input.filter?.category ? lower<KnowledgeCategory>(input.filter.category) : null,
          search: input.filter?.search,
          minConfidence: input.filter?.minConfidence,
        },
        KNOWLEDGE_ORDER[input.orderBy ?? 'CONFIDENCE'],
      )
      const connection = await offsetConnection(input, engine.limits, totalCount, ({ offset, limit }) =>
        page(offset, limit),
      )
      return { totalCount, pageInfo: connection.pageInfo, knowledge: connection.nodes.map(wire.knowledgeOut) }
    },
    async relevantKnowledge(call, input) {
      const scope = await call.agentScope(input.agentId)
      const matches = await engine.knowledge.relevant(
        scope,
        input.text,
        input.limit ?? 10,
        input.minConfidence ?? 0,
      )
      return {
        matches: matches.map((m) => ({
          knowledge: wire.knowledgeOut(m.knowledge),
          score: m.score,
          matchedTerms: [...m.matchedTerms],
        })),
      }
    },
    async recordKnowledgeUse(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.knowledgeOut(await engine.knowledge.recordUse(scope, input.id))
    },

    // Knowledge graph --------------------------------------------------------------------------
    async graphEntities(call, input) {
      const scope = await call.agentScope(input.agentId)
      const page = await engine.graph.searchEntities(scope, { ...input, knownAt: date(input.knownAt) })
      return {
        totalCount: page.totalCount,
        matches: page.matches.map((m) => ({ entity: wire.graphEntityOut(m.entity), score: m.score })),
      }
    },
    async graphEntity(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.graphEntityOut(await engine.graph.entity(scope, input.id, { knownAt: date(input.knownAt) }))
    },
    async graphRelationships(call, input) {
      const scope = await call.agentScope(input.agentId)
      const page = await engine.graph.relationships(scope, {
        ...input,
        asOf: date(input.asOf),
        knownAt: date(input.knownAt),
      })
      const at = now()
      return {
        totalCount: page.totalCount,
        relationships: page.relationships.map((r) => wire.graphRelationshipOut(r, at)),
      }
    },
    async graphRelationship(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.graphRelationshipOut(await engine.graph.relationship(scope, input.id), now())
    },
    async graphNeighbourhood(call, input) {
      const scope = await call.agentScope(input.agentId)
      const found = await engine.graph.neighbourhood(scope, {
        ...input,
        asOf: date(input.asOf),
        knownAt: date(input.knownAt),
      })
      return wire.graphNeighbourhoodOut(found, now())
    },
    async graphPaths(call, input) {
      const scope = await call.agentScope(input.agentId)
      const found = await engine.graph.paths(scope, {
        from: { entityId: input.fromId, name: input.fromName },
        to: { entityId: input.toId, name: input.toName },
        maxDepth: input.maxDepth,
        limit: input.limit,
        asOf: date(input.asOf),
        knownAt: date(input.knownAt),
      })
      return wire.graphPathsOut(found, now())
    },
    async createGraphEntity(call, input) {
      const { agentId, ...entity } = input
      const scope = await call.agentScope(agentId)
      return wire.graphEntityOut(await engine.graph.createEntity(scope, entity))
    },
    async updateGraphEntity(call, input) {
      const { agentId, id, ...changes } = input
      const scope = await call.agentScope(agentId)
      return wire.graphEntityOut(await engine.graph.updateEntity(scope, id, changes))
    },
    async mergeGraphEntities(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.graphEntityOut(await engine.graph.mergeEntities(scope, input.fromId, input.intoId))
    },
    async deleteGraphEntity(call, input) {
      const scope = await call.agentScope(input.agentId)
      await engine.graph.deleteEntity(scope, input.id)
      return { id: input.id, deleted: true }
    },
    async createGraphRelationship(call, input) {
      const { agentId, validFrom, validUntil, ...edge } = input
      const scope = await call.agentScope(agentId)
      const created = await engine.graph.createRelationship(scope, {
        ...edge,
        validFrom: date(validFrom),
        validUntil: date(validUntil),
      })
      return wire.graphRelationshipOut(created, now())
    },
    async updateGraphRelationship(call, input) {
      const { agentId, id, validFrom, validUntil, ...changes } = input
      const scope = await call.agentScope(agentId)
      const updated = await engine.graph.updateRelationship(scope, id, {
        ...changes,
        // Left out keeps the bound; null makes that side unbounded.
        ...(validFrom !== undefined ? { validFrom: date(validFrom) as Date | null } : {}),
        ...(validUntil !== undefined ? { validUntil: date(validUntil) as Date | null } : {}),
      })
      return wire.graphRelationshipOut(updated, now())
    },
    async retireGraphRelationship(call, input) {
      const scope = await call.agentScope(input.agentId)
      const retired = await engine.graph.retireRelationship(scope, input.id, input.reason ?? null)
      return wire.graphRelationshipOut(retired, now())
    },
    async deleteGraphRelationship(call, input) {
      const scope = await call.agentScope(input.agentId)
      await engine.graph.deleteRelationship(scope, input.id)
      return { id: input.id, deleted: true }
    },

    // Optimizer --------------------------------------------------------------------------------
    async optimizerStatus(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.optimizerStatusOut(await engine.optimizer.status(scope))
    },
    async runOptimizer(call, input) {
      const scope = await call.agentScope(input.agentId)
      let sessionId: string | null = null
      if (input.conversationId) {
        const session = await engine.sessions.find(scope, input.conversationId)
        if (!session) throw new NotFoundError('Session', input.conversationId)
        sessionId = session.id
      }
      return wire.snapshotOut(await engine.optimizer.run(scope, sessionId))
    },

    // Export, import, backup -------------------------------------------------------------------
    async exportMemory(call, input) {
      const scope = await call.agentScope(input.agentId)
      const document = await engine.transfer.exportAgent(scope, {
        includeSnapshots: input.includeSnapshots ?? false,
      })
      return wire.exportOut(document, now())
    },
    async importMemory(call, input) {
      const scope = await call.agentScope(input.agentId)
      const report = await engine.transfer.importAgent(scope, input.document, input.mode ?? 'REPLACE', {
        admin: call.principal.kind === 'operator',
      })
      return {
        sessions: report.sessions,
        messages: report.messages,
        memories: report.memories,
        knowledge: report.knowledge,
        vectors: report.vectors,
        reembedded: report.reembedded,
      }
    },
    async backupDatabase() {
      return wire.backupOut(await engine.transfer.backup())
    },
    async backups() {
      return (await engine.transfer.listBackups()).map(wire.backupOut)
    },
    async restoreDatabase(_call, input) {
      const restored = await engine.transfer.restore(input.name)
      return { name: restored.name, tables: restored.tables }
    },

    // Keys and agents --------------------------------------------------------------------------
    async createApiKey(_call, input) {
      const created = await engine.agents.createApiKey(input.agentId, input.label)
      return { key: created.key, apiKey: wire.apiKeyOut(created.apiKey) }
    },
    async apiKeys(_call, input) {
      return (await engine.agents.listApiKeys(input.agentId ?? null)).map(wire.apiKeyOut)
    },
    async revokeApiKey(_call, input) {
      const key = await engine.agents.revokeApiKey(input.id)
      // Subscriptions opened with it end now rather than at their next event.
      engine.lifecycle.accessChanged()
      return wire.apiKeyOut(key)
    },
    async agents(call) {
      const { principal } = call
      const agents = await engine.agents.listAgents(
        principal.kind === 'operator' ? 'admin' : { agentId: principal.agentId },
      )
      return agents.map(wire.agentOut)
    },
    async createAgent(_call, input) {
      return wire.agentOut(await engine.agents.createAgent(input.id, input.name))
    },

    // Subscriptions ----------------------------------------------------------------------------
    watchOptimizerSnapshots(call, input) {
      const { principal } = call
      // Refused at once when an agent names another; the operator's named agent is checked before
      // the first event (the bus subscription is made now, so no event is missed meanwhile).
      const wanted: Promise<string | null> =
        principal.kind === 'agent'
          ? Promise.resolve(scopeOf(principal, input.agentId))
          : call.listScope(input.agentId)
      return eventStream(engine, 'optimizer:snapshot', wanted, (event, agentId) =>
        agentId == null || event.agentId === agentId ? wire.snapshotOut(event) : null,
      )
    },
    formationActivityEvents(call, input) {
      const { principal } = call
      // As the optimizer's snapshots: an agent naming another is refused at once, the operator's
      // named agent checked before the first event, every agent's events when it names none.
      const wanted: Promise<string | null> =
        principal.kind === 'agent'
          ? Promise.resolve(scopeOf(principal, input.agentId))
          : call.listScope(input.agentId)
      return eventStream(engine, 'formation:activity', wanted, (event, agentId) =>
        agentId == null || event.agentId === agentId ? wire.formationActivityEventOut(event) : null,
      )
    },
    watchEmbeddingProgress() {
      return eventStream(engine, 'embedding:progress', Promise.resolve(null), wire.embeddingProgressOut)
    },
    // Trajectory memory (issue 16): in their own files.
    ...runHandlers(engine),
    ...poolHandlers(engine),
    ...runContextHandlers(engine),
    ...maintenanceHandlers(engine),
    ...agentMemoryHandlers(engine),
    ...metricsHandlers(engine),
    ...workingContextHandlers(engine),
  }
}
