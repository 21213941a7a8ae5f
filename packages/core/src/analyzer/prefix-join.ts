import { FLOAT_SLACK, type PairSink, type SetsBySize } from './set-layout.ts'

// An overlap count that positional filtering has ruled out for the current probe.
const PRUNED = -1

/**
 * PPJoin (Xiao et al., "Efficient similarity joins for near duplicate detection"): sets are probed
 * shortest first, each against the sets indexed before it, then indexed by their own prefix. Word
 * ids rank words rarest first, so a set's prefix is its rarest words: on conversation text few
 * sets share them. Each step is a method called once per set, not one long loop, so V8 optimizes
 * them as functions instead of entering a long loop half-way (on-stack replacement) and falling
 * out of it again.
 */
export class PrefixJoin {
  /**
   * Postings per word, laid out up front: a word's list is appended to in probe order, which is
   * size order, so the sets too short for the current probe are always at the front of a list.
   * Each posting is (set, position of the word in it, set size), side by side for a sequential
   * scan.
   */
  private readonly listStart: Int32Array
  private readonly listEnd: Int32Array
  private readonly posting: Int32Array
  /** Prefix overlap of each earlier set with the current probe, or PRUNED; 0 between probes. */
  private readonly overlap: Int32Array
  private readonly candidates: Int32Array
  /** The overlap a partner of each size needs, for the current probe. */
  private readonly neededWith: Int32Array
  /** t / (1 + t): the pair (x, y) needs an overlap of at least this × (|x| + |y|). */
  private readonly overlapShare: number

  constructor(
    private readonly sets: SetsBySize,
    private readonly threshold: number,
  ) {
    const m = sets.count
    this.overlapShare = threshold / (1 + threshold)
    const { vocabulary } = sets
    const listStart = new Int32Array(vocabulary + 1)
    for (let p = 0; p < m; p++) {
      const s = sets.setStart[p] as number
      const prefix = this.indexedPrefix(sets.sizeOf[p] as number)
      for (let k = 0; k < prefix; k++) {
        const slot = (sets.tokens[s + k] as number) + 1
        listStart[slot] = (listStart[slot] as number) + 3
      }
    }
    for (let w = 1; w <= vocabulary; w++)
      listStart[w] = (listStart[w] as number) + (listStart[w - 1] as number)
    this.listStart = listStart
    this.listEnd = listStart.slice(0, vocabulary)
    this.posting = new Int32Array(listStart[vocabulary] as number)
    this.overlap = new Int32Array(m)
    this.candidates = new Int32Array(m)
    this.neededWith = new Int32Array(sets.maxSize + 1)
  }

  run(sink: PairSink): void {
    for (let x = 0; x < this.sets.count; x++) {
      const found = this.gatherCandidates(x)
      this.verify(x, found, sink)
      this.index(x)
    }
  }

  /**
   * The postings the probes would meet, counted without running the join (positions and sizes not
   * filtered): what gathering candidates would cost, to weigh against the partition join's.
   */
  estimatedPairs(): number {
    const { sets, threshold } = this
    const indexed = new Int32Array(sets.vocabulary)
    let pairs = 0
    for (let x = 0; x < sets.count; x++) {
      const from = sets.setStart[x] as number
      const size = sets.sizeOf[x] as number
      const probePrefix = Math.min(size, size - Math.ceil(threshold * size - FLOAT_SLACK) + 1)
      for (let k = 0; k < probePrefix; k++) pairs += indexed[sets.tokens[from + k] as number] as number
      const prefix = this.indexedPrefix(size)
      for (let k = 0; k < prefix; k++) {
        const word = sets.tokens[from + k] as number
        indexed[word] = (indexed[word] as number) + 1
      }
    }
    return pairs
  }

  /**
   * A partner x of y (|x| ≥ |y|) needs an overlap of at least t/(1+t)·(|x|+|y|) ≥ 2t/(1+t)·|y|,
   * so y only has to be findable by its first |y| − ⌈2t/(1+t)·|y|⌉ + 1 words: the index holds those.
   */
  private indexedPrefix(size: number): number {
    return Math.max(0, Math.min(size, size - Math.ceil(2 * this.overlapShare * size - FLOAT_SLACK) + 1))
  }

  /** Sets sharing a word with x's probe prefix, of a size and word positions that allow t. */
  private gatherCandidates(x: number): number {
    const { listStart, listEnd, posting, overlap, candidates, neededWith, threshold } = this
    const { tokens } = this.sets
    const xs = this.sets.setStart[x] as number
    const xSize = this.sets.sizeOf[x] as number
    const minPartnerSize = threshold * xSize - FLOAT_SLACK
    const probePrefix = Math.min(xSize, xSize - Math.ceil(threshold * xSize - FLOAT_SLACK) + 1)
    for (let ySize = Math.max(1, Math.ceil(minPartnerSize)); ySize <= xSize; ySize++) {
      neededWith[ySize] = Math.ceil(this.overlapShare * (xSize + ySize) - FLOAT_SLACK)
    }
    let found = 0
    for (let i = 0; i < probePrefix; i++) {
      const word = tokens[xs + i] as number
      let k = listStart[word] as number
      const end = listEnd[word] as number
      // Probes only grow, so a set too short now stays too short: drop it from the list for good.
      while (k < end && (posting[k + 2] as number) < minPartnerSize) k += 3
      listStart[word] = k
      for (; k < end; k += 3) {
        const y = posting[k] as number
        const sofar = overlap[y] as number
        if (sofar === PRUNED) continue
        if (sofar === 0) candidates[found++] = y
        const ySize = posting[k + 2] as number
        // Both runs are in one global order, so past this shared word only their tails can match.
        const reachable = sofar + 1 + Math.min(xSize - i - 1, ySize - (posting[k + 1] as number) - 1)
        overlap[y] = reachable >= (neededWith[ySize] as number) ? sofar + 1 : PRUNED
      }
    }
    return found
  }

  /** Measures each surviving candidate against x, and reports those at or above the threshold. */
  private verify(x: number, found: number, sink: PairSink): void {
    const { overlap, candidates, neededWith, sets } = this
    const xSize = sets.sizeOf[x] as number
    for (let c = 0; c < found; c++) {
      const y = candidates[c] as number
      const prefixOverlap = overlap[y] as number
      overlap[y] = 0
      if (prefixOverlap === PRUNED) continue
      const ySize = sets.sizeOf[y] as number
      const shared = sets.overlapAtLeast(x, y, neededWith[ySize] as number)
      if (shared < 0) continue
      const similarity = shared / (xSize + ySize - shared)
      if (similarity < this.threshold) continue
      sink.pair(sets.entryOf[x] as number, sets.entryOf[y] as number, similarity)
    }
  }

  private index(x: number): void {
    const { tokens, setStart, sizeOf } = this.sets
    const xs = setStart[x] as number
    const xSize = sizeOf[x] as number
    const prefix = this.indexedPrefix(xSize)
    for (let k = 0; k < prefix; k++) {
      const word = tokens[xs + k] as number
      const slot = this.listEnd[word] as number
      this.posting[slot] = x
      this.posting[slot + 1] = k
      this.posting[slot + 2] = xSize
      this.listEnd[word] = slot + 3
    }
  }
}
