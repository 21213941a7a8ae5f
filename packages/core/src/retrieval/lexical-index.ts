import { BM25_B, BM25_K1, type Bm25Corpus, type Bm25Term, bm25Idf, bm25Scores } from './bm25.ts'
import { TermPostings } from './lexical-postings.ts'
import {
  blockBound,
  contributionBound,
  type QueryList,
  reaches,
  TopDocuments,
  termContribution,
} from './lexical-top-k.ts'

/**
 * An agent's in-process lexical index for one collection (issue 18): an inverted index over the
 * same index terms FTS5 holds (the store stays the source of truth and streams them in), answering
 * a top-k BM25 query with dynamic pruning (block-max MaxScore) whose answer is identical to scoring
 * every matching document: same scores (FTS5's formula on the agent's own figures, summed in the
 * query's term order), same order (ties by id, newest first).
 *
 * Summaries share the messages' index, so each document carries whether it is one and each term
 * counts both its documents and the summaries among them: the three document sets of search.
 */

/** Which of an agent's documents a query covers: summaries share the messages' index. */
export type LexicalDocumentSet = 'all' | 'messages' | 'summaries'

/** A document as the index takes it: its index terms in order (FTS5's tokens, every column). */
export interface LexicalDocument {
  id: string
  sessionId: string | null
  summary: boolean
  terms: readonly string[]
}

export interface LexicalTopKQuery {
  /** Query terms as given: a term given twice counts twice, as FTS5 counts a repeated phrase. */
  terms: readonly string[]
  set: LexicalDocumentSet
  /** Only documents holding every term. */
  every: boolean
  /** Only documents of this conversation. */
  sessionId: string | null
  limit: number
}

const ALIVE = 1
const SUMMARY = 2

/** Documents dropped past which their postings are rewritten out (and at least this share of them). */
const COMPACT_MIN_DEAD = 1_024
const COMPACT_DEAD_SHARE = 0.25

export class LexicalIndex {
  private readonly termIds = new Map<string, number>()
  private readonly termNames: string[] = []
  private readonly counts = new Map<string, number>()
  /** Per term id: its postings object, or null for a term one document holds (see `onlySlot`). */
  private postings: (TermPostings | null)[] = []
  /**
   * Per term id: the slot of the one document holding it, or -1 when the term has a postings
   * object (or no term has the id). Most of a vocabulary (ids, numbers, names) is held by one
   * document, and an object per term cost ~200 bytes of heap: 19 MiB per 100K memories.
   */
  private onlySlot = new Int32Array(16).fill(-1)
  private onlyFrequency = new Int32Array(16)
  private readonly freeTermIds: number[] = []
  private readonly slotOf = new Map<string, number>()
  private readonly sessionIds = new Map<string, number>()
  private ids: (string | null)[] = []
  /** Per slot: the id as a number (tie order), length, session, flags, and the terms it holds. */
  private order = new Float64Array(16)
  private lengths = new Int32Array(16)
  private sessions = new Int32Array(16)
  private flags = new Uint8Array(16)
  /** Per slot: where its term ids start in `forwardTerms` and how many (one arena, not an array each). */
  private forwardStart = new Int32Array(16)
  private forwardCount = new Int32Array(16)
  private forwardTerms = new Int32Array(256)
  private forwardUsed = 0
  private slots = 0
  private dead = 0
  private documentCount = 0
  private summaryCount = 0
  private totalLength = 0
  private summaryLength = 0
  private postingCount = 0

  /** Live documents. */
  get size(): number {
    return this.documentCount
  }

  /** Postings held for live documents (what bytesPerPosting divides by). */
  get postingsHeld(): number {
    return this.postingCount
  }

  has(id: string): boolean {
    return this.slotOf.has(id)
  }

  /** Every live document id (to reconcile with the store). */
  documentIds(): IterableIterator<string> {
    return this.slotOf.keys()
  }

