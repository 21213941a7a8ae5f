import {
  type Bm25Term,
  bm25Scores,
  CONTEXT_SUMMARY_PREFIX,
  DEFAULT_LEXICAL_PLAN,
  DEFAULT_WEIGHTED_STRATEGY_WEIGHTS,
  type FieldIssue,
  type LexicalPlanConfig,
  type Limits,
  type MemorySettings,
  mmrRerank,
  NotFoundError,
  planLexicalQuery,
  queryTerms,
  SIMILARITY_IMPORTANCE_WEIGHTS,
  type StoredMessage,
  temporalDecay,
  ValidationError,
  weightedStrategyScores,
} from '@engram/core'
import type { Database } from '../db/client.ts'
import type { Knowledge as KnowledgeRow } from '../generated/prisma/client.ts'
import type { EmbeddingKind, EmbeddingService } from './embedding-service.ts'
import { toMessage } from './mappers.ts'
import {
  type MemoryFilter,
  type MemoryItemService,
  type MemoryItemView,
  toMemoryItem,
} from './memory-item-service.ts'
import {
  AgentTermStatistics,
  type DocumentSet,
  type FullTextTable,
  FullTextTokenizer,
  type Posting,
} from './term-statistics.ts'

export const SEARCH_SCOPES = ['MEMORIES', 'MESSAGES', 'KNOWLEDGE', 'SUMMARIES'] as const
export type SearchScope = (typeof SEARCH_SCOPES)[number]

export const SEARCH_STRATEGIES = [
  'HYBRID',
  'LEXICAL',
  'SIMILARITY',
  'RECENCY',
  'IMPORTANCE',
  'WEIGHTED',
  'SIMILARITY_IMPORTANCE',
] as const
export type SearchStrategy = (typeof SEARCH_STRATEGIES)[number]

export interface SearchWeights {
  /** HYBRID: share of the BM25 score (scaled to the best candidate of its scope). */
  bm25: number
  /** HYBRID: share of the cosine similarity. */
  vector: number
  /** HYBRID over MESSAGES: share of the neighbouring turns' scores a turn gains (dialogue context). */
  context: number
  /** WEIGHTED (spec 002): rank by recency, similarity and importance. */
  recency: number
  similarity: number
  importance: number
}

// Lexical-led: on the LoCoMo development set 0.7/0.3 beat 0.5/0.5 and 0.4/0.6 at every k.
// Context 1.0: on the same set, recall rose from 0 to 0.75-1.0 and fell past it (1.5).
export const DEFAULT_SEARCH_WEIGHTS: SearchWeights = {
  bm25: 0.7,
  vector: 0.3,
  context: 1,
  ...DEFAULT_WEIGHTED_STRATEGY_WEIGHTS,
}
/** Each side proposes this many times the requested hits before fusion (spec 002: candidates ×3). */
export const CANDIDATE_FACTOR = 3
/** Filters are applied after candidates are found: ask for this many more when they are on. */
const FILTERED_OVERFETCH = 10
export const MAX_QUERY_CHARS = 2_000

export interface ScoreComponents {
  bm25: number
  vector: number
  importance: number
  recency: number
  confidence: number
  context: number
  /** The temporal decay factor applied (1 when none). */
  decay: number
}

export interface SearchHit {
  scope: SearchScope
  id: string
  /** 1-based position in the results. */
  rank: number
  score: number
  /** score over the best candidate score (MMR's relevance term). */
  relevance: number
  /** Highest word similarity (Jaccard) to a hit ranked above it; 0 without MMR. */
  redundancy: number
  /** Rank of that most similar hit above; null when none overlaps or without MMR. */
  redundantWithRank: number | null
  /** λ·relevance − (1−λ)·redundancy: hits are in non-increasing order of it. */
  mmrScore: number
  components: ScoreComponents
  text: string
  timestamp: Date
  memory?: MemoryItemView
  message?: StoredMessage
  knowledge?: KnowledgeRow
  conversationId?: string
}

export interface SearchOptions {
  scopes?: SearchScope[] | null
  limit?: number | null
  strategy?: SearchStrategy | null
  weights?: Partial<SearchWeights> | null
  /** Hits scoring below it are left out. */
  threshold?: number | null
  /** MMR trade-off (1 = relevance only); default: the agent's mmrLambda for HYBRID, 1 otherwise. */
  mmrLambda?: number | null
  /** Temporal decay (half-life from settings): default on for HYBRID over MEMORIES and SUMMARIES. */
  decay?: boolean | null
  conversationId?: string | null
  memoryFilter?: MemoryFilter | null
  since?: Date | null
  until?: Date | null
  /** Count hits as accesses (default true). */
  track?: boolean
}

interface Candidate {
  scope: SearchScope
  id: string
  bm25: number
  vector: number
  text: string
  timestamp: Date
  importance: number
  confidence: number
  row: MemoryItemView | StoredMessage | KnowledgeRow
  conversationId?: string
  sessionId?: string
}

