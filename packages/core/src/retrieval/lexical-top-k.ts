import { BM25_B, BM25_K1 } from './bm25.ts'
import type { TermPostings } from './lexical-postings.ts'

/**
 * The pruned top-k's parts (split from lexical-index.ts): a query term's cursor, the BM25
 * contribution and its bounds, and the heap of the best documents so far.
 */

/** A score a bound may fall short of through rounding: pruning keeps anything this close. */
const BOUND_SLACK = 1e-9

export interface QueryList {
  postings: TermPostings
  /** Where the term occurs in the query (it is scored once per occurrence). */
  positions: number[]
  /** The sum of its occurrences' IDFs. */
  weight: number
  /** The most it adds to any document's score. */
  bound: number
  /** The cursor: a position in the postings. */
  at: number
  /** Its frequency in the document at hand (0: absent). */
  frequency: number
}

export function termContribution(weight: number, frequency: number, norm: number): number {
  return (weight * (frequency * (BM25_K1 + 1))) / (frequency + norm)
}

/** The most a term adds with at most `frequency` occurrences in a document at least `length` long. */
export function contributionBound(
  weight: number,
  frequency: number,
  length: number,
  averageLength: number,
): number {
  if (frequency <= 0) return 0
  return termContribution(
    weight,
    frequency,
    BM25_K1 * (1 - BM25_B + (BM25_B * Math.max(0, length)) / averageLength),
  )
}

/** Whether a bound may still reach the k-th score (ties may enter by id, and rounding is allowed for). */
export function reaches(bound: number, threshold: number): boolean {
  return bound + BOUND_SLACK * Math.max(1, Math.abs(bound)) >= threshold
}

export function blockBound(lists: QueryList[], averageLength: number): number {
  let bound = 0
  for (const list of lists) {
    bound += contributionBound(
      list.weight,
      list.postings.blockMaxFrequency(list.at),
      list.postings.blockMinLength(list.at),
      averageLength,
    )
  }
  return bound
}

/** The best `limit` documents so far: a min-heap on (score, id), so ties go to the newest id. */
export class TopDocuments {
  private readonly slots: number[] = []
  private readonly scores = new Map<number, number>()

  constructor(
    private readonly limit: number,
    private readonly order: Float64Array,
  ) {}

  get full(): boolean {
    return this.slots.length >= this.limit
  }

  /** The k-th score: a document below it cannot enter. */
  get threshold(): number {
    return this.scores.get(this.slots[0] as number) as number
  }

  scoreOf(slot: number): number {
    return this.scores.get(slot) as number
  }

  offer(slot: number, score: number): void {
    if (this.slots.length < this.limit) {
      this.scores.set(slot, score)
      this.slots.push(slot)
      this.up(this.slots.length - 1)
      return
    }
    const worst = this.slots[0] as number
    if (!this.better(slot, score, worst, this.scores.get(worst) as number)) return
    this.scores.delete(worst)
    this.scores.set(slot, score)
    this.slots[0] = slot
    this.down(0)
  }

  /** Best first. */
  sorted(): number[] {
    return [...this.slots].sort((a, b) =>
      this.better(a, this.scores.get(a) as number, b, this.scores.get(b) as number) ? -1 : 1,
    )
  }

  private better(a: number, scoreA: number, b: number, scoreB: number): boolean {
    return scoreA > scoreB || (scoreA === scoreB && (this.order[a] as number) > (this.order[b] as number))
  }

  private worse(i: number, j: number): boolean {
    const a = this.slots[i] as number
    const b = this.slots[j] as number
    return this.better(b, this.scores.get(b) as number, a, this.scores.get(a) as number)
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.worse(i, parent)) return
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    for (;;) {
      const left = 2 * i + 1
      const right = left + 1
      let worst = i
      if (left < this.slots.length && this.worse(left, worst)) worst = left
      if (right < this.slots.length && this.worse(right, worst)) worst = right
      if (worst === i) return
      this.swap(i, worst)
      i = worst
    }
  }

  private swap(i: number, j: number): void {
    const a = this.slots[i] as number
    this.slots[i] = this.slots[j] as number
    this.slots[j] = a
  }
}
