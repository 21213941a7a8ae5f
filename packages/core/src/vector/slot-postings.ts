import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'
import type { ApproximateVectorIndex } from './adaptive.ts'
import { IMPACT_BITS, IMPACT_SCALE, PostingLists } from './posting-lists.ts'
import { ExactVectorIndex, type VectorHit, type VectorScanConfig, vectorNorm } from './vector.ts'

/**
 * Tuning of the slot-postings index. Defaults measured on the offline hashing embedder's vectors
 * of synthetic conversation turns with WordNet synonyms, short search-like queries (bench: vector,
 * "offline embedder" rows, see docs/speed-ann18.md).
 */
export const SlotPostingsConfigSchema = z.object({
  /**
   * A stored vector's value in a dimension is listed when its magnitude reaches this (vectors are
   * normalised). The hashing embedder puts a whole feature's weight into one dimension, so a word or
   * synonym group a text holds shows as a large value there, while trigram shares and hash
   * collisions stay small; listing only the large values keeps the lists short.
   */
  minImpact: z.number().min(0).max(1).default(0.05),
  /**
   * Candidates (best partial scores from the lists) scored exactly; the search breadth that
   * calibration tunes, like HNSW's efSearch. Never below the search's limit.
   */
  candidates: z.number().int().min(1).max(100_000).default(64),
  /**
   * Candidates scored exactly per hit asked for, when that is more than `candidates`: search asks
   * the vector leg for its fusion pool (limit × MMR's fetch multiplier × 3, 150-225 at limit 25),
   * and with only as many candidates as hits the lists' partial scores alone decided which texts
   * made the pool (recall@5 inside a 100K history: 2 points under the exact scan). At 10 hits
   * 64 candidates, 6.4 per hit, reach recall@10 0.995 and 3.2 per hit 0.979 (docs/speed-ann18.md).
   */
  candidatesPerHit: z.number().min(1).max(100).default(4),
  /**
   * Query dimensions looked up, largest magnitude first, until they hold this share of the query's
   * squared norm: a short query's words and synonym groups hold most of it, its trigram shares little,
   * and what the rest adds is counted by the exact rescoring. 1 looks up every non-zero dimension.
   */
  queryMass: z.number().min(0).max(1).default(0.85),
})
export type SlotPostingsConfig = z.infer<typeof SlotPostingsConfigSchema>
export const DEFAULT_SLOT_POSTINGS_CONFIG: SlotPostingsConfig = SlotPostingsConfigSchema.parse({})

const STAMP_NONE = 0
const STAMP_HASH = 1
const STAMP_OTHER = 2
const HASH_BYTES = 32
const HASH_STAMP = /^[0-9a-f]{64}$/
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** Slots an entry can name: 2^23, 8M vectors per index. */
export const SLOT_POSTINGS_MAX_VECTORS = 2 ** (31 - IMPACT_BITS)

/**
 * Approximate search for vectors that are sums of hashed features (the offline embedder's): an
 * inverted index from (dimension, sign) to the vectors with a large value there. A short query is
 * sparse (only its own features' dimensions are non-zero), and a stored text can only score high
 * against it by holding large values of the same sign in those dimensions, i.e. by sharing its
 * words, synonym groups or spellings. A search adds up `|q_i| × |d_i|` over the query's lists into
 * per-vector partial scores, then scores the best `candidates` exactly from the stored vectors.
 *
 * Graph indexes need efSearch 768 on these vectors (near-isotropic, high intrinsic dimension) for
 * recall@10 0.97; the lists instead follow the features the texts share, which is what the exact
 * ranking rests on too.
 *
 * Writes are O(listed values): a slot is appended to its lists, and removed by a scan of the lists
 * its vector is in (the vector tells which). Everything lives in memory and rebuilds from the
 * vectors in one pass (~1.5 s CPU per 100k at 384 dims), so nothing is saved.
 */
