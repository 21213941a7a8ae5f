import { FLOAT_SLACK, type PairSink, type SetsBySize } from './set-layout.ts'

/**
 * An exact join for dense vocabularies, where every word is in a large share of the sets and prefix
 * filtering finds no rare word to narrow the candidates: the pigeonhole principle on the words two
 * sets do not share (PartEnum's first level: Arasu, Ganti and Kaushik, "Efficient exact
 * set-similarity joins", VLDB 2006).
 *
 * A probe x and an earlier set y (|y| ≤ |x|) reach Jaccard t only with an overlap of at least
 * needed = ⌈t(|x| + |y|)/(1 + t)⌉, so they differ in at most |x| + |y| − 2·needed words; over the
 * partner sizes x allows that is at most D(|x|). Split the vocabulary into D(|x|) + 1 classes (word
 * id mod D + 1): the differing words miss at least one class, where x and y then hold exactly the
 * same words. So y is a candidate of x only if, in some class, their words there hash alike. Each
 * set is indexed under the class counts of the probes that may meet it (those up to |y|/t long),
 * one key per class holding a hash of its words there; a hash collision only adds a candidate,
 * which verification (the same merge and division as the prefix join) then turns down.
 *
 * At t = 0.9 a set of 20 words is split in 3 classes of ~7 words each: on a 30-word vocabulary two
 * random sets agree on one with a chance of a few percent, where prefix filtering meets half of
 * them. At low thresholds D grows near the set size, most classes are empty in both sets and agree
 * trivially: there the prefix join wins, and `estimatedCost` lets the caller choose.
 */
/** A bucket look-up or insertion, in postings scanned by the prefix join: measured ~10-20. */
const KEY_COST = 16

export class PartitionJoin {
  /** Class count of the probes of each size: D(size) + 1. */
  private readonly classesFor: Int32Array
  /** The distinct class counts a set of each size is indexed under: `indexClasses[size]`. */
  private readonly indexClasses: Int32Array[]
  /** Key of (class count, class, hash of the words there) → bucket. */
  private readonly bucketOf = new Map<number, number>()
  /** Each bucket's sets in probe order (so in size order: the too short ones are at the front). */
  private readonly buckets: number[][] = []
  private bucketFront = new Int32Array(1_024)
  /** The probe (+1) that last met each set, so a set met in two classes is measured once. */
  private readonly metBy: Int32Array
  /** Scratch: the running hash of each class of the set being keyed. */
  private readonly classHash: Int32Array
  private readonly overlapShare: number

  constructor(
    private readonly sets: SetsBySize,
    private readonly threshold: number,
  ) {
    const { maxSize } = sets
    this.overlapShare = threshold / (1 + threshold)
    this.classesFor = new Int32Array(maxSize + 1)
    let mostClasses = 1
    for (let size = 1; size <= maxSize; size++) {
      let apart = 0
      for (let ySize = this.minPartnerSize(size); ySize <= size; ySize++) {
        apart = Math.max(apart, size + ySize - 2 * this.needed(size, ySize))
      }
      this.classesFor[size] = apart + 1
      mostClasses = Math.max(mostClasses, apart + 1)
    }
    this.indexClasses = [new Int32Array(0)]
    for (let size = 1; size <= maxSize; size++) {
      const counts = new Set<number>()
      // Probes only get longer, and the shortest partner a probe allows only grows with it.
      for (let probe = size; probe <= maxSize && this.minPartnerSize(probe) <= size; probe++)
        counts.add(this.classesFor[probe] as number)
      this.indexClasses.push(Int32Array.from(counts))
    }
    this.metBy = new Int32Array(sets.count)
    this.classHash = new Int32Array(mostClasses)
  }

  private minPartnerSize(size: number): number {
    return Math.max(1, Math.ceil(this.threshold * size - FLOAT_SLACK))
  }

  private needed(size: number, partnerSize: number): number {
    return Math.ceil(this.overlapShare * (size + partnerSize) - FLOAT_SLACK)
  }

  run(sink: PairSink): void {
    for (let x = 0; x < this.sets.count; x++) {
      this.probe(x, sink)
      this.index(x)
    }
  }

