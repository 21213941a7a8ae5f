import {
  type AssembledContext,
  assembleContext,
  type Clock,
  CONTEXT_SECTIONS,
  CONTEXT_SUMMARY_PREFIX,
  type ContextItem,
  type ContextSectionInput,
  type ContextSectionName,
  DEFAULT_CONTEXT_BUDGET_TOKENS,
  isUserProfileMemory,
  MAX_CONTEXT_BUDGET_TOKENS,
  NotFoundError,
  poolStorageAgentId,
  type TokenCounter,
  ValidationError,
} from '@engram/core'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { MessageTokenCounts } from '../conversations/message-token-counts.ts'
import type {
  ContextMemory,
  ContextMemoryOrder,
  ContextMemoryQuery,
  ContextSources,
} from '../ports/context-sources.ts'
import type { GraphRepository } from '../ports/graph.ts'
import { NO_TELEMETRY, type Telemetry } from '../ports/telemetry.ts'
import type { ContextFormation, ContextMemoryItems, ContextSearch } from './collaborators.ts'
import type { BuiltContext, ContextBuilder } from './context-builder.ts'
import { graphRelationshipItems } from './context-graph.ts'

/** Spec 003: assembled context is cached 10 s per agent (and here per request). */
export const CONTEXT_CACHE_TTL_MS = 10_000
const CONTEXT_CACHE_MAX_ENTRIES = 1_000
/** How many candidates a section is offered before the budget decides; more than any budget fits. */
const SECTION_CANDIDATES = 200

/**
 * Sections that do not depend on the query (Key relationships does since issue 15: the graph's
 * edges are ranked by the entities the query names): each new query would load the same rows again (five
 * sorted scans over the agent's memories). They are kept per agent write version and user for
 * the context cache's TTL, so staleness is bounded exactly as for a whole cached context.
 */
const STANDING_SECTIONS = new Set<ContextSectionName>([
  'user_overrides',
  'profile',
  'working_memory',
  'summaries',
])

/** Facts are read past when they are about the world, not the user (isUserProfileMemory). */
const PROFILE_CANDIDATE_CATEGORIES = ['fact', 'preference', 'skill'] as const
/**
 * How many profile candidates are read at most to fill the section: an agent with thousands of
 * world facts above the user's own in importance still gets a profile, in bounded time.
 */
const PROFILE_SCAN_LIMIT = 2_000
const WORKING_CATEGORIES = ['decision', 'correction', 'commitment', 'context', 'past_conversation'] as const

export interface MemoryContextRequest {
  query?: string | null
  conversationId?: string | null
  userId?: string | null
  budgetTokens?: number | null
  sections?: ContextSectionName[] | null
  /** Spec 002's context builder's options (issue 17): the answer then carries `built` as well. */
  buildContext?: unknown
}

export interface MemoryContextResult extends AssembledContext {
  cached: boolean
  generatedAt: Date
  /** Spec 002's built prompt, when the request asked for it. */
  built?: BuiltContext | null
}

type KeptContext = AssembledContext & { built?: BuiltContext | null }

/**
 * Builds the block an agent injects into its prompt (spec 003 context assembly, spec 001 format):
 * overrides, profile, working memory, summaries, relationships, then query-relevant memories,
 * knowledge and the conversation itself, each within its budget, lower priorities trimmed first.
 */
export class ContextService {
  /** Automatic summaries and the generated profile (issue 13), once wired. */
  private formation: ContextFormation | null = null
  /** The knowledge graph (issue 15), once wired: Key relationships come from it when it has any. */
  private graph: GraphRepository | null = null
  /** Spec 002's context builder (issue 17), once wired: what the buildContext option answers. */
  private builder: ContextBuilder | null = null
  /** The pools an agent may read (issue 17), once wired: the POOLS section (Shared knowledge). */
  private readablePools: ((agentId: string) => Promise<string[]>) | null = null
  private readonly cache = new Map<string, { at: number; value: KeptContext; generatedAt: Date }>()
  /** Where the cache's hits and misses are reported (issue 17's metrics); nowhere until wired. */
  private telemetry: Telemetry = NO_TELEMETRY
  private readonly standing = new Map<string, { at: number; items: ContextItem[] }>()
  /** The conversation's turns' counts kept between calls, once wired (counted afresh until). */
  private messageTokens: MessageTokenCounts | null = null