  /** Adds a document, replacing the one of that id (an edit). */
  add(document: LexicalDocument): void {
    this.remove(document.id)
    // One map reused for every document: building 100K documents allocated one each.
    const counts = this.counts
    counts.clear()
    for (const term of document.terms) counts.set(term, (counts.get(term) ?? 0) + 1)
    const slot = this.slots++
    this.ensureSlots(this.slots)
    const length = document.terms.length
    const numeric = Number(document.id)
    this.ids[slot] = document.id
    this.order[slot] = Number.isFinite(numeric) ? numeric : 0
    this.lengths[slot] = length
    this.sessions[slot] = document.sessionId === null ? -1 : this.sessionOf(document.sessionId, true)
    this.flags[slot] = ALIVE | (document.summary ? SUMMARY : 0)
    if (this.forwardUsed + counts.size > this.forwardTerms.length) {
      const grown = new Int32Array(Math.max(this.forwardUsed + counts.size, this.forwardTerms.length * 2))
      grown.set(this.forwardTerms.subarray(0, this.forwardUsed))
      this.forwardTerms = grown
    }
    this.forwardStart[slot] = this.forwardUsed
    this.forwardCount[slot] = counts.size
    for (const [term, frequency] of counts) {
      const termId = this.termOf(term)
      this.addPosting(termId, slot, frequency, length, document.summary)
      this.forwardTerms[this.forwardUsed++] = termId
    }
    this.slotOf.set(document.id, slot)
    this.documentCount++
    this.totalLength += length
    this.postingCount += counts.size
    if (document.summary) {
      this.summaryCount++
      this.summaryLength += length
    }
  }

  /**
   * Drops a document at once: it is no longer counted, found or scored, and a term no live
   * document holds leaves the vocabulary. Its postings are skipped until a compaction rewrites
   * them out (their slot no longer names any id).
   */
  remove(id: string): boolean {
    const slot = this.slotOf.get(id)
    if (slot === undefined) return false
    this.slotOf.delete(id)
    const summary = ((this.flags[slot] as number) & SUMMARY) !== 0
    const length = this.lengths[slot] as number
    const start = this.forwardStart[slot] as number
    const held = this.forwardCount[slot] as number
    for (let i = start; i < start + held; i++) {
      const termId = this.forwardTerms[i] as number
      const postings = this.postings[termId]
      // A term only this document held leaves with it.
      if (!postings) {
        this.dropTerm(termId)
        continue
      }
      postings.documents--
      if (summary) postings.summaries--
      if (postings.documents === 0) this.dropTerm(termId)
    }
    this.postingCount -= held
    this.forwardCount[slot] = 0
    this.ids[slot] = null
    this.flags[slot] = 0
    this.documentCount--
    this.totalLength -= length
    if (summary) {
      this.summaryCount--
      this.summaryLength -= length
    }
    this.dead++
    if (this.dead >= COMPACT_MIN_DEAD && this.dead >= COMPACT_DEAD_SHARE * this.slots) this.compact()
    return true
  }

  /**
   * Gives back the growth slack (after a build or a catch-up of many documents): doubling leaves
   * up to half of the postings, the per-document arrays and the forward arena unused.
   */
  trim(): void {
    for (const postings of this.postings) postings?.trim()
    if (this.forwardTerms.length > this.forwardUsed + 256)
      this.forwardTerms = this.forwardTerms.slice(0, this.forwardUsed + 256)
    if (this.order.length > this.slots + 16) this.resizeSlots(this.slots + 16)
  }

  /** BM25's corpus figures of a set: its documents and their mean length. */
  corpus(set: LexicalDocumentSet): Bm25Corpus {
    const documents =
      set === 'all'
        ? this.documentCount
        : set === 'summaries'
          ? this.summaryCount
          : this.documentCount - this.summaryCount
    const total =
      set === 'all'
        ? this.totalLength
        : set === 'summaries'
          ? this.summaryLength
          : this.totalLength - this.summaryLength
    return { documents, averageLength: documents > 0 ? total / documents : 0 }
  }

  /** The set's documents holding a term. */
  documentFrequency(term: string, set: LexicalDocumentSet): number {
    const termId = this.termIds.get(term)
    if (termId === undefined) return 0
    const postings = this.postings[termId]
    if (!postings) {
      const summary = ((this.flags[this.onlySlot[termId] as number] as number) & SUMMARY) !== 0
      return set === 'all' || (set === 'summaries') === summary ? 1 : 0
    }
    return set === 'all'
      ? postings.documents
      : set === 'summaries'
        ? postings.summaries
        : postings.documents - postings.summaries
  }

