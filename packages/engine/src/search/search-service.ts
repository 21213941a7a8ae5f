import {
  type Clock,
  DEFAULT_LEXICAL_PLAN,
  type LexicalPlanConfig,
  type Limits,
  mmrRerank,
  NotFoundError,
  parseWith,
  SIMILARITY_IMPORTANCE_WEIGHTS,
  type StoredMessage,
  temporalDecay,
  weightedStrategyScores,
} from '@engram/core'
import { AgentVersionCache } from '../agents/agent-version-cache.ts'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { FullTextIndex } from '../ports/full-text.ts'
import type { GraphRepository } from '../ports/graph.ts'
import type { Logger } from '../ports/logger.ts'
import type { RecalledKnowledge, RecalledMemoryItem, RecallSources } from '../ports/recall-sources.ts'
import type { StoredSummary, SummaryRepository } from '../ports/summaries.ts'
import { NO_TELEMETRY, type Telemetry } from '../ports/telemetry.ts'
import { SUMMARY_SEARCH_SCAN, searchAutomaticSummaries } from '../summaries/summary-search.ts'
import { AgentFactsCache } from './agent-facts.ts'
import type { SearchEmbeddings, SearchMemories } from './collaborators.ts'
import { AccessBuffer, type AccessFlushConfig, AccessFlushConfigSchema } from './search-access.ts'
import { type Candidate, SearchCandidates } from './search-candidates.ts'
import {
  contextTurnsWorthReading,
  type DialogueReads,
  dialogueContext,
  hybridScores,
  sourceTurnContext,
} from './search-context.ts'
import { type BesideRead, type DialogueSources, timelineSources } from './search-dialogue.ts'
import { type GraphRow, graphExpansionScores, graphScopeHits } from './search-graph.ts'
import { type LexicalIndexDeps, LexicalSearch } from './search-lexical.ts'
import { poolScopeCandidates, recordPoolAccess } from './search-pools.ts'
import { searchRequest } from './search-request.ts'
import { type CandidateRows, readPendingRows } from './search-rows.ts'
import { inNamedPeriod, querySignals } from './search-signals.ts'
import type { ScoreComponents, SearchHit, SearchOptions } from './search-types.ts'

export { MAX_QUERY_CHARS, type SearchRequest, searchRequest } from './search-request.ts'
export * from './search-types.ts'

const DAY_MS = 86_400_000
/** Each side proposes this many times the requested hits before fusion (spec 002: candidates ×3). */
export const CANDIDATE_FACTOR = 3

/** What search is built from: its storage ports and the services it calls. */
export interface SearchServiceDeps extends LexicalIndexDeps {
  /** Candidates and the agent's own BM25 statistics. */
  fullText: FullTextIndex
  /** Rows by id, the dialogue around a turn, participants. */
  recall: RecallSources
  embeddings: SearchEmbeddings
  memories: SearchMemories
  limits: Limits
  clock: Clock
  /** The agents' write versions: the participants cache is kept per version. */
  writes: AgentWrites
  /** When common query terms stop selecting documents (see planLexicalQuery). */
  lexicalPlan?: LexicalPlanConfig
  /** The knowledge graph (issue 15): the GRAPH scope and graph expansion; without it both find nothing. */
  graph?: GraphRepository
  /** Where each search's duration is reported, per scope and strategy (issue 17's metrics). */
  telemetry?: Telemetry
  /** When search's memory accesses are written (search-access.ts); defaults DEFAULT_ACCESS_FLUSH. */
  accessFlush?: Partial<AccessFlushConfig>
  log?: Pick<Logger, 'warn'>
  /** How much of the conversations dialogue context reads (search-context.ts); default `index`. */
  dialogueReads?: DialogueReads
  /** When hybrid MESSAGES search reads its candidates' rows (search-rows.ts); default `pool`. */
  candidateRows?: CandidateRows
}

/**
 * Ranked search over an agent's memory items, conversation messages (turn by turn), summaries and
 * knowledge. Lexical scores are BM25 on the agent's own statistics from the full-text index;
 * vectors come from the embedding service. Every hit carries its score's components so a caller
 * can see why it ranked where it did.
 */