export class SlotPostingsIndex extends ExactVectorIndex implements ApproximateVectorIndex {
  /**
   * One list per (dimension, sign): the slots whose vector has a large value of that sign there.
   * Each entry is `slot << 8 | impact`, the value's magnitude as 0-255 for 0-1, so partial scores
   * need no read of the vector and a search reads one Int32 per entry (two arrays ran slower: one
   * more load each). Held, with the search's partial scores, in the scan kernel's memory from
   * `kernelAbove` vectors (see PostingLists); null until the first vector gives the width.
   */
  private lists: PostingLists | null = null
  /**
   * Stamps by slot. The stores stamp with a SHA-256 of the text (64 hex digits), kept here as its
   * 32 bytes: as strings in a Map by id they cost ~110 bytes a vector (the string, the entry, a second
   * reference to the id), 10 MiB per 100K. Any other stamp stays a string in `otherStamps`.
   */
  private stampBytes = new Uint8Array(0)
  private stampState = new Uint8Array(0)
  private readonly otherStamps = new Map<string, string>()
  private readonly config: SlotPostingsConfig
  private breadth: number

  constructor(config: Partial<SlotPostingsConfig> = {}, scan: Partial<VectorScanConfig> = {}) {
    super(scan)
    this.config = parseWith(SlotPostingsConfigSchema, config, 'slotPostings')
    this.breadth = this.config.candidates
  }

  get searchBreadth(): number {
    return this.breadth
  }

  setSearchBreadth(breadth: number): void {
    this.breadth = Math.max(1, Math.floor(breadth))
  }

  stampOf(id: string): string | undefined {
    const slot = this.slots.get(id)
    if (slot === undefined) return undefined
    const state = this.stampState[slot]
    if (state === STAMP_OTHER) return this.otherStamps.get(id)
    if (state !== STAMP_HASH) return undefined
    let hex = ''
    for (let i = slot * HASH_BYTES; i < (slot + 1) * HASH_BYTES; i++) hex += HEX[this.stampBytes[i] as number]
    return hex
  }

  /** Whether searches add up the lists on the WebAssembly kernel (else in JavaScript). */
  get listsUseKernel(): boolean {
    return this.lists?.usesKernel ?? false
  }

  /** Gives back the lists' growth slack (runs grow by half, and a growing buffer keeps as much room again): after a build. */
  trim(): void {
    this.lists?.trim()
    const slots = this.ids.length + 16
    if (this.stampState.length > slots) {
      this.stampState = this.stampState.slice(0, slots)
      this.stampBytes = this.stampBytes.slice(0, slots * HASH_BYTES)
    }
  }

  private setStamp(id: string, slot: number, stamp: string | undefined): void {
    if (slot >= this.stampState.length) {
      const capacity = Math.max(16, slot + 1, this.stampState.length * 2)
      const state = new Uint8Array(capacity)
      state.set(this.stampState)
      this.stampState = state
      const bytes = new Uint8Array(capacity * HASH_BYTES)
      bytes.set(this.stampBytes)
      this.stampBytes = bytes
    }
    this.otherStamps.delete(id)
    if (stamp === undefined) this.stampState[slot] = STAMP_NONE
    else if (HASH_STAMP.test(stamp)) {
      this.stampState[slot] = STAMP_HASH
      for (let i = 0; i < HASH_BYTES; i++)
        this.stampBytes[slot * HASH_BYTES + i] = Number.parseInt(stamp.slice(i * 2, i * 2 + 2), 16)
    } else {
      this.stampState[slot] = STAMP_OTHER
      this.otherStamps.set(id, stamp)
    }
  }

  /** Listed values in all: what the lists cost in memory (5 bytes each). */
  get postingCount(): number {
    return this.lists?.entryCount ?? 0
  }

  override upsert(id: string, vector: Float32Array, stamp?: string): void {
    const existing = this.slots.get(id)
    if (existing !== undefined) this.unlist(existing, existing)
    else if (this.ids.length >= SLOT_POSTINGS_MAX_VECTORS)
      throw new ValidationError([
        {
          field: 'vector',
          message: `an index holds at most ${SLOT_POSTINGS_MAX_VECTORS} vectors`,
          limit: SLOT_POSTINGS_MAX_VECTORS,
        },
      ])
    super.upsert(id, vector)
    this.setStamp(id, this.slots.get(id) as number, stamp)
  }

  override remove(id: string): boolean {
    const slot = this.slots.get(id)
    if (slot === undefined) return false
    this.unlist(slot, slot)
    this.otherStamps.delete(id)
    super.remove(id)
    if (this.ids.length === 0) {
      this.lists?.clear()
      this.lists = null
    }
    return true
  }