  /** The ids of the set's documents holding a term, oldest first. */
  documentsHolding(term: string, set: LexicalDocumentSet): string[] {
    const out: { id: string; order: number }[] = []
    this.eachPosting(term, set, (slot) =>
      out.push({ id: this.ids[slot] as string, order: this.order[slot] as number }),
    )
    return out.sort((a, b) => a.order - b.order).map((d) => d.id)
  }

  /** Bytes held: postings, block bounds, per-document arrays and the id and term maps (an estimate). */
  bytes(): number {
    let bytes = this.order.length * 17 + this.slots * 48
    for (const postings of this.postings) if (postings) bytes += postings.bytes()
    bytes += this.forwardTerms.byteLength + this.forwardStart.byteLength * 2
    bytes += this.onlySlot.byteLength * 2 + this.postings.length * 16
    for (const term of this.termIds.keys()) bytes += term.length * 2 + 48
    return bytes
  }

  /**
   * The reference: every matching document scored with core's bm25Scores, sorted by score, then
   * id newest first. The pruned query must answer exactly this.
   */
  exhaustiveTopK(query: LexicalTopKQuery): [string, number][] {
    const corpus = this.corpus(query.set)
    const session = this.sessionFilter(query.sessionId)
    if (session === null) return []
    const matching = new Set<number>()
    const frequencies: Map<string, number>[] = []
    const perTerm = new Map<string, Map<string, number>>()
    for (const term of query.terms) {
      let held = perTerm.get(term)
      if (!held) {
        const found = new Map<string, number>()
        this.eachPosting(term, query.set, (slot, frequency) => {
          found.set(this.ids[slot] as string, frequency)
          matching.add(slot)
        })
        held = found
        perTerm.set(term, held)
      }
      frequencies.push(held)
    }
    const candidates = [...matching]
      .filter((slot) => session === -2 || this.sessions[slot] === session)
      .map((slot) => this.ids[slot] as string)
      .filter((id) => !query.every || frequencies.every((held) => held.has(id)))
    const terms: Bm25Term[] = query.terms.map((term, i) => ({
      documentFrequency: this.documentFrequency(term, query.set),
      frequencies: frequencies[i] as Map<string, number>,
    }))
    const scores = bm25Scores(
      candidates,
      terms,
      (id) => this.lengths[this.slotOf.get(id) as number] as number,
      corpus,
    )
    return [...scores].sort((a, b) => b[1] - a[1] || Number(b[0]) - Number(a[0])).slice(0, query.limit)
  }