export class SearchService {
  readonly lexicalPlan: LexicalPlanConfig
  private readonly fullText: FullTextIndex
  private readonly recall: RecallSources
  private readonly embeddings: SearchEmbeddings
  private readonly memories: SearchMemories
  private readonly limits: Limits
  private readonly clock: Clock
  private readonly facts: AgentFactsCache
  private readonly settings: AgentVersionCache<Awaited<ReturnType<SearchMemories['settings']>>>
  private readonly sources: SearchCandidates
  private readonly lexical: LexicalSearch
  private readonly writes: AgentWrites
  private readonly graph: GraphRepository | null
  private readonly telemetry: Telemetry
  /** Search's memory accesses, buffered off the request path (the server starts its timer, close stops it). */
  readonly accesses: AccessBuffer
  /** `all` reads as before issue 18's hybrid18 slice (same hits): benches flip it to compare. */
  dialogueReads: DialogueReads
  /** `all` reads every candidate's row before scoring, as before hybridmsg18 (same hits): benches flip it. */
  candidateRows: CandidateRows
  /**
   * Searches run again with every row because a pool turn's row was gone or moved since the
   * timeline caught up: rare by design (each costs a second search); tests and benches read it.
   */
  candidateRowsRetries = 0

  constructor(deps: SearchServiceDeps) {
    this.dialogueReads = deps.dialogueReads ?? 'index'
    this.candidateRows = deps.candidateRows ?? 'pool'
    this.telemetry = deps.telemetry ?? NO_TELEMETRY
    this.accesses = new AccessBuffer(
      deps.memories,
      deps.clock,
      parseWith(AccessFlushConfigSchema, deps.accessFlush ?? {}, 'accessFlush'),
      deps.log,
    )
    this.graph = deps.graph ?? null
    this.fullText = deps.fullText
    this.recall = deps.recall
    this.embeddings = deps.embeddings
    this.memories = deps.memories
    this.limits = deps.limits
    this.clock = deps.clock
    this.lexicalPlan = deps.lexicalPlan ?? DEFAULT_LEXICAL_PLAN
    this.writes = deps.writes
    this.facts = new AgentFactsCache(deps.recall, deps.writes)
    this.settings = new AgentVersionCache((agentId) => deps.memories.settings(agentId), deps.writes)
    const lexical = new LexicalSearch(deps, this.lexicalPlan)
    this.lexical = lexical
    this.sources = new SearchCandidates(deps.recall, deps.embeddings, lexical, deps.clock)
  }

  private now(): Date {
    return this.clock.now()
  }

  /**
   * Term counts include deleted rows until they expire, and the participants and newest message
   * are only ever extended by new rows: both are forgotten at once after a bulk delete.
   */
  forgetStatistics(agentId?: string): void {
    this.fullText.invalidate()
    // One agent deleted or replaced: only its figures go (the others' are still true).
    if (agentId) {
      this.facts.forget(agentId)
      this.settings.forget(agentId)
    } else {
      this.facts.clear()
      this.settings.clear()
    }
  }

  /** What search holds of an agent between searches: its facts and its settings (0-2). */
  cachedFacts(agentId: string): number {
    return (this.facts.holds(agentId) ? 1 : 0) + (this.settings.holds(agentId) ? 1 : 0)
  }

  /**
   * Forgets one agent's participants and newest message after some of its rows were deleted or
   * changed in place (a conversation, a memory): they are only ever extended from new rows.
   */
  forgetAgent(agentId: string): void {
    this.facts.forget(agentId)
    this.settings.forget(agentId)
    // Other replicas forget theirs too (their facts would only ever be extended).
    this.writes.touch(agentId, 'reset')
  }

  /**
   * Drops search accesses not yet written of deleted memories, or of a deleted agent (every
   * agent's when none is named): the buffer keeps nothing of them (a flush could not bring a row
   * back anyway: it only increments rows that exist).
   */
  forgetAccesses(agentId?: string, memoryIds?: readonly string[]): void {
    this.accesses.forget(agentId, memoryIds)
  }

  /** The time of the agent's newest message (null without messages): where its windows count back from. */
  async newestMessageTime(agentId: string): Promise<Date | null> {
    return (await this.facts.of(agentId)).newest
  }

  /** Automatic summaries (issue 13 §3), searched with the SUMMARIES scope beside [CONTEXT SUMMARY] messages. */
  private automaticSummaries: Pick<SummaryRepository, 'list'> | null = null

  useAutomaticSummaries(repository: Pick<SummaryRepository, 'list'>): void {
    this.automaticSummaries = repository
  }

