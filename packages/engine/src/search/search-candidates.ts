import type { Clock, ConversationTimeline, StoredMessage } from '@engram/core'
import { assertMemoryFilter } from '../memory-items/memory-item-rules.ts'
import type { RecalledKnowledge, RecalledMemoryItem, RecallSources } from '../ports/recall-sources.ts'
import type { StoredSummary } from '../ports/summaries.ts'
import type { EmbeddingKind, SearchEmbeddings } from './collaborators.ts'
import type { GraphRow } from './search-graph.ts'
import type { LexicalSearch } from './search-lexical.ts'
import { timelineCandidates } from './search-rows.ts'
import type { SearchOptions, SearchScope, SearchStrategy, SearchWeights } from './search-types.ts'

/** Filters are applied after candidates are found: ask for this many more when they are on. */
const FILTERED_OVERFETCH = 10

/** A row one side of search proposed, with each side's score (0 when that side did not propose it). */
export interface Candidate {
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
  /** An automatic summary (issue 13 §3) is a row of its own in the SUMMARIES scope. */
  row: RecalledMemoryItem | StoredMessage | RecalledKnowledge | StoredSummary | GraphRow
  conversationId?: string
  sessionId?: string
  /** The turn's speaker, or the memory's user. */
  speaker?: string | null
  /** A POOLS candidate: the pool its memory is in. */
  poolId?: string
  /**
   * Built from the turn timeline, its row not read yet (text, speaker, conversation and row are
   * placeholders): search reads it once the candidate reaches the pool (search-rows.ts).
   */
  rowPending?: boolean
}

// GRAPH has no vectors of its own: its candidates come from search-graph.ts. POOLS' come from
// each pool's own search (SearchService.poolScope).
const KIND_OF: Record<Exclude<SearchScope, 'GRAPH' | 'POOLS'>, EmbeddingKind> = {
  MEMORIES: 'memory',
  MESSAGES: 'message',
  SUMMARIES: 'message',
  KNOWLEDGE: 'knowledge',
}

/**
 * Where a scope's candidates come from: the lexical side (BM25 and its expansions), the vector
 * side, and for the recency and importance strategies the agent's newest or most important rows;
 * the rows themselves, filtered, from the recall sources.
 */
export class SearchCandidates {
  constructor(
    private readonly recall: RecallSources,
    private readonly embeddings: SearchEmbeddings,
    private readonly lexicalSearch: LexicalSearch,
    private readonly clock: Clock,
  ) {}

  private now(): Date {
    return this.clock.now()
  }

  /** One scope's candidates, each with its BM25 and vector scores (0 when it was not proposed by that side). */
  async candidates(
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
      /**
       * Told every id proposed, unfiltered, just before their rows are read: dialogue context
       * starts its read of the turns beside them then, so on Postgres the two round trips overlap.
       */
      proposed?: (ids: readonly string[]) => void
      /**
       * The agent's turn timeline (`held`, looked up once the lexical side has brought it up to
       * date): unfiltered MESSAGES candidates are built from it, their rows left for the pool's
       * (search-rows.ts); `speakers`: scoring reads each one's speaker. Absent, or not holding every
       * id (or speaker when needed): the rows are read here.
       */
      timeline?: { held: () => ConversationTimeline | null; speakers: boolean }
    },
  ): Promise<Candidate[]> {
    if (scope === 'GRAPH' || scope === 'POOLS') return []
    const { strategy, candidateLimit } = request
    const filtered = this.isFiltered(scope, request.options, request.sessionId)
    const wanted = filtered ? candidateLimit * FILTERED_OVERFETCH : candidateLimit
    const lexical = new Map<string, number>()
    const feedback = new Map<string, number>()
    const cooccurrence = new Map<string, number>()
    const semantic = new Map<string, number>()
    const ordered: string[] = []
    if (strategy === 'HYBRID' || strategy === 'LEXICAL' || strategy === 'WEIGHTED') {
      const terms = this.lexicalSearch.queryIndexTerms(request.query)
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
        for (const hit of await index.search(request.queryVector, wanted))
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
    if (!filtered) request.proposed?.(ids)
    const timeline = scope === 'MESSAGES' && !filtered && ids.length > 0 ? request.timeline?.held() : null
    const rows =
      (timeline && timelineCandidates(timeline, scope, ids, request.timeline?.speakers ?? true)) ||
      (await this.load(agentId, scope, ids, request))
    // Filters may have removed some; each side keeps its best candidateLimit.
    const keep = new Set<string>()
    const keepBest = (scores: Iterable<string>) => {
      let n = 0
      for (const id of scores) if (rows.has(id) && n++ < candidateLimit) keep.add(id)
    }
    keepBest([...lexicalTotal.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id))
    keepBest([...semantic.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id))
    keepBest(ordered)
    // The rows' candidates are this search's own objects: each side's scores go on them in place.
    return [...keep].map((id) => {
      const c = rows.get(id) as Candidate
      c.bm25 = lexical.get(id) ?? 0
      c.feedback = feedback.get(id) ?? 0
      c.cooccurrence = cooccurrence.get(id) ?? 0
      c.vector = semantic.get(id) ?? 0
      return c
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
    if (scope === 'MEMORIES') return this.recall.memoryItemIdsBy(agentId, by, limit, this.now())
    if (scope === 'KNOWLEDGE') return this.recall.knowledgeIdsBy(agentId, by, limit)
    // Messages carry no importance of their own: recency orders both lists.
    return this.recall.newestMessageIds(agentId, scope === 'SUMMARIES' ? 'summaries' : 'messages', limit)
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
    const { options, sessionId } = request
    if (scope === 'MEMORIES') {
      const filter = options.memoryFilter ?? {}
      assertMemoryFilter(filter)
      const rows = await this.recall.memoryItems(agentId, ids, {
        ...filter,
        asOf: filter.asOf ?? this.now(),
      })
      for (const item of rows) {
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
      const rows = await this.recall.knowledge(agentId, ids)
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
    const rows = await this.recall.messages(agentId, ids, {
      set: scope === 'SUMMARIES' ? 'summaries' : 'messages',
      sessionId,
      since: options.since ?? null,
      until: options.until ?? null,
    })
    for (const { message, conversationId } of rows) {
      out.set(message.id, {
        scope,
        id: message.id,
        bm25: 0,
        feedback: 0,
        cooccurrence: 0,
        vector: 0,
        text: message.content,
        timestamp: message.timestamp,
        importance: 0.5,
        confidence: 1,
        row: message,
        conversationId,
        sessionId: message.sessionId,
        speaker: message.speaker,
      })
    }
    return out
  }

  /** Memories brought in by their source turns' context (search's memory filter applies). */
  async memoryCandidates(agentId: string, ids: string[], options: SearchOptions): Promise<Candidate[]> {
    if (ids.length === 0) return []
    return [...(await this.load(agentId, 'MEMORIES', ids, { sessionId: null, options })).values()]
  }

  /** Turns brought in by dialogue context, inside the conversation window when there is one. */
  async messageCandidates(
    agentId: string,
    ids: string[],
    scope: SearchScope,
    since: Date | null,
  ): Promise<Candidate[]> {
    if (ids.length === 0) return []
    const rows = await this.load(agentId, scope, ids, { sessionId: null, options: { since } })
    return [...rows.values()]
  }
}