  constructor(
    private readonly sources: ContextSources,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly memories: ContextMemoryItems,
    private readonly search: ContextSearch,
    private readonly writes: AgentWrites,
  ) {}

  /** Counts the CONVERSATION section's turns once (MessageTokenCounts), not on every call. */
  useMessageTokens(counts: MessageTokenCounts): void {
    this.messageTokens = counts
  }

  /** Lets the SUMMARIES section show automatic summaries and the PROFILE section the generated profile. */
  useFormation(formation: ContextFormation): void {
    this.formation = formation
  }

  /** Reports each cache lookup (hit or miss) to the metrics. */
  reportTo(telemetry: Telemetry): void {
    this.telemetry = telemetry
  }

  /** Lets the RELATIONSHIPS section show the knowledge graph's current relationships. */
  useGraph(graph: GraphRepository): void {
    this.graph = graph
  }

  /** Lets the buildContext option build spec 002's prompt beside the sections. */
  useBuilder(builder: ContextBuilder): void {
    this.builder = builder
  }

  /** Lets the POOLS section show the query's hits in the agent's shared pools. */
  usePools(readablePools: (agentId: string) => Promise<string[]>): void {
    this.readablePools = readablePools
  }

  async build(scope: string, request: MemoryContextRequest): Promise<MemoryContextResult> {
    const budgetTokens = request.budgetTokens ?? DEFAULT_CONTEXT_BUDGET_TOKENS
    if (!Number.isInteger(budgetTokens) || budgetTokens < 1 || budgetTokens > MAX_CONTEXT_BUDGET_TOKENS) {
      throw new ValidationError([
        {
          field: 'budgetTokens',
          message: `must be an integer from 1 to ${MAX_CONTEXT_BUDGET_TOKENS}`,
          limit: MAX_CONTEXT_BUDGET_TOKENS,
        },
      ])
    }
    // A bad buildContext option is refused before any section is read.
    if (request.buildContext != null)
      this.builderOrFail().check({ options: request.buildContext, query: request.query })
    const wanted = new Set<ContextSectionName>(request.sections?.length ? request.sections : CONTEXT_SECTIONS)
    // Memberships are read on every request (a removed member's next context has no pool in it),
    // and each pool's write version keys the cache as the agent's own does.
    const poolIds = wanted.has('pools') && this.readablePools ? await this.readablePools(scope) : []
    const key = JSON.stringify([
      scope,
      this.writes.version(scope),
      poolIds.map((id) => [id, this.writes.version(poolStorageAgentId(id))]),
      request.query ?? '',
      request.conversationId ?? '',
      request.userId ?? '',
      budgetTokens,
      [...wanted].sort(),
      // A built prompt (its summary may be a model call) is kept as long as the sections are.
      request.buildContext ?? null,
    ])
    const now = this.clock.now()
    const hit = this.cache.get(key)
    const fresh = hit !== undefined && now.getTime() - hit.at < CONTEXT_CACHE_TTL_MS
    this.telemetry.cacheLookup('context', fresh)
    if (hit && fresh) {
      return { ...hit.value, cached: true, generatedAt: hit.generatedAt }
    }

    const { contextBudgets, settings } = await this.memories.settings(scope)
    // The time memories must be valid at, taken once for every section.
    const asOf = this.clock.now()
    const memoryLines = (rows: ContextMemory[]): ContextItem[] =>
      rows.map((m) => ({ id: `memory:${m.id}`, text: m.content }))
    const sections: ContextSectionInput[] = []
    const version = this.writes.version(scope)
    const add = async (name: ContextSectionName, load: () => Promise<ContextItem[]>) => {
      if (!wanted.has(name)) return
      if (!STANDING_SECTIONS.has(name)) {
        sections.push({ name, items: await load() })
        return
      }
      const standingKey = JSON.stringify([scope, version, request.userId ?? '', name])
      const kept = this.standing.get(standingKey)
      if (kept && now.getTime() - kept.at < CONTEXT_CACHE_TTL_MS) {
        sections.push({ name, items: kept.items })
        return
      }
      const items = await load()
      if (this.standing.size >= CONTEXT_CACHE_MAX_ENTRIES) {
        const oldest = this.standing.keys().next().value
        if (oldest !== undefined) this.standing.delete(oldest)
      }
      this.standing.set(standingKey, { at: now.getTime(), items })
      sections.push({ name, items })
    }
    // Memories valid at asOf (neither superseded nor valid only later), the user's when one is named.
    const findMemories = (
      query: Pick<ContextMemoryQuery, 'pinned' | 'categories'>,
      order: ContextMemoryOrder,
      skip = 0,
    ) =>
      this.sources.memories(scope, {
        ...query,
        userId: request.userId,
        asOf,
        order,
        skip,
        limit: SECTION_CANDIDATES,
      })

    await add('user_overrides', async () => memoryLines(await findMemories({ pinned: true }, 'oldest')))
    await add('profile', async () => {
      // The generated profile's current version when the user has one (issue 13 §4).
      const generated = await this.formation?.profileLines(scope, request.userId ?? null)
      if (generated) return generated
      // "Marco Ruiz is the on-call SRE" is a FACT but not who the user is: such facts are left to
      // the relevant memories, which the query selects (issue 10).
      const profile: ContextMemory[] = []
      for (let skip = 0; profile.length < SECTION_CANDIDATES && skip < PROFILE_SCAN_LIMIT; ) {
        const rows = await findMemories(
          { pinned: false, categories: PROFILE_CANDIDATE_CATEGORIES },
          'profile',
          skip,
        )
        profile.push(...rows.filter((m) => isUserProfileMemory(m, request.userId)))
        if (rows.length < SECTION_CANDIDATES) break
        skip += rows.length
      }
      return memoryLines(profile.slice(0, SECTION_CANDIDATES))
    })
    await add('working_memory', async () =>
      memoryLines(await findMemories({ pinned: false, categories: WORKING_CATEGORIES }, 'recent')),
    )
    await add('summaries', async () => {
      // Counted back from the agent's newest message, like search's windowDays: an imported
      // history keeps its summaries instead of falling out of a window measured from today.
      const newest = settings.conversationWindowDays > 0 ? await this.search.newestMessageTime(scope) : null
      const since = newest
        ? new Date(newest.getTime() - settings.conversationWindowDays * 86_400_000)
        : undefined
      const rows = await this.sources.summaries(scope, { since, limit: SECTION_CANDIDATES })
      // Automatic summaries first: they cover the latest conversations, compressMessages' the older turns.
      const automatic = (await this.formation?.summaries(scope, { since, limit: SECTION_CANDIDATES })) ?? []
      return [
        ...automatic.map((r) => ({ id: `summary:${r.id}`, text: r.content })),
        ...rows.map((r) => ({
          id: `message:${r.id}`,
          text: r.content.slice(CONTEXT_SUMMARY_PREFIX.length).trim(),
        })),
      ]
    })
    const query = request.query?.trim()
    await add('relationships', async () => {
      // The graph's relationships that hold now, those around the entities the query names first;
      // an agent whose graph has none yet keeps the RELATIONSHIP memories it showed before.
      const fromGraph = this.graph
        ? await graphRelationshipItems(this.graph, scope, {
            query: query ?? '',
            userId: request.userId ?? null,
            at: asOf,
            limit: SECTION_CANDIDATES,
          })
        : []
      if (fromGraph.length > 0) return fromGraph
      return memoryLines(await findMemories({ pinned: false, categories: ['relationship'] }, 'important'))
    })
    // Filled after the sections above are assembled: what they include is not repeated here.
    let relevantHits: { id: string; text: string }[] = []
    await add('relevant_memories', async () => {
      if (!query) return []
      const hits = await this.search.search(scope, query, {
        scopes: ['MEMORIES'],
        limit: Math.min(100, SECTION_CANDIDATES),
        memoryFilter: { userId: request.userId },
        track: false,
      })
      relevantHits = hits.filter((h) => h.memory).map((h) => ({ id: `memory:${h.id}`, text: h.text }))
      return relevantHits
    })
    await add('knowledge', async () => {
      if (!query) return []
      const hits = await this.search.search(scope, query, { scopes: ['KNOWLEDGE'], limit: 50, track: false })
      return hits.map((h) => ({ id: `knowledge:${h.id}`, text: h.text }))
    })
    await add('pools', async () => {
      if (!query || poolIds.length === 0) return []
      const hits = await this.search.search(scope, query, { scopes: ['POOLS'], limit: 50, track: false })
      // Their own kind: the agent's memory accesses (memory:<id> below) are not the pools'.
      return hits.map((h) => ({ id: `pool_memory:${h.id}`, text: h.text }))
    })
    await add('conversation', async () => {
      if (!request.conversationId) return []
      const rows = await this.sources.recentTurns(scope, request.conversationId, SECTION_CANDIDATES)
      if (!rows) throw new NotFoundError('Session', request.conversationId)
      // Newest turns first until the section budget is spent, then back in reading order.
      let spent = 0
      const recent = []
      const conversationId = request.conversationId
      for (const row of rows) {
        const text = `${row.role}: ${row.content}`
        spent +=
          (this.messageTokens?.count(scope, conversationId, row.id, 'turn', text) ??
            this.tokenCounter.count(text)) + 2
        if (spent > contextBudgets.conversation) break
        recent.push({ id: `message:${row.id}`, text })
      }
      return recent.reverse()
    })

    const count = (text: string) => this.tokenCounter.count(text)
    let assembled = assembleContext({ budgetTokens, sections, budgets: contextBudgets }, count)
    if (relevantHits.length > 0) {
      // Higher-priority sections do not depend on lower ones, so a second pass keeps them as they
      // are and offers only the relevant memories they did not already include.
      const shown = new Set(
        assembled.sections.filter((s) => s.name !== 'relevant_memories').flatMap((s) => s.included),
      )
      const relevant = sections.find((s) => s.name === 'relevant_memories')
      if (relevant) relevant.items = relevantHits.filter((item) => !shown.has(item.id))
      assembled = assembleContext({ budgetTokens, sections, budgets: contextBudgets }, count)
    }
    const built =
      request.buildContext == null
        ? null
        : await this.builderOrFail().build(scope, {
            options: request.buildContext,
            query: request.query,
            userId: request.userId,
          })
    const shown = [...assembled.sections.flatMap((s) => s.included), ...(built?.memories.included ?? [])]
    const included = [...new Set(shown.filter((id) => id.startsWith('memory:')))].map((id) =>
      Number(id.slice('memory:'.length)),
    )
    await this.memories.recordAccess(scope, included)
    const value: KeptContext = built ? { ...assembled, built } : assembled
    // Recording access is not a change of content: the cache entry stays valid.
    this.remember(key, { at: now.getTime(), value, generatedAt: now })
    return { ...value, cached: false, generatedAt: now }
  }

