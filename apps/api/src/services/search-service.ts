import {
  CONTEXT_SUMMARY_PREFIX,
  DEFAULT_LEXICAL_PLAN,
  episodeContext,
  type FieldIssue,
  type LexicalPlanConfig,
  type Limits,
  type MemorySettings,
  mentionedTimes,
  mmrRerank,
  NotFoundError,
  namedParticipants,
  neighbourContext,
  queryTerms,
  SIMILARITY_IMPORTANCE_WEIGHTS,
  type StoredMessage,
  type TimeWindow,
  temporalDecay,
  timeWindows,
  ValidationError,
  weightedStrategyScores,
  withoutParticipants,
} from '@engram/core'
import type { AgentWrites, EmbeddingKind, EmbeddingService } from '@engram/engine'
import type { Database, Knowledge as KnowledgeRow } from '@engram/store-sqlite'
import { AgentTermStatistics, toMessage } from '@engram/store-sqlite'
import { type MemoryItemService, type MemoryItemView, toMemoryItem } from './memory-item-service.ts'
import { episodesOf, neighbours, storedTime } from './search-dialogue.ts'
import { LexicalSearch, tokenizer } from './search-lexical.ts'
import {
  DEFAULT_CONTEXT_TURNS,
  DEFAULT_MENTIONED_TIMES,
  DEFAULT_SEARCH_WEIGHTS,
  MAX_CONTEXT_TURNS,
  MAX_WINDOW_DAYS,
  type ScoreComponents,
  type SearchHit,
  type SearchOptions,
  type SearchScope,
  type SearchStrategy,
  type SearchWeights,
} from './search-types.ts'

export * from './search-types.ts'

/** The share of a candidate's score a turn beside it gains, over the distance. */
const NEIGHBOUR_SHARE = 0.5
/** Participants (speakers and memory users) recognised in queries, per agent, at most. */
const MAX_PARTICIPANTS = 1_000
const DAY_MS = 86_400_000
/** Each side proposes this many times the requested hits before fusion (spec 002: candidates ×3). */
export const CANDIDATE_FACTOR = 3
/** Filters are applied after candidates are found: ask for this many more when they are on. */
const FILTERED_OVERFETCH = 10
export const MAX_QUERY_CHARS = 2_000

interface Candidate {
  scope: SearchScope
  id: string
  bm25: number
  feedback: number
  cooccurrence: number
  vector: number
  text: string
  timestamp: Date
  importance: number
  confidence: number
  row: MemoryItemView | StoredMessage | KnowledgeRow
  conversationId?: string
  sessionId?: string
  /** The turn's speaker, or the memory's user. */
  speaker?: string | null
}

/** What the query says besides its words: the periods and participants it names. */
interface QuerySignals {
  /** The query's words for lexical matching (named participants left out). */
  lexicalQuery: string
  windows: TimeWindow[]
  participants: Set<string>
}

/** An agent's figures the query signals need, kept per write version. */
interface AgentFacts {
  version: string
  participants: string[]
  newest: Date | null
  topMessageId: number
  topMemoryId: number
}

const KIND_OF: Record<SearchScope, EmbeddingKind> = {
  MEMORIES: 'memory',
  MESSAGES: 'message',
  SUMMARIES: 'message',
  KNOWLEDGE: 'knowledge',
}

/**
 * Ranked search over an agent's memory items, conversation messages (turn by turn), summaries and
 * knowledge. Lexical scores come from SQLite FTS5 bm25(); vectors from the embedding service.
 * Every hit carries its score's components so a caller can see why it ranked where it did.
 */
export class SearchService {
  constructor(
    private readonly db: Database,
    private readonly limits: Limits,
    private readonly embeddings: EmbeddingService,
    private readonly memories: MemoryItemService,
    private readonly now: () => Date,
    private readonly writes: AgentWrites,
    readonly lexicalPlan: LexicalPlanConfig = DEFAULT_LEXICAL_PLAN,
  ) {
    this.terms = new AgentTermStatistics(db)
    this.lexicalSearch = new LexicalSearch(db, this.terms, lexicalPlan)
  }

  private readonly lexicalSearch: LexicalSearch
  private readonly terms: AgentTermStatistics
  private readonly facts = new Map<string, AgentFacts>()

  /**
   * Term counts include deleted rows until they expire, and the participants and newest message
   * are only ever extended by new rows: both are forgotten at once after a bulk delete.
   */
  forgetStatistics(): void {
    this.terms.clear()
    this.facts.clear()
  }