  /**
   * What running the join would cost, in postings met (the unit of the prefix join's estimate),
   * counted without running it: every set keyed once under its own class count, the keys sorted,
   * and each run of equal keys counted as the pairs it would hold; plus the key look-ups the run
   * makes, each weighed as KEY_COST postings (a Map operation against a sequential scan).
   */
  estimatedCost(): number {
    const { sets } = this
    let keyed = 0
    let lookups = 0
    for (let x = 0; x < sets.count; x++) {
      const size = sets.sizeOf[x] as number
      keyed += this.classesFor[size] as number
      lookups += this.classesFor[size] as number
      for (const classes of this.indexClasses[size] as Int32Array) lookups += classes
    }
    const keys = new Int32Array(keyed)
    let at = 0
    for (let x = 0; x < sets.count; x++) {
      const classes = this.classesFor[sets.sizeOf[x] as number] as number
      this.hashClasses(x, classes)
      for (let c = 0; c < classes; c++) keys[at++] = this.keyOf(classes, c)
    }
    keys.sort()
    let pairs = 0
    for (let from = 0, to = 0; from < keys.length; from = to) {
      while (to < keys.length && keys[to] === keys[from]) to++
      pairs += ((to - from) * (to - from - 1)) / 2
    }
    return pairs + KEY_COST * lookups
  }

  private probe(x: number, sink: PairSink): void {
    const { sets, buckets, metBy } = this
    const size = sets.sizeOf[x] as number
    const classes = this.classesFor[size] as number
    const shortest = this.minPartnerSize(size)
    this.hashClasses(x, classes)
    for (let c = 0; c < classes; c++) {
      const bucket = this.bucketOf.get(this.keyOf(classes, c))
      if (bucket === undefined) continue
      const members = buckets[bucket] as number[]
      let k = this.bucketFront[bucket] as number
      // Probes only grow, so a set too short now stays too short: skip it for good.
      while (k < members.length && (sets.sizeOf[members[k] as number] as number) < shortest) k++
      this.bucketFront[bucket] = k
      for (; k < members.length; k++) {
        const y = members[k] as number
        if (metBy[y] === x + 1) continue
        metBy[y] = x + 1
        const ySize = sets.sizeOf[y] as number
        const shared = sets.overlapAtLeast(x, y, this.needed(size, ySize))
        if (shared < 0) continue
        const similarity = shared / (size + ySize - shared)
        if (similarity >= this.threshold)
          sink.pair(sets.entryOf[x] as number, sets.entryOf[y] as number, similarity)
      }
    }
  }

  private index(x: number): void {
    const size = this.sets.sizeOf[x] as number
    for (const classes of this.indexClasses[size] as Int32Array) {
      this.hashClasses(x, classes)
      for (let c = 0; c < classes; c++) {
        const key = this.keyOf(classes, c)
        let bucket = this.bucketOf.get(key)
        if (bucket === undefined) {
          bucket = this.buckets.length
          this.bucketOf.set(key, bucket)
          this.buckets.push([])
          if (bucket === this.bucketFront.length) {
            const grown = new Int32Array(bucket * 2)
            grown.set(this.bucketFront)
            this.bucketFront = grown
          }
        }
        ;(this.buckets[bucket] as number[]).push(x)
      }
    }
  }

  /** FNV-1a over the ids of x's words in each of `classes` classes, seeded by the class. */
  private hashClasses(x: number, classes: number): void {
    const { classHash } = this
    const { tokens, setStart } = this.sets
    for (let c = 0; c < classes; c++) classHash[c] = Math.imul(0x811c9dc5 ^ c, 0x01000193)
    for (let k = setStart[x] as number; k < (setStart[x + 1] as number); k++) {
      const word = tokens[k] as number
      const c = word % classes
      classHash[c] = Math.imul((classHash[c] as number) ^ word, 0x01000193)
    }
  }

  /** One small integer per (class count, class, words there): a Map's fastest key. */
  private keyOf(classes: number, c: number): number {
    let h = Math.imul((this.classHash[c] as number) ^ Math.imul(classes, 0x9e3779b1), 0x85ebca6b)
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35)
    h ^= h >>> 16
    // Positive and within a small integer, so V8 keeps the key unboxed.
    return h & 0x3fffffff
  }
}