  /**
   * The SUMMARIES scope's automatic summaries as candidates: BM25 over their words and, when the
   * query has a vector, their own vectors (kind `summary`), so the scope is hybrid like the others.
   */
  private async automaticSummaryCandidates(
    scope: string,
    query: string,
    queryVector: Float32Array | null,
    options: SearchOptions,
    limit: number,
  ): Promise<Candidate[]> {
    if (!this.automaticSummaries) return []
    const similarity = new Map<string, number>()
    if (queryVector) {
      const index = await this.embeddings.index(scope, 'summary')
      // Every summary the scan reads may be the one asked for: they are few (a week's by default).
      if (index.dimensions === queryVector.length)
        for (const hit of await index.search(queryVector, SUMMARY_SEARCH_SCAN))
          similarity.set(hit.id, hit.similarity)
    }
    const found = await searchAutomaticSummaries(this.automaticSummaries, scope, query, {
      conversationId: options.conversationId ?? null,
      since: options.since ?? null,
      limit,
      similarity,
    })
    return found.map(({ summary, bm25, vector }) => ({
      scope: 'SUMMARIES' as const,
      id: `summary:${summary.id}`,
      bm25,
      feedback: 0,
      cooccurrence: 0,
      vector,
      text: summary.content,
      timestamp: summary.createdAt,
      importance: 0.5,
      confidence: 1,
      row: summary,
      conversationId: summary.conversationId,
    }))
  }

  /** The pools an agent may read (issue 17), read on every search: no stale membership. */
  private readablePools: ((agentId: string) => Promise<string[]>) | null = null

  /** Lets the POOLS scope search the shared pools an agent is a member of (READER or CONTRIBUTOR). */
  usePools(readablePools: (agentId: string) => Promise<string[]>): void {
    this.readablePools = readablePools
  }

  /** The POOLS scope's hits: each pool the agent reads, ranked by the pool's own search (search-pools.ts). */
  private async poolScope(agentId: string, query: string, options: SearchOptions, pool: number) {
    if (!this.readablePools) return []
    return poolScopeCandidates(
      // rankHits, not rank: the pool searches are part of this one, timed once with it.
      (poolAgent, poolOptions) => this.rankHits(poolAgent, query, poolOptions),
      await this.readablePools(agentId),
      options,
      Math.min(pool, this.limits.maxSearchLimit),
    )
  }

  async search(scope: string, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    return (await this.rank(scope, query, options)).hits
  }