  /**
   * Forgets one agent's participants and newest message after some of its rows were deleted or
   * changed in place (a conversation, a memory): they are only ever extended from new rows.
   */
  forgetAgent(agentId: string): void {
    this.facts.delete(agentId)
  }

  /**
   * The agent's participants (speakers of its messages, users of its memories) and its newest
   * message time. Recomputed only from the rows added since the last look (a seek on the agent's
   * ids), so a search after each new message does not rescan the agent.
   */
  private async agentFacts(agentId: string): Promise<AgentFacts> {
    const version = this.writes.version(agentId)
    const known = this.facts.get(agentId)
    if (known && known.version === version) return known
    const from = known ?? { participants: [], newest: null, topMessageId: 0, topMemoryId: 0 }
    const messages = await this.db.$queryRawUnsafe<
      { speaker: string | null; newest: number | bigint | string | null; top: number | bigint | null }[]
    >(
      `SELECT "speaker" AS speaker, max("timestamp") AS newest, max("id") AS top FROM "Message"
        WHERE "agentId" = ? AND "id" > ? GROUP BY "speaker"`,
      agentId,
      from.topMessageId,
    )
    const users = await this.db.$queryRawUnsafe<{ userId: string | null; top: number | bigint | null }[]>(
      `SELECT "userId" AS userId, max("id") AS top FROM "MemoryItem"
        WHERE "agentId" = ? AND "id" > ? AND "userId" IS NOT NULL GROUP BY "userId"`,
      agentId,
      from.topMemoryId,
    )
    const participants = new Set(from.participants)
    let newest = from.newest
    let topMessageId = from.topMessageId
    let topMemoryId = from.topMemoryId
    for (const row of messages) {
      if (row.speaker && participants.size < MAX_PARTICIPANTS) participants.add(row.speaker)
      const time = row.newest == null ? null : storedTime(row.newest)
      if (time && (!newest || time > newest)) newest = time
      topMessageId = Math.max(topMessageId, Number(row.top ?? 0))
    }
    for (const row of users) {
      if (row.userId && participants.size < MAX_PARTICIPANTS) participants.add(row.userId)
      topMemoryId = Math.max(topMemoryId, Number(row.top ?? 0))
    }
    const facts = { version, participants: [...participants], newest, topMessageId, topMemoryId }
    this.facts.set(agentId, facts)
    return facts
  }

  /** The time of the agent's newest message (null without messages): where its windows count back from. */
  async newestMessageTime(agentId: string): Promise<Date | null> {
    return (await this.agentFacts(agentId)).newest
  }

  /** The periods and participants a HYBRID query names (nothing for the other strategies). */
  private querySignals(
    query: string,
    request: { strategy: SearchStrategy; weights: SearchWeights },
    facts: AgentFacts,
  ): QuerySignals {
    const none: QuerySignals = { lexicalQuery: query, windows: [], participants: new Set() }
    if (request.strategy !== 'HYBRID') return none
    // Relative periods ("last week") are resolved against the agent's newest message, like the
    // conversation window: an imported history behaves as it did when it was live.
    const reference = facts.newest ?? this.now()
    const windows = request.weights.time > 0 ? timeWindows(query, reference) : []
    const named = request.weights.speaker > 0 ? namedParticipants(query, facts.participants) : []
    // A named participant is a structured match (the speaker factor), not a word to find in text:
    // names in the lexical query pulled in every turn that mentions the person.
    const stripped = named.length ? withoutParticipants(query, named) : query
    return {
      lexicalQuery: stripped.trim().length > 0 ? stripped : query,
      windows,
      participants: new Set(named),
    }
  }

  async search(scope: string, query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    return (await this.rank(scope, query, options)).hits
  }