  protected override stored(slot: number): void {
    const dims = this.dims as number
    this.lists ??= new PostingLists(2 * dims, (slots) => this.kernelWanted(slots))
    const lists = this.lists
    lists.reserveSlots(slot + 1)
    const { minImpact } = this.config
    const offset = slot * this.stride
    for (let i = 0; i < dims; i++) {
      const value = this.data[offset + i] as number
      const magnitude = Math.abs(value)
      if (magnitude < minImpact || magnitude === 0) continue
      lists.append(2 * i + (value < 0 ? 1 : 0), (slot << IMPACT_BITS) | Math.round(magnitude * IMPACT_SCALE))
    }
  }

  /** The last vector moved into `to` (dense removal): its list entries are renamed. */
  protected override moved(from: number, to: number): void {
    this.stampState[to] = this.stampState[from] as number
    this.stampBytes.copyWithin(to * HASH_BYTES, from * HASH_BYTES, (from + 1) * HASH_BYTES)
    this.forEachList(to, (lists, list) => {
      const at = lists.indexOf(list, from)
      if (at >= 0) lists.rename(list, at, to)
    })
  }

  /** A freed slot keeps no stamp (nor its bytes). */
  protected override cleared(slot: number): void {
    if (slot >= this.stampState.length) return
    this.stampState[slot] = STAMP_NONE
    this.stampBytes.fill(0, slot * HASH_BYTES, (slot + 1) * HASH_BYTES)
  }

  /** Drops `slot` from the lists of the vector stored at `at` (itself, before it is overwritten). */
  private unlist(slot: number, at: number): void {
    this.forEachList(at, (lists, list) => {
      const index = lists.indexOf(list, slot)
      if (index >= 0) lists.removeAt(list, index)
    })
  }

  /** Calls `visit` with each list the vector stored at `slot` is in. */
  private forEachList(slot: number, visit: (lists: PostingLists, list: number) => void): void {
    const lists = this.lists
    if (lists === null) return
    const dims = this.dims as number
    const { minImpact } = this.config
    const offset = slot * this.stride
    for (let i = 0; i < dims; i++) {
      const value = this.data[offset + i] as number
      const magnitude = Math.abs(value)
      if (magnitude < minImpact || magnitude === 0) continue
      visit(lists, 2 * i + (value < 0 ? 1 : 0))
    }
  }

  override search(query: Float32Array, limit: number): VectorHit[] {
    const k = this.resultCount(query, limit)
    if (k === 0) return []
    const count = this.ids.length
    const lists = this.lists as PostingLists
    for (const dimension of this.queryDimensions(query)) {
      const value = query[dimension] as number
      // A positive contribution needs the stored value's sign to match the query's.
      lists.accumulate(2 * dimension + (value < 0 ? 1 : 0), Math.abs(value) / IMPACT_SCALE)
    }
    const breadth = Math.min(count, Math.max(Math.ceil(k * this.config.candidatesPerHit), this.breadth))
    // One pass over every slot rather than a list of the touched ones: the lists of a few common
    // words reach most vectors anyway, and a branch per posting cost more than the pass. `best`
    // holds min(count, breadth) ≥ k candidates even when few vectors share anything with the
    // query (the rest score 0 and are rescored like any other).
    const best = lists.select(count, breadth)
    return this.hits(this.rescoreSparse(query, best.slots, best.size, k), vectorNorm(query))
  }

  /** The query's largest dimensions, holding `queryMass` of its squared norm. */
  private queryDimensions(query: Float32Array): number[] {
    const dims = this.dims as number
    const nonZero: number[] = []
    let mass = 0
    for (let i = 0; i < dims; i++) {
      const value = query[i] as number
      if (value !== 0) {
        nonZero.push(i)
        mass += value * value
      }
    }
    const { queryMass } = this.config
    if (queryMass >= 1) return nonZero
    nonZero.sort((a, b) => Math.abs(query[b] as number) - Math.abs(query[a] as number))
    const wanted = queryMass * mass
    let held = 0
    let taken = 0
    while (taken < nonZero.length && held < wanted) {
      held += (query[nonZero[taken] as number] as number) ** 2
      taken++
    }
    return nonZero.slice(0, taken)
  }
}