  /**
   * Drops what is kept for an agent (every agent when none is named): its rows were deleted or
   * replaced, and a new owner of the same id must not be served them.
   */
  forget(agentId?: string): void {
    for (const kept of [this.cache, this.standing])
      for (const key of kept.keys()) if (agentId === undefined || scopeOf(key) === agentId) kept.delete(key)
  }

  /** Entries kept for an agent (its assembled contexts and standing sections). */
  cachedEntries(agentId: string): number {
    let count = 0
    for (const kept of [this.cache, this.standing])
      for (const key of kept.keys()) if (scopeOf(key) === agentId) count++
    return count
  }

  private builderOrFail(): ContextBuilder {
    if (!this.builder) throw new Error('memoryContext: no context builder is wired (createEngine wires one)')
    return this.builder
  }

  private remember(key: string, entry: { at: number; value: KeptContext; generatedAt: Date }): void {
    if (this.cache.size >= CONTEXT_CACHE_MAX_ENTRIES) {
      const oldest = this.cache.keys().next().value
      if (oldest !== undefined) this.cache.delete(oldest)
    }
    this.cache.set(key, entry)
  }
}

/** Both caches' keys are JSON arrays whose first element is the agent. */
function scopeOf(key: string): string {
  return (JSON.parse(key) as unknown[])[0] as string
}