let sharedTokenizer: FullTextTokenizer | null = null
/** One tokenizer per process: a private in-memory database, opened on first use. */
function tokenizer(): FullTextTokenizer {
  sharedTokenizer ??= new FullTextTokenizer()
  return sharedTokenizer
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
    private readonly lexicalPlan: LexicalPlanConfig = DEFAULT_LEXICAL_PLAN,
  ) {
    this.terms = new AgentTermStatistics(db)
  }

  private readonly terms: AgentTermStatistics

  /** Term counts include deleted rows until they expire: forgotten at once after a bulk delete. */
  forgetStatistics(): void {
    this.terms.clear()
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

    const scored: { candidate: Candidate; score: number; components: ScoreComponents }[] = []
    for (const searchScope of request.scopes) {
      const candidates = await this.candidates(scope, searchScope, {
        query,
        queryVector,
        strategy,
        candidateLimit,
        sessionId,
        options,
      })
      const best = Math.max(0, ...candidates.map((c) => c.bm25))
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
            score = request.weights.bm25 * (best > 0 ? c.bm25 / best : 0) + request.weights.vector * c.vector
        }
        base.set(c.id, score)
      }
      const context =
        strategy === 'HYBRID' && searchScope === 'MESSAGES' && request.weights.context > 0
          ? await this.dialogueContext(base)
          : new Map<string, number>()
      const contextOnly = [...context.keys()].filter((id) => !base.has(id))
      const joined = [...candidates, ...(await this.messageCandidates(scope, contextOnly, searchScope))]
      for (const c of joined) {
        const contextScore = context.get(c.id) ?? 0
        const decay = decayOn
          ? temporalDecay(now.getTime() - c.timestamp.getTime(), settings.temporalDecayHalfLifeDays)
          : 1
        const score = ((base.get(c.id) ?? 0) + request.weights.context * contextScore) * decay
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
    if (issues.length) throw new ValidationError(issues)
    return { limit, scopes, weights, strategy, mmrLambda, threshold: options.threshold ?? null }
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
    },
  ): Promise<Candidate[]> {
    const { strategy, candidateLimit } = request
    const filtered = this.isFiltered(scope, request.options, request.sessionId)
    const wanted = filtered ? candidateLimit * FILTERED_OVERFETCH : candidateLimit
    const lexical = new Map<string, number>()
    const semantic = new Map<string, number>()
    const ordered: string[] = []
    if (strategy === 'HYBRID' || strategy === 'LEXICAL' || strategy === 'WEIGHTED') {
      for (const [id, bm25] of await this.lexical(agentId, scope, request.query, wanted, request.sessionId))
        lexical.set(id, bm25)
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
    const ids = [...new Set([...lexical.keys(), ...semantic.keys(), ...ordered])]
    const rows = await this.load(agentId, scope, ids, request)
    // Filters may have removed some; each side keeps its best candidateLimit.
    const keep = new Set<string>()
    const keepBest = (scores: Iterable<string>) => {
      let n = 0
      for (const id of scores) if (rows.has(id) && n++ < candidateLimit) keep.add(id)
    }
    keepBest([...lexical.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id))
    keepBest([...semantic.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id))
    keepBest(ordered)
    return [...keep].map((id) => {
      const c = rows.get(id) as Candidate
      return { ...c, bm25: lexical.get(id) ?? 0, vector: semantic.get(id) ?? 0 }
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

  /**
   * BM25 over the agent's own documents in the scope: word rarity (document frequency) and the
   * average length come from them alone, never from other agents' rows sharing the index (FTS5's
   * bm25() would mix every tenant in). Scored with FTS5's formula and constants.
   *
   * Over a large corpus common terms do not select (planLexicalQuery, on the agent's own counts);
   * the any-term query runs when that finds nothing. Fewer hits than `limit` are then possible, as
   * with the common-terms queries of Lucene: documents holding only common words rank below any
   * holding a rarer one, and in HYBRID the vector side brings its own candidates.
   */
  private async lexical(
    agentId: string,
    scope: SearchScope,
    query: string,
    limit: number,
    sessionId: string | null,
  ): Promise<[string, number][]> {
    const table: FullTextTable =
      scope === 'MEMORIES' ? 'MemorySearch' : scope === 'KNOWLEDGE' ? 'KnowledgeSearch' : 'MessageSearch'
    const set: DocumentSet = scope === 'SUMMARIES' ? 'summaries' : scope === 'MESSAGES' ? 'messages' : 'all'
    // Each query word as the index holds it (porter stems); a word the tokenizer splits counts
    // each of its parts as a word of its own.
    const terms = queryTerms(query).flatMap((word) => tokenizer().terms(word))
    if (terms.length === 0) return []
    // Summaries share the messages' index: an agent without any would pay a second full query.
    if (scope === 'SUMMARIES' && !(await this.hasSummaries(agentId, sessionId))) return []
    const corpus = await this.terms.corpus(table, agentId, set)
    if (corpus.documents === 0) return []
    const postings = new Map<string, Map<string, Posting>>()
    for (const term of new Set(terms))
      postings.set(term, await this.terms.postings(table, agentId, set, term))
    const held = (term: string) => postings.get(term) as Map<string, Posting>
    const plan = planLexicalQuery(terms, (term) => held(term).size, corpus.documents, this.lexicalPlan)
    if (!plan) return []
    const run = (selective: string[], every: boolean): [string, number][] => {
      // Documents matching the plan: any selective term, or every term ("all-common").
      const matching = new Set<string>()
      for (const term of selective) for (const id of held(term).keys()) matching.add(id)
      const lengths = new Map<string, number>()
      for (const term of selective) for (const [id, p] of held(term)) lengths.set(id, p.length)
      const candidates = [...matching].filter(
        (id) =>
          (!every || selective.every((term) => held(term).has(id))) &&
          (!sessionId || [...selective].some((term) => held(term).get(id)?.sessionId === sessionId)),
      )
      const scoredTerms: Bm25Term[] = selective.map((term) => {
        const docs = held(term)
        return {
          documentFrequency: docs.size,
          frequencies: new Map([...docs].map(([id, p]) => [id, p.frequency])),
        }
      })
      const scores = bm25Scores(candidates, scoredTerms, (id) => lengths.get(id) ?? 0, corpus)
      // Ties broken by id, newest first, so equal scores come back in one stable order.
      return [...scores].sort((a, b) => b[1] - a[1] || Number(b[0]) - Number(a[0])).slice(0, limit)
    }
    const rows = run(plan.selective, plan.mode === 'all-common')
    if (rows.length > 0 || !plan.fallback) return rows
    return run(terms, false)
  }

  /**
   * Whether the agent (or conversation) has a context summary, found through the index: every
   * summary starts with CONTEXT_SUMMARY_PREFIX, whose words only summaries hold in the usual case.
   */
  private async hasSummaries(agentId: string, sessionId: string | null): Promise<boolean> {
    // "context summary" as one phrase (FTS5 tokenises it like the stored prefix).
    const marker = queryTerms(CONTEXT_SUMMARY_PREFIX).join(' ')
    const rows = await this.db.$queryRawUnsafe<unknown[]>(
      `SELECT 1 FROM "MessageSearch" CROSS JOIN "Message" o ON o."id" = "MessageSearch"."rowid"
        WHERE "MessageSearch" MATCH ? AND o."agentId" = ? AND substr(o."content", 1, ${CONTEXT_SUMMARY_PREFIX.length}) = ?
        ${sessionId ? `AND o."sessionId" = ?` : ''} LIMIT 1`,
      `"${marker}"`,
      agentId,
      CONTEXT_SUMMARY_PREFIX,
      ...(sessionId ? [sessionId] : []),
    )
    return rows.length > 0
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
          vector: 0,
          text: item.content,
          timestamp: item.updatedAt,
          importance: item.importance,
          confidence: item.confidence,
          row: item,
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
        vector: 0,
        text: row.content,
        timestamp: row.timestamp,
        importance: 0.5,
        confidence: 1,
        row: toMessage(row),
        conversationId: row.session.conversationId,
        sessionId: row.sessionId,
      })
    }
    return out
  }

  private async messageCandidates(agentId: string, ids: string[], scope: SearchScope): Promise<Candidate[]> {
    if (ids.length === 0) return []
    const rows = await this.load(agentId, scope, ids, { sessionId: null, options: {} })
    return [...rows.values()]
  }

  /**
   * Dialogue context: the turn that answers is often beside the one that matches (a question and
   * its reply). Each turn next to a candidate, in the candidate's conversation, gets half of that
   * candidate's score, so candidates' neighbours join the ranking and a turn between two
   * candidates gains the mean of theirs.
   */
  private async dialogueContext(base: Map<string, number>): Promise<Map<string, number>> {
    if (base.size === 0) return new Map()
    const ids = [...base.keys()].map(Number)
    const marks = (n: number) => Array.from({ length: n }, () => '?').join(',')
    // Each candidate's neighbours by two seeks on the (sessionId, timestamp, id) index, not a window
    // over every message of every candidate's conversation (which grows with the conversations).
    const rows = await this.db.$queryRawUnsafe<{ id: number; prev: number | null; next: number | null }[]>(
      `SELECT m."id" AS id,
         (SELECT p."id" FROM "Message" p WHERE p."sessionId" = m."sessionId"
            AND (p."timestamp", p."id") < (m."timestamp", m."id")
            ORDER BY p."timestamp" DESC, p."id" DESC LIMIT 1) AS prev,
         (SELECT n."id" FROM "Message" n WHERE n."sessionId" = m."sessionId"
            AND (n."timestamp", n."id") > (m."timestamp", m."id")
            ORDER BY n."timestamp", n."id" LIMIT 1) AS next
       FROM "Message" m WHERE m."id" IN (${marks(ids.length)})`,
      ...ids,
    )
    const context = new Map<string, number>()
    for (const row of rows) {
      const share = (base.get(String(row.id)) ?? 0) / 2
      for (const neighbour of [row.prev, row.next]) {
        if (neighbour == null) continue
        const key = String(neighbour)
        context.set(key, (context.get(key) ?? 0) + share)
      }
    }
    return context
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