  /** The hits and the MMR λ they were ordered with (1: plain score order). */
  async rank(
    scope: string,
    query: string,
    options: SearchOptions = {},
  ): Promise<{ hits: SearchHit[]; mmrLambda: number }> {
    const { settings } = await this.memories.settings(scope)
    const request = this.validate(query, options, settings)
    let sessionId: string | null = null
    if (options.conversationId) {
      const session = await this.db.session.findUnique({
        where: { agentId_conversationId: { agentId: scope, conversationId: options.conversationId } },
      })
      if (!session) throw new NotFoundError('Session', options.conversationId)
      sessionId = session.id
    }
    const strategy = request.strategy
    const pool = Math.ceil(request.limit * (request.mmrLambda < 1 ? settings.mmrFetchMultiplier : 1))
    const candidateLimit = pool * CANDIDATE_FACTOR
    const needsVector = ['HYBRID', 'SIMILARITY', 'WEIGHTED', 'SIMILARITY_IMPORTANCE'].includes(strategy)
    const queryVector = needsVector ? await this.embeddings.embedQuery(scope, query) : null
    const facts = await this.agentFacts(scope)
    const signals = this.querySignals(query, request, facts)
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
      const candidates = await this.candidates(scope, searchScope, {
        query: signals.lexicalQuery,
        queryVector,
        strategy,
        candidateLimit,
        sessionId,
        options: filtered,
        weights: request.weights,
      })
      const lexicalScore = (c: Candidate) =>
        c.bm25 + request.weights.feedback * c.feedback + request.weights.cooccurrence * c.cooccurrence
      const best = Math.max(0, ...candidates.map(lexicalScore))
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
            score =
              request.weights.bm25 * (best > 0 ? lexicalScore(c) / best : 0) +
              request.weights.vector * c.vector
        }
        base.set(c.id, score)
      }
      const dialogue =
        strategy === 'HYBRID' &&
        searchScope === 'MESSAGES' &&
        (request.weights.context > 0 || request.weights.episode > 0)
          ? await this.dialogueContext(base, candidates, request)
          : { context: new Map<string, number>(), episode: new Map<string, number>() }
      const contextOnly = [...dialogue.context.keys()].filter((id) => !base.has(id))
      const joined = [
        ...candidates,
        ...(await this.messageCandidates(scope, contextOnly, searchScope, filtered.since ?? null)),
      ]
      for (const c of joined) {
        const contextScore = dialogue.context.get(c.id) ?? 0
        const episodeScore = dialogue.episode.get(c.id) ?? 0
        const decay = decayOn
          ? temporalDecay(now.getTime() - c.timestamp.getTime(), settings.temporalDecayHalfLifeDays)
          : 1
        const time = this.inNamedPeriod(c, signals.windows, request.mentionedTimes)
          ? 1 + request.weights.time
          : 1
        const speaker = c.speaker && signals.participants.has(c.speaker) ? 1 + request.weights.speaker : 1
        const score =
          ((base.get(c.id) ?? 0) + request.weights.context * contextScore + episodeScore) *
          time *
          speaker *
          decay
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
        ...(c.scope === 'MEMORIES' ? { memory: c.row as MemoryItemView } : {}),
        ...(c.scope === 'MESSAGES' || c.scope === 'SUMMARIES'
          ? { message: c.row as StoredMessage, conversationId: c.conversationId }
          : {}),
        ...(c.scope === 'KNOWLEDGE' ? { knowledge: c.row as KnowledgeRow } : {}),
      }),
    )
    if (options.track !== false) await this.recordAccess(scope, hits)
    return { hits, mmrLambda: request.mmrLambda }
  }

  private validate(query: string, options: SearchOptions, settings: MemorySettings) {
    const issues: FieldIssue[] = []
    if (query.trim().length === 0 || query.length > MAX_QUERY_CHARS)
      issues.push({
        field: 'query',
        message: `must be 1 to ${MAX_QUERY_CHARS} characters`,
        limit: MAX_QUERY_CHARS,
      })
    const limit = options.limit ?? settings.recallTopK
    if (!Number.isInteger(limit) || limit < 1 || limit > this.limits.maxSearchLimit)
      issues.push({
        field: 'limit',
        message: `must be an integer from 1 to ${this.limits.maxSearchLimit}`,
        limit: this.limits.maxSearchLimit,
      })
    const scopes = [...new Set(options.scopes?.length ? options.scopes : (['MESSAGES'] as SearchScope[]))]
    const weights: SearchWeights = {
      ...DEFAULT_SEARCH_WEIGHTS,
      ...Object.fromEntries(Object.entries(options.weights ?? {}).filter(([, v]) => v != null)),
    }
    for (const [field, value] of Object.entries(weights)) {
      if (!(value >= 0 && value <= 1))
        issues.push({ field: `weights.${field}`, message: 'must be between 0 and 1', limit: '0..1' })
    }
    const strategy = options.strategy ?? 'HYBRID'
    const mmrLambda = options.mmrLambda ?? (strategy === 'HYBRID' ? settings.mmrLambda : 1)
    if (!(mmrLambda >= 0 && mmrLambda <= 1))
      issues.push({ field: 'mmrLambda', message: 'must be between 0 and 1', limit: '0..1' })
    if (options.threshold != null && !Number.isFinite(options.threshold))
      issues.push({ field: 'threshold', message: 'must be a finite number' })
    if (options.since && options.until && options.since > options.until)
      issues.push({ field: 'filters.since', message: 'must not be after filters.until' })
    const contextTurns = options.contextTurns ?? DEFAULT_CONTEXT_TURNS
    if (!Number.isInteger(contextTurns) || contextTurns < 1 || contextTurns > MAX_CONTEXT_TURNS)
      issues.push({
        field: 'contextTurns',
        message: `must be an integer from 1 to ${MAX_CONTEXT_TURNS}`,
        limit: MAX_CONTEXT_TURNS,
      })
    const windowDays = options.windowDays ?? settings.conversationWindowDays
    if (!Number.isInteger(windowDays) || windowDays < 0 || windowDays > MAX_WINDOW_DAYS)
      issues.push({
        field: 'windowDays',
        message: `must be an integer from 0 (all history) to ${MAX_WINDOW_DAYS}`,
        limit: MAX_WINDOW_DAYS,
      })
    if (issues.length) throw new ValidationError(issues)
    return {
      limit,
      scopes,
      weights,
      strategy,
      mmrLambda,
      threshold: options.threshold ?? null,
      contextTurns,
      windowDays,
      mentionedTimes: options.mentionedTimes ?? DEFAULT_MENTIONED_TIMES,
    }
  }

  /**
   * Whether a hit falls in a period the query names: a turn by its time, a memory by when it
   * became true (validFrom: a memory stored today about May is about May), or (optionally) by a
   * period its text names.
   */
  private inNamedPeriod(c: Candidate, windows: readonly TimeWindow[], mentioned: boolean): boolean {
    if (windows.length === 0) return false
    const time = c.scope === 'MEMORIES' ? (c.row as MemoryItemView).validFrom : c.timestamp
    if (windows.some((w) => time >= w.start && time < w.end)) return true
    if (!mentioned) return false
    return mentionedTimes(c.text, c.timestamp).some((m) =>
      windows.some((w) => m.start < w.end && w.start < m.end),
    )
  }

  /** One scope's candidates, each with its BM25 and vector scores (0 when it was not proposed by that side). */
  private async candidates(
    agentId: string,
    scope: SearchScope,
    request: {
      query: string
      queryVector: Float32Array | null
      strategy: SearchStrategy
      candidateLimit: number
      sessionId: string | null
      options: SearchOptions
      weights: SearchWeights
    },
  ): Promise<Candidate[]> {
    const { strategy, candidateLimit } = request
    const filtered = this.isFiltered(scope, request.options, request.sessionId)
    const wanted = filtered ? candidateLimit * FILTERED_OVERFETCH : candidateLimit
    const lexical = new Map<string, number>()
    const feedback = new Map<string, number>()
    const cooccurrence = new Map<string, number>()
    const semantic = new Map<string, number>()
    const ordered: string[] = []
    if (strategy === 'HYBRID' || strategy === 'LEXICAL' || strategy === 'WEIGHTED') {
      const terms = queryTerms(request.query).flatMap((word) => tokenizer().terms(word))
      const found = await this.lexicalSearch.lexical(agentId, scope, terms, wanted, request.sessionId)
      for (const [id, bm25] of found.scores) lexical.set(id, bm25)
      if (strategy === 'HYBRID' && found.scores.length > 0) {
        if (request.weights.feedback > 0) {
          for (const [id, score] of await this.lexicalSearch.feedback(
            agentId,
            scope,
            terms,
            found,
            wanted,
            request.sessionId,
          ))
            feedback.set(id, score)
        }
        if (request.weights.cooccurrence > 0) {
          for (const [id, score] of await this.lexicalSearch.cooccurrence(
            agentId,
            terms,
            found,
            wanted,
            request.sessionId,
          ))
            cooccurrence.set(id, score)
        }
      }
    }
    if (request.queryVector) {
      const index = await this.embeddings.index(agentId, KIND_OF[scope])
      if (index.dimensions === request.queryVector.length) {
        for (const hit of index.search(request.queryVector, wanted))
          semantic.set(hit.id, Math.max(0, hit.similarity))
      }
    }
    if (strategy === 'RECENCY' || strategy === 'WEIGHTED')
      ordered.push(...(await this.ordered(agentId, scope, 'recency', wanted)))
    if (strategy === 'IMPORTANCE' || strategy === 'WEIGHTED')
      ordered.push(...(await this.ordered(agentId, scope, 'importance', wanted)))
    // The expansions' hits join the lexical side: a turn found only through them ranks on them.
    const lexicalTotal = new Map(lexical)
    for (const [id, score] of feedback)
      lexicalTotal.set(id, (lexicalTotal.get(id) ?? 0) + request.weights.feedback * score)
    for (const [id, score] of cooccurrence)
      lexicalTotal.set(id, (lexicalTotal.get(id) ?? 0) + request.weights.cooccurrence * score)
    const ids = [...new Set([...lexicalTotal.keys(), ...semantic.keys(), ...ordered])]
    const rows = await this.load(agentId, scope, ids, request)
    // Filters may have removed some; each side keeps its best candidateLimit.
    const keep = new Set<string>()
    const keepBest = (scores: Iterable<string>) => {
      let n = 0
      for (const id of scores) if (rows.has(id) && n++ < candidateLimit) keep.add(id)
    }
    keepBest([...lexicalTotal.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id))
    keepBest([...semantic.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id))
    keepBest(ordered)
    return [...keep].map((id) => {
      const c = rows.get(id) as Candidate
      return {
        ...c,
        bm25: lexical.get(id) ?? 0,
        feedback: feedback.get(id) ?? 0,
        cooccurrence: cooccurrence.get(id) ?? 0,
        vector: semantic.get(id) ?? 0,
      }
    })
  }

  private isFiltered(scope: SearchScope, options: SearchOptions, sessionId: string | null): boolean {
    if (scope === 'MEMORIES') {
      const f = options.memoryFilter ?? {}
      return Boolean(
        f.userId ||
          f.categories?.length ||
          f.tags?.length ||
          f.minImportance != null ||
          f.createdAfter ||
          f.createdBefore ||
          f.pinned != null,
      )
    }
    if (scope === 'KNOWLEDGE') return false
    return Boolean(sessionId || options.since || options.until)
  }

  private async ordered(
    agentId: string,
    scope: SearchScope,
    by: 'recency' | 'importance',
    limit: number,
  ): Promise<string[]> {
    if (scope === 'MEMORIES') {
      const rows = await this.db.memoryItem.findMany({
        where: this.memories.where(agentId, {}),
        orderBy:
          by === 'recency'
            ? [{ createdAt: 'desc' }, { id: 'desc' }]
            : [{ importance: 'desc' }, { createdAt: 'desc' }],
        take: limit,
        select: { id: true },
      })
      return rows.map((r) => String(r.id))
    }
    if (scope === 'KNOWLEDGE') {
      const rows = await this.db.knowledge.findMany({
        where: { agentId },
        orderBy: by === 'recency' ? [{ updatedAt: 'desc' }] : [{ confidence: 'desc' }],
        take: limit,
        select: { id: true },
      })
      return rows.map((r) => String(r.id))
    }
    // Messages carry no importance of their own: recency orders both lists.
    const rows = await this.db.message.findMany({
      where: {
        agentId,
        content:
          scope === 'SUMMARIES'
            ? { startsWith: CONTEXT_SUMMARY_PREFIX }
            : { not: { startsWith: CONTEXT_SUMMARY_PREFIX } },
      },
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      take: limit,
      select: { id: true },
    })
    return rows.map((r) => String(r.id))
  }

  /** Rows for candidate ids that pass the request's filters, as candidates. */
  private async load(
    agentId: string,
    scope: SearchScope,
    ids: string[],
    request: { sessionId: string | null; options: SearchOptions },
  ): Promise<Map<string, Candidate>> {
    const out = new Map<string, Candidate>()
    if (ids.length === 0) return out
    const numeric = ids.map(Number)
    const { options, sessionId } = request
    if (scope === 'MEMORIES') {
      const rows = await this.db.memoryItem.findMany({
        where: { ...this.memories.where(agentId, options.memoryFilter ?? {}), id: { in: numeric } },
      })
      for (const row of rows) {
        const item = toMemoryItem(row)
        out.set(item.id, {
          scope,
          id: item.id,
          bm25: 0,
          feedback: 0,
          cooccurrence: 0,
          vector: 0,
          text: item.content,
          timestamp: item.updatedAt,
          importance: item.importance,
          confidence: item.confidence,
          row: item,
          speaker: item.userId ?? null,
        })
      }
      return out
    }
    if (scope === 'KNOWLEDGE') {
      const rows = await this.db.knowledge.findMany({ where: { agentId, id: { in: numeric } } })
      for (const row of rows) {
        out.set(String(row.id), {
          scope,
          id: String(row.id),
          bm25: 0,
          feedback: 0,
          cooccurrence: 0,
          vector: 0,
          text: `${row.key}: ${row.value}`,
          timestamp: row.updatedAt,
          importance: row.confidence,
          confidence: row.confidence,
          row,
        })
      }
      return out
    }
    const rows = await this.db.message.findMany({
      where: {
        agentId,
        id: { in: numeric },
        content:
          scope === 'SUMMARIES'
            ? { startsWith: CONTEXT_SUMMARY_PREFIX }
            : { not: { startsWith: CONTEXT_SUMMARY_PREFIX } },
        ...(sessionId ? { sessionId } : {}),
        timestamp: {
          ...(options.since ? { gte: options.since } : {}),
          ...(options.until ? { lte: options.until } : {}),
        },
      },
      include: { session: { select: { conversationId: true } } },
    })
    for (const row of rows) {
      out.set(String(row.id), {
        scope,
        id: String(row.id),
        bm25: 0,
        feedback: 0,
        cooccurrence: 0,
        vector: 0,
        text: row.content,
        timestamp: row.timestamp,
        importance: 0.5,
        confidence: 1,
        row: toMessage(row),
        conversationId: row.session.conversationId,
        sessionId: row.sessionId,
        speaker: row.speaker,
      })
    }
    return out
  }

  /** Turns brought in by dialogue context, inside the conversation window when there is one. */
  private async messageCandidates(
    agentId: string,
    ids: string[],
    scope: SearchScope,
    since: Date | null,
  ): Promise<Candidate[]> {
    if (ids.length === 0) return []
    const rows = await this.load(agentId, scope, ids, { sessionId: null, options: { since } })
    return [...rows.values()]
  }

  /**
   * Dialogue context: the turn that answers is often beside the one that matches (a question and
   * its reply), and a short turn ("It's a mix of drama and romance!") means what its exchange
   * means. Each turn up to `contextTurns` away from a candidate, in the same episode (no pause
   * longer than EPISODE_GAP_MS in between), gains half the candidate's score over the distance; each
   * turn gains weights.episode of the best score in its episode.
   */
  private async dialogueContext(
    base: Map<string, number>,
    candidates: Candidate[],
    request: { contextTurns: number; weights: SearchWeights },
  ): Promise<{ context: Map<string, number>; episode: Map<string, number> }> {
    const context = new Map<string, number>()
    const episode = new Map<string, number>()
    const turns = candidates.filter((c) => c.sessionId && (base.get(c.id) ?? 0) > 0)
    if (turns.length === 0) return { context, episode }
    const near = await neighbours(this.db, turns, request.contextTurns)
    if (request.weights.context > 0) {
      // Half the candidate's score over the distance: a turn between two matches gains their
      // mean at distance 1, as before reach grew past one turn, and never outranks them on it.
      for (const [id, score] of neighbourContext(base, near, { neighbourDistance: request.contextTurns }))
        context.set(id, score * NEIGHBOUR_SHARE)
    }
    if (request.weights.episode > 0) {
      // The span of each conversation's candidates and of the turns beside them.
      const points = turns.map((c) => ({ sessionId: c.sessionId as string, time: c.timestamp.getTime() }))
      for (const c of turns)
        for (const n of near.get(c.id) ?? []) points.push({ sessionId: c.sessionId as string, time: n.time })
      const episodeOf = await episodesOf(this.db, points)
      for (const [id, share] of episodeContext(base, episodeOf, { episodeShare: request.weights.episode }))
        episode.set(id, share)
    }
    return { context, episode }
  }

  private async recordAccess(agentId: string, hits: SearchHit[]): Promise<void> {
    const memoryIds = hits.filter((h) => h.scope === 'MEMORIES').map((h) => Number(h.id))
    if (memoryIds.length) {
      const updated = new Map((await this.memories.recordAccess(agentId, memoryIds)).map((m) => [m.id, m]))
      for (const hit of hits) if (hit.memory) hit.memory = updated.get(hit.id) ?? hit.memory
    }
    const knowledgeIds = hits.filter((h) => h.scope === 'KNOWLEDGE').map((h) => Number(h.id))
    if (knowledgeIds.length) {
      // A search hit is a use for decay purposes (it was recalled), not a confirmation: confidence
      // only grows through recordKnowledgeUse.
      await this.db.knowledge.updateMany({
        where: { agentId, id: { in: knowledgeIds } },
        data: { useCount: { increment: 1 }, lastUsedAt: this.now() },
      })
    }
  }
}