  /**
   * The top `limit` documents by BM25 with dynamic pruning (MaxScore over the terms' bounds,
   * block maxima to skip candidates): identical to exhaustiveTopK. Bounds only decide what is
   * skipped; every kept document is scored exactly as bm25Scores scores it.
   */
  topK(query: LexicalTopKQuery): [string, number][] {
    if (query.limit <= 0 || query.terms.length === 0) return []
    const corpus = this.corpus(query.set)
    const session = this.sessionFilter(query.sessionId)
    if (session === null || corpus.documents === 0) return []
    const averageLength = corpus.averageLength > 0 ? corpus.averageLength : 1
    // The query's distinct terms, each with the position of every occurrence in the query.
    const distinct = new Map<string, number[]>()
    query.terms.forEach((term, i) => {
      const at = distinct.get(term)
      if (at) at.push(i)
      else distinct.set(term, [i])
    })
    const idfs = query.terms.map((term) => bm25Idf(this.documentFrequency(term, query.set), corpus.documents))
    const lists: QueryList[] = []
    for (const [term, positions] of distinct) {
      const termId = this.termIds.get(term)
      if (termId === undefined) {
        if (query.every) return []
        continue
      }
      const postings = this.listOf(termId)
      let weight = 0
      for (const i of positions) weight += idfs[i] as number
      const list: QueryList = {
        postings,
        positions,
        weight,
        bound: 0,
        at: 0,
        frequency: 0,
      }
      list.bound = contributionBound(weight, postings.maxFrequency, postings.minLength, averageLength)
      lists.push(list)
    }
    if (lists.length === 0) return []
    const top = new TopDocuments(query.limit, this.order)
    // Each query position's list (a repeated term has one list for its positions).
    const listAt: QueryList[] = []
    for (const list of lists) for (const i of list.positions) listAt[i] = list
    const score = (slot: number): number => {
      // Exactly bm25Scores' arithmetic, in the query's term order.
      const norm = BM25_K1 * (1 - BM25_B + (BM25_B * (this.lengths[slot] as number)) / averageLength)
      let total = 0
      for (let i = 0; i < query.terms.length; i++) {
        const f = listAt[i]?.frequency ?? 0
        if (f) total += ((idfs[i] as number) * (f * (BM25_K1 + 1))) / (f + norm)
      }
      return total
    }
    const admissible = (slot: number): boolean => {
      const flags = this.flags[slot] as number
      if ((flags & ALIVE) === 0) return false
      if (
        query.set === 'summaries'
          ? (flags & SUMMARY) === 0
          : query.set === 'messages' && (flags & SUMMARY) !== 0
      )
        return false
      return session === -2 || this.sessions[slot] === session
    }
    if (query.every) this.intersect(lists, admissible, score, top, averageLength)
    else this.maxScore(lists, admissible, score, top, averageLength)
    return top.sorted().map((slot) => [this.ids[slot as number] as string, top.scoreOf(slot)])
  }

  /** Documents holding every term: the shortest list drives, the others seek; bounds skip. */
  private intersect(
    lists: QueryList[],
    admissible: (slot: number) => boolean,
    score: (slot: number) => number,
    top: TopDocuments,
    averageLength: number,
  ): void {
    lists.sort((a, b) => a.postings.size - b.postings.size)
    const [lead, ...rest] = lists as [QueryList, ...QueryList[]]
    const bounds = lists.reduce((sum, list) => sum + list.bound, 0)
    next: for (; lead.at < lead.postings.size; lead.at++) {
      const slot = lead.postings.slotAt(lead.at)
      if (!admissible(slot)) continue
      if (top.full && !reaches(bounds, top.threshold)) return
      // The lead's block bound with the others' list bounds: a whole block of the lead may be skipped.
      if (
        top.full &&
        !reaches(
          bounds -
            lead.bound +
            contributionBound(
              lead.weight,
              lead.postings.blockMaxFrequency(lead.at),
              lead.postings.blockMinLength(lead.at),
              averageLength,
            ),
          top.threshold,
        )
      )
        continue
      lead.frequency = lead.postings.frequencyAt(lead.at)
      for (const list of rest) {
        list.at = list.postings.seek(list.at, slot)
        if (list.at >= list.postings.size) return
        if (list.postings.slotAt(list.at) !== slot) continue next
        list.frequency = list.postings.frequencyAt(list.at)
      }
      if (top.full && !reaches(blockBound(lists, averageLength), top.threshold)) continue
      top.offer(slot, score(slot))
    }
  }