  /**
   * The hits and the MMR λ they were ordered with (1: plain score order). Its duration is reported
   * once per scope searched: a search of MEMORIES and MESSAGES is what a caller of either waits
   * for (a real monotonic timer, not the clock: tests move the clock by hand, durations are real).
   */
  async rank(
    scope: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<{ hits: SearchHit[]; mmrLambda: number }> {
    const started = performance.now()
    const { hits, mmrLambda, scopes, strategy } = await this.rankHits(scope, query, options)
    const seconds = (performance.now() - started) / 1000
    for (const searched of scopes) this.telemetry.searchObserved(searched, strategy, seconds)
    return { hits, mmrLambda }
  }

  private async rankHits(
    scope: string,
    query: string,
    options: SearchOptions,
    rows: CandidateRows = this.candidateRows,
  ): Promise<{ hits: SearchHit[]; mmrLambda: number; scopes: readonly string[]; strategy: string }> {
    const { settings } = await this.settings.of(scope)
    const request = searchRequest(query, options, settings, this.limits)
    let sessionId: string | null = null
    if (options.conversationId) {
      sessionId = await this.recall.sessionIdOf(scope, options.conversationId)
      if (!sessionId) throw new NotFoundError('Session', options.conversationId)
    }
    const strategy = request.strategy
    const pool = Math.ceil(request.limit * (request.mmrLambda < 1 ? settings.mmrFetchMultiplier : 1))
    const candidateLimit = pool * CANDIDATE_FACTOR
    const needsVector = ['HYBRID', 'SIMILARITY', 'WEIGHTED', 'SIMILARITY_IMPORTANCE'].includes(strategy)
    const queryVector = needsVector ? await this.embeddings.embedQuery(scope, query) : null
    const facts = await this.facts.of(scope)
    const signals = querySignals(query, request, facts, this.now())
    // The conversation window counts back from the newest message, never from the clock.
    const windowStart =
      request.windowDays > 0 && facts.newest
        ? new Date(facts.newest.getTime() - request.windowDays * DAY_MS)
        : null
    const since =
      windowStart && (!options.since || windowStart > options.since) ? windowStart : (options.since ?? null)
    const filtered: SearchOptions = { ...options, since }

    const scored: { candidate: Candidate; score: number; components: ScoreComponents }[] = []
    for (const searchScope of request.scopes) {
      if (searchScope === 'GRAPH' && this.graph) {
        // Whole query: a participant's name is exactly what the graph is searched by.
        scored.push(
          ...(await graphScopeHits(this.graph, this.recall, scope, query, this.now(), candidateLimit)),
        )
        continue
      }
      if (searchScope === 'POOLS') {
        scored.push(...(await this.poolScope(scope, query, options, pool)))
        continue
      }
      // Dialogue context reads the turns beside the candidates: started with the candidates' ids,
      // while their rows are read (on Postgres two round trips at once; the same rows either way).
      let ahead: BesideRead | null = null
      const besideAhead =
        strategy === 'HYBRID' &&
        searchScope === 'MESSAGES' &&
        this.dialogueReads !== 'all' &&
        (request.weights.context > 0 || request.weights.episode > 0)
          ? (ids: readonly string[]) => {
              // From a timeline held, `pool` reads the neighbours in process (nothing to overlap).
              if (rows === 'pool' && this.dialogueReads === 'index' && this.lexical.timeline(scope)) return
              const read = this.dialogueSources(scope, rows).turnsBeside(ids, request.contextTurns)
              // Awaited by dialogue context unless no candidate scored: never left unhandled.
              read.catch(() => {})
              ahead = { ids: new Set(ids), reach: request.contextTurns, rows: read }
            }
          : null
      const candidates = [
        ...(await this.sources.candidates(scope, searchScope, {
          query: signals.lexicalQuery,
          queryVector,
          strategy,
          candidateLimit,
          sessionId,
          options: filtered,
          weights: request.weights,
          ...(besideAhead ? { proposed: besideAhead } : {}),
          // Rows for the pool only, unless scoring reads a turn's text (periods its words
          // mention) before the pool's cut; a named participant needs the timeline's speakers.
          ...(rows === 'pool' &&
          strategy === 'HYBRID' &&
          !(request.mentionedTimes && signals.windows.length > 0)
            ? {
                timeline: {
                  held: () => this.lexical.timeline(scope),
                  speakers: signals.participants.size > 0,
                },
              }
            : {}),
        })),
        ...(searchScope === 'SUMMARIES'
          ? await this.automaticSummaryCandidates(
              scope,
              signals.lexicalQuery,
              queryVector,
              filtered,
              candidateLimit,
            )
          : []),
      ]
      // Graph expansion (issue 15): what the named entities' neighbourhood was learnt from joins
      // the candidates; its score is added to HYBRID's own below, before dialogue context, so the
      // turns beside a graph-found turn gain from it as from a word match.
      const graphScores =
        strategy === 'HYBRID' &&
        request.weights.graph > 0 &&
        this.graph &&
        (searchScope === 'MESSAGES' || searchScope === 'MEMORIES')
          ? await graphExpansionScores(
              this.graph,
              scope,
              query,
              searchScope === 'MESSAGES' ? 'messages' : 'memories',
              this.now(),
              candidateLimit,
            )
          : new Map<string, number>()
      if (graphScores.size > 0) {
        const known = new Set(candidates.map((c) => c.id))
        const graphOnly = [...graphScores.keys()].filter((id) => !known.has(id))
        candidates.push(
          ...(searchScope === 'MEMORIES'
            ? await this.sources.memoryCandidates(scope, graphOnly, filtered)
            : (await this.sources.messageCandidates(scope, graphOnly, searchScope, since)).filter(
                (c) =>
                  (!sessionId || c.sessionId === sessionId) &&
                  (!options.until || c.timestamp <= options.until),
              )),
        )
      }
      const hybrid = hybridScores(candidates, request.weights)
      const decayOn =
        options.decay ??
        (strategy === 'HYBRID' && (searchScope === 'MEMORIES' || searchScope === 'SUMMARIES'))
      const now = this.now()
      const byRecency = [...candidates].sort((a, b) => b.timestamp.getTime() - a.timestamp.getTime())
      const recencyRank = new Map(byRecency.map((c, i) => [c.id, 1 - i / candidateLimit]))
      const weighted =
        strategy === 'WEIGHTED'
          ? weightedStrategyScores({
              byRecency: byRecency.map((c) => c.id),
              bySimilarity: candidates
                .filter((c) => c.vector > 0)
                .map((c) => ({ id: c.id, similarity: c.vector })),
              byImportance: [...candidates]
                .sort((a, b) => b.importance - a.importance)
                .map((c) => ({ id: c.id, importance: c.importance })),
              candidateLimit,
              weights: {
                recency: request.weights.recency,
                similarity: request.weights.similarity,
                importance: request.weights.importance,
              },
            })
          : null
      const base = new Map<string, number>()
      for (const c of candidates) {
        let score: number
        switch (strategy) {
          case 'LEXICAL':
            score = c.bm25
            break
          case 'SIMILARITY':
            score = c.vector
            break
          case 'RECENCY':
            score = recencyRank.get(c.id) ?? 0
            break
          case 'IMPORTANCE':
            score = c.importance
            break
          case 'WEIGHTED':
            score = weighted?.get(c.id)?.score ?? 0
            break
          case 'SIMILARITY_IMPORTANCE':
            score =
              SIMILARITY_IMPORTANCE_WEIGHTS.similarity * c.vector +
              SIMILARITY_IMPORTANCE_WEIGHTS.importance * c.importance
            break
          default:
            // Graph expansion's share: weights.graph × the graph score (0..1), beside HYBRID's own
            // (at most bm25 + vector = 1), as dialogue context adds its share.
            score = (hybrid.get(c.id) ?? 0) + request.weights.graph * (graphScores.get(c.id) ?? 0)
        }
        base.set(c.id, score)
      }
      const dialogue =
        strategy === 'HYBRID' &&
        searchScope === 'MESSAGES' &&
        (request.weights.context > 0 || request.weights.episode > 0)
          ? await dialogueContext(
              this.dialogueSources(scope, rows),
              base,
              candidates,
              request,
              this.dialogueReads,
              ahead,
            )
          : strategy === 'HYBRID' && searchScope === 'MEMORIES' && request.weights.context > 0
            ? {
                context: await sourceTurnContext(
                  this.recall,
                  this.dialogueSources(scope, rows),
                  this.sources,
                  scope,
                  signals.lexicalQuery,
                  {
                    ...request,
                    candidateLimit,
                    sessionId,
                    reads: this.dialogueReads,
                  },
                ),
                episode: new Map<string, number>(),
              }
            : { context: new Map<string, number>(), episode: new Map<string, number>() }
      const scoreParts = (c: Candidate) => {
        const contextScore = dialogue.context.get(c.id) ?? 0
        const episodeScore = dialogue.episode.get(c.id) ?? 0
        const decay = decayOn
          ? temporalDecay(now.getTime() - c.timestamp.getTime(), settings.temporalDecayHalfLifeDays)
          : 1
        const time = inNamedPeriod(c, signals.windows, request.mentionedTimes) ? 1 + request.weights.time : 1
        const speaker = c.speaker && signals.participants.has(c.speaker) ? 1 + request.weights.speaker : 1
        const score =
          ((base.get(c.id) ?? 0) + request.weights.context * contextScore + episodeScore) *
          time *
          speaker *
          decay
        return { contextScore, episodeScore, decay, time, speaker, score }
      }
      const contextOnly = [...dialogue.context.keys()].filter((id) => !base.has(id))
      // The candidates are scored first: a turn brought in by context alone is only read when
      // the most its score can be reaches the pool's cut among them (contextTurnsWorthReading).
      const known = candidates.map((c) => ({ c, parts: scoreParts(c) }))
      const worthReading =
        this.dialogueReads === 'all' || decayOn
          ? contextOnly
          : contextTurnsWorthReading(contextOnly, dialogue, {
              scores: [...scored.map((s) => s.score), ...known.map((k) => k.parts.score)],
              pool,
              threshold: request.threshold ?? null,
              weights: request.weights,
              windows: signals.windows.length > 0,
              participants: signals.participants.size > 0,
            })
      const joined = [
        ...known,
        ...(searchScope === 'MEMORIES'
          ? await this.sources.memoryCandidates(scope, worthReading, filtered)
          : await this.sources.messageCandidates(scope, worthReading, searchScope, filtered.since ?? null)
        ).map((c) => ({ c, parts: scoreParts(c) })),
      ]
      for (const {
        c,
        parts: { contextScore, episodeScore, decay, time, speaker, score },
      } of joined) {
        scored.push({
          candidate: c,
          score,
          components: {
            bm25: c.bm25,
            vector: c.vector,
            importance: c.importance,
            recency: recencyRank.get(c.id) ?? 0,
            confidence: c.confidence,
            context: contextScore,
            episode: episodeScore,
            time,
            speaker,
            feedback: c.feedback,
            cooccurrence: c.cooccurrence,
            graph: graphScores.get(c.id) ?? 0,
            decay,
          },
        })
      }
    }
    const ranked = scored
      .filter((s) => s.score > 0 || strategy === 'RECENCY' || strategy === 'IMPORTANCE')
      .filter((s) => request.threshold == null || s.score >= request.threshold)
      .sort((a, b) => b.score - a.score)
      .slice(0, pool)
    // The pool's turns still without a row are read now; one gone or moved since the timeline
    // caught up means searching again with every row read first (the same answer as before).
    const pending = ranked.map((s) => s.candidate)
    if (!(await readPendingRows(this.recall, scope, pending))) {
      this.candidateRowsRetries++
      return this.rankHits(scope, query, options, 'all')
    }
    // MMR puts a hit below a lower-scored one when it repeats a hit above it (0.61 listed under
    // 0.46, issue 10): each hit carries the figures of that choice, so the order can be read off
    // the payload. Without MMR the same figures describe plain score order.
    const best = ranked.reduce((max, s) => Math.max(max, s.score), Number.NEGATIVE_INFINITY)
    const scale = best > 0 ? best : 1
    const chosen =
      request.mmrLambda < 1
        ? mmrRerank(
            ranked.map((s) => ({ item: s, score: s.score, text: s.candidate.text })),
            request.limit,
            request.mmrLambda,
          ).map((m) => ({
            ...m.item,
            relevance: m.relevance,
            redundancy: m.redundancy,
            redundantWith: m.redundantWith,
            mmrScore: m.mmrScore,
          }))
        : ranked.slice(0, request.limit).map((s) => ({
            ...s,
            relevance: s.score / scale,
            redundancy: 0,
            redundantWith: null,
            mmrScore: s.score / scale,
          }))

    const hits: SearchHit[] = chosen.map(
      ({ candidate: c, score, components, relevance, redundancy, redundantWith, mmrScore }, index) => ({
        scope: c.scope,
        id: c.id,
        rank: index + 1,
        score,
        relevance,
        redundancy,
        redundantWithRank: redundantWith === null ? null : redundantWith + 1,
        mmrScore,
        components,
        text: c.text,
        timestamp: c.timestamp,
        ...(c.scope === 'MEMORIES' ? { memory: c.row as RecalledMemoryItem } : {}),
        ...(c.scope === 'SUMMARIES' && c.id.startsWith('summary:')
          ? { summary: c.row as StoredSummary, conversationId: c.conversationId }
          : c.scope === 'MESSAGES' || c.scope === 'SUMMARIES'
            ? { message: c.row as StoredMessage, conversationId: c.conversationId }
            : {}),
        ...(c.scope === 'KNOWLEDGE' ? { knowledge: c.row as RecalledKnowledge } : {}),
        ...(c.scope === 'POOLS' ? { memory: c.row as RecalledMemoryItem, poolId: c.poolId } : {}),
        ...(c.scope === 'GRAPH' ? (c.row as GraphRow) : {}),
      }),
    )
    if (options.track !== false) await this.recordAccess(scope, hits)
    return { hits, mmrLambda: request.mmrLambda, scopes: request.scopes, strategy }
  }

  /**
   * Where dialogue context reads an agent's conversations: its timeline held beside the messages'
   * lexical index (`index`, looked up at each read: the candidates' search brings it up to date
   * first), or the store. With `pool` rows the timeline's neighbours are read directly.
   */
  private dialogueSources(agentId: string, rows: CandidateRows): DialogueSources {
    return this.dialogueReads === 'index'
      ? timelineSources(this.recall, () => this.lexical.timeline(agentId), rows === 'pool')
      : this.recall
  }

  private async recordAccess(agentId: string, hits: SearchHit[]): Promise<void> {
    const memoryHits = hits.filter((h) => h.scope === 'MEMORIES' && h.memory)
    if (memoryHits.length) {
      const updated = await this.accesses.record(
        agentId,
        memoryHits.map((h) => h.memory as RecalledMemoryItem),
      )
      for (const [i, hit] of memoryHits.entries()) hit.memory = updated[i] ?? hit.memory
    }
    await recordPoolAccess(this.accesses, hits)
    const knowledgeIds = hits.filter((h) => h.scope === 'KNOWLEDGE').map((h) => Number(h.id))
    if (knowledgeIds.length) {
      // A search hit is a use for decay purposes (it was recalled), not a confirmation: confidence
      // only grows through recordKnowledgeUse.
      await this.recall.recordKnowledgeRecall(agentId, knowledgeIds, this.now())
    }
  }
}