  /**
   * MaxScore: terms by ascending bound; the lowest ones whose bounds sum below the k-th score
   * cannot make a document enter alone, so only the others (the essential lists) propose
   * candidates, and the non-essential ones are looked up for a candidate while its bound still
   * reaches the k-th score. Block maxima of the essential lists skip a candidate before any lookup.
   */
  private maxScore(
    lists: QueryList[],
    admissible: (slot: number) => boolean,
    score: (slot: number) => number,
    top: TopDocuments,
    averageLength: number,
  ): void {
    lists.sort((a, b) => a.bound - b.bound)
    const prefix = new Float64Array(lists.length + 1)
    for (let i = 0; i < lists.length; i++)
      prefix[i + 1] = (prefix[i] as number) + (lists[i] as QueryList).bound
    let essential = 0
    const NONE = 0x7fffffff
    for (;;) {
      while (top.full && essential < lists.length && !reaches(prefix[essential + 1] as number, top.threshold))
        essential++
      if (essential === lists.length) return
      let slot = NONE
      for (let i = essential; i < lists.length; i++) {
        const list = lists[i] as QueryList
        if (list.at < list.postings.size) slot = Math.min(slot, list.postings.slotAt(list.at))
      }
      if (slot === NONE) return
      // The essential lists' part: exact contributions of those holding the slot, block bounds first.
      let bound = prefix[essential] as number
      for (let i = essential; i < lists.length; i++) {
        const list = lists[i] as QueryList
        list.frequency = 0
        if (list.at < list.postings.size && list.postings.slotAt(list.at) === slot) {
          bound += contributionBound(
            list.weight,
            list.postings.blockMaxFrequency(list.at),
            list.postings.blockMinLength(list.at),
            averageLength,
          )
          list.frequency = list.postings.frequencyAt(list.at)
        }
      }
      const keep = admissible(slot) && (!top.full || reaches(bound, top.threshold))
      if (keep) {
        const norm = BM25_K1 * (1 - BM25_B + (BM25_B * (this.lengths[slot] as number)) / averageLength)
        let partial = prefix[essential] as number
        for (let i = essential; i < lists.length; i++) {
          const list = lists[i] as QueryList
          if (list.frequency) partial += termContribution(list.weight, list.frequency, norm)
        }
        let alive = true
        for (let i = essential - 1; i >= 0; i--) {
          const list = lists[i] as QueryList
          if (top.full && !reaches(partial, top.threshold)) {
            alive = false
            break
          }
          partial -= list.bound
          list.frequency = 0
          list.at = list.postings.seek(list.at, slot)
          if (list.at < list.postings.size && list.postings.slotAt(list.at) === slot) {
            list.frequency = list.postings.frequencyAt(list.at)
            partial += termContribution(list.weight, list.frequency, norm)
          }
        }
        if (alive && (!top.full || reaches(partial, top.threshold))) top.offer(slot, score(slot))
        for (let i = 0; i < essential; i++) (lists[i] as QueryList).frequency = 0
      }
      for (let i = essential; i < lists.length; i++) {
        const list = lists[i] as QueryList
        if (list.at < list.postings.size && list.postings.slotAt(list.at) === slot) list.at++
      }
    }
  }

  private eachPosting(
    term: string,
    set: LexicalDocumentSet,
    visit: (slot: number, frequency: number) => void,
  ): void {
    const termId = this.termIds.get(term)
    if (termId === undefined) return
    const postings = this.listOf(termId)
    for (let i = 0; i < postings.size; i++) {
      const slot = postings.slotAt(i)
      const flags = this.flags[slot] as number
      if ((flags & ALIVE) === 0) continue
      if (set === 'summaries' && (flags & SUMMARY) === 0) continue
      if (set === 'messages' && (flags & SUMMARY) !== 0) continue
      visit(slot, postings.frequencyAt(i))
    }
  }

  /** -2: no filter; -1 or more: the session's number; null: a session no document has. */
  private sessionFilter(sessionId: string | null): number | null {
    if (sessionId === null || sessionId === '') return -2
    const known = this.sessionIds.get(sessionId)
    return known === undefined ? null : known
  }

  private sessionOf(sessionId: string, create: boolean): number {
    let known = this.sessionIds.get(sessionId)
    if (known === undefined && create) {
      known = this.sessionIds.size
      this.sessionIds.set(sessionId, known)
    }
    return known ?? -1
  }

  private termOf(term: string): number {
    let termId = this.termIds.get(term)
    if (termId === undefined) {
      termId = this.freeTermIds.pop() ?? this.postings.length
      this.termIds.set(term, termId)
      this.termNames[termId] = term
      this.postings[termId] = null
      if (termId >= this.onlySlot.length) {
        const capacity = Math.max(termId + 1, this.onlySlot.length * 2)
        const onlySlot = new Int32Array(capacity).fill(-1)
        onlySlot.set(this.onlySlot)
        this.onlySlot = onlySlot
        const onlyFrequency = new Int32Array(capacity)
        onlyFrequency.set(this.onlyFrequency)
        this.onlyFrequency = onlyFrequency
      }
    }
    return termId
  }

  /** A term's first posting stays in `onlySlot`; the second turns the term into a postings object. */
  private addPosting(
    termId: number,
    slot: number,
    frequency: number,
    length: number,
    summary: boolean,
  ): void {
    let postings = this.postings[termId]
    if (!postings) {
      const only = this.onlySlot[termId] as number
      if (only < 0) {
        this.onlySlot[termId] = slot
        this.onlyFrequency[termId] = frequency
        return
      }
      postings = this.listOf(termId)
      this.postings[termId] = postings
      this.onlySlot[termId] = -1
    }
    postings.append(slot, frequency, length)
    postings.documents++
    if (summary) postings.summaries++
  }

  /** A term's postings; for a term one document holds, a list of its one posting made for the query. */
  private listOf(termId: number): TermPostings {
    const held = this.postings[termId]
    if (held) return held
    const slot = this.onlySlot[termId] as number
    const postings = new TermPostings()
    postings.append(slot, this.onlyFrequency[termId] as number, this.lengths[slot] as number)
    postings.documents = 1
    if ((this.flags[slot] as number) & SUMMARY) postings.summaries = 1
    return postings
  }

  private dropTerm(termId: number): void {
    this.termIds.delete(this.termNames[termId] as string)
    this.termNames[termId] = ''
    this.postings[termId] = null
    this.onlySlot[termId] = -1
    this.freeTermIds.push(termId)
  }

  private ensureSlots(count: number): void {
    if (count <= this.order.length) return
    this.resizeSlots(Math.max(count, this.order.length * 2))
  }

  private resizeSlots(capacity: number): void {
    const resized = <T extends Float64Array | Int32Array | Uint8Array>(
      array: T,
      make: (n: number) => T,
    ): T => {
      const next = make(capacity)
      next.set(array.subarray(0, Math.min(array.length, capacity)))
      return next
    }
    this.order = resized(this.order, (n) => new Float64Array(n))
    this.lengths = resized(this.lengths, (n) => new Int32Array(n))
    this.sessions = resized(this.sessions, (n) => new Int32Array(n))
    this.flags = resized(this.flags, (n) => new Uint8Array(n))
    this.forwardStart = resized(this.forwardStart, (n) => new Int32Array(n))
    this.forwardCount = resized(this.forwardCount, (n) => new Int32Array(n))
  }

  /** Rewrites the postings without dropped documents' slots (renumbered, order kept). */
  private compact(): void {
    const renumber = new Int32Array(this.slots).fill(-1)
    let next = 0
    for (let slot = 0; slot < this.slots; slot++)
      if ((this.flags[slot] as number) & ALIVE) renumber[slot] = next++
    const move = <T extends Float64Array | Int32Array | Uint8Array>(array: T): void => {
      for (let slot = 0; slot < this.slots; slot++) {
        const to = renumber[slot] as number
        if (to >= 0) array[to] = array[slot] as number
      }
      array.fill(0, next, this.slots)
    }
    move(this.order)
    move(this.lengths)
    move(this.sessions)
    move(this.flags)
    const ids: (string | null)[] = []
    const forwardTerms = new Int32Array(Math.max(256, this.postingCount))
    let used = 0
    for (let slot = 0; slot < this.slots; slot++) {
      const to = renumber[slot] as number
      if (to < 0) continue
      ids[to] = this.ids[slot] as string
      const start = this.forwardStart[slot] as number
      const count = this.forwardCount[slot] as number
      forwardTerms.set(this.forwardTerms.subarray(start, start + count), used)
      this.forwardStart[to] = used
      this.forwardCount[to] = count
      used += count
      this.slotOf.set(this.ids[slot] as string, to)
    }
    this.forwardCount.fill(0, next, this.slots)
    this.ids = ids
    this.forwardTerms = forwardTerms
    this.forwardUsed = used
    for (const postings of this.postings) postings?.compact(renumber, (slot) => this.lengths[slot] as number)
    // A term one document holds names a live slot (a dropped document took its terms with it).
    for (let termId = 0; termId < this.postings.length; termId++) {
      const only = this.onlySlot[termId] as number
      if (only >= 0) this.onlySlot[termId] = renumber[only] as number
    }
    this.slots = next
    this.dead = 0
  }
}
