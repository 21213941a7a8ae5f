import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'
import { alignTo64, ScanKernel } from './kernel/scan-kernel.ts'
import { TopK } from './top-k.ts'

/** Embeddings are stored as raw little-endian Float32 bytes (spec: memory_vectors blobs). */
export function vectorToBytes(vector: Float32Array | readonly number[]): Uint8Array {
  const floats = vector instanceof Float32Array ? vector : Float32Array.from(vector)
  const bytes = new Uint8Array(floats.length * 4)
  const view = new DataView(bytes.buffer)
  for (let i = 0; i < floats.length; i++) view.setFloat32(i * 4, floats[i] as number, true)
  return bytes
}

/** Copies first: a blob's bytes may start at an offset a Float32Array cannot be aligned to. */
export function bytesToVector(bytes: Uint8Array): Float32Array {
  if (bytes.byteLength % 4 !== 0) {
    throw new ValidationError([
      { field: 'vector', message: `byte length ${bytes.byteLength} is not a multiple of 4` },
    ])
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const out = new Float32Array(bytes.byteLength / 4)
  for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true)
  return out
}

export function vectorNorm(vector: ArrayLike<number>): number {
  let sum = 0
  for (let i = 0; i < vector.length; i++) sum += (vector[i] as number) ** 2
  return Math.sqrt(sum)
}

/** dot(a, b) / (‖a‖ ‖b‖); 0 when either is the zero vector. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new ValidationError([
      { field: 'vector', message: `dimension ${b.length} does not match ${a.length}`, limit: a.length },
    ])
  }
  let dot = 0
  for (let i = 0; i < a.length; i++) dot += (a[i] as number) * (b[i] as number)
  const norms = vectorNorm(a) * vectorNorm(b)
  return norms === 0 ? 0 : dot / norms
}

/** Floats (or bytes) per stored vector: `dimensions` rounded up to a multiple of 4. */
export function paddedLength(dimensions: number): number {
  return Math.ceil(dimensions / 4) * 4
}

/**
 * From this many vectors an index moves them into a WebAssembly SIMD kernel's memory (see
 * kernel/scan-kernel.ts). Each kernel memory reserves address space (V8 on x64: ~10 GB of it, and
 * it refused a 13,090th memory here), so the thousands of small per-agent indexes a server holds
 * stay in JavaScript, where 1,024 × 384 dims scans in well under a millisecond anyway.
 */
export const DEFAULT_KERNEL_ABOVE = 1_024

export const VectorScanConfigSchema = z.object({
  /**
   * 'auto' scans with the SIMD kernel where WebAssembly SIMD is available (falling back to
   * JavaScript where not); 'javascript' never uses it (e.g. to compare the two).
   */
  kernel: z.enum(['auto', 'javascript']).default('auto'),
  /** Indexes holding at least this many vectors use the kernel. */
  kernelAbove: z.number().int().min(0).max(1_000_000_000).default(DEFAULT_KERNEL_ABOVE),
})
export type VectorScanConfig = z.infer<typeof VectorScanConfigSchema>

/** Vectors one kernel call scores: its candidates (4 + 8 bytes each) then stay in the L1/L2 cache. */
const KERNEL_BLOCK = 4_096

export interface VectorHit {
  id: string
  similarity: number
}

/** What a vector index offers; a faster (approximate) index implements the same. */
export interface VectorIndex {
  readonly dimensions: number | null
  readonly size: number
  upsert(id: string, vector: Float32Array): void
  remove(id: string): boolean
  search(query: Float32Array, limit: number): VectorHit[]
}

/**
 * Exact cosine search (spec 000: a brute-force scan, fine for thousands per agent). Vectors are
 * stored normalised in one contiguous buffer, so a query is one pass of dot products with the
 * query's norm computed once, keeping a bounded top-k instead of sorting every score.
 *
 * Subclasses keep derived copies of the vectors (e.g. an int8 one) in step through `stored` and
 * `moved`, and reuse `rescore` for exact scores of a few slots.
 */
export class ExactVectorIndex implements VectorIndex {
  /**
   * The vectors, `stride` floats apart: a plain array, or a view into `kernel`'s memory (replaced
   * whenever that memory grows, which detaches the old view).
   */
  protected data = new Float32Array(0)
  protected readonly scanConfig: VectorScanConfig
  /** Where the vectors live when the SIMD kernel scans them; null while they live in `data` alone. */
  private kernel: ScanKernel | null = null
  /** Set once a kernel could not be had or grown: this index then stays in JavaScript. */
  private kernelRefused = false
  /**
   * Byte offsets in the kernel's memory: query, the pre-filter's slots and scores (also the
   * rescoring's candidates and scores), the query's non-zero dimensions, then the vectors.
   */
  private kernelLayout = { query: 0, slots: 0, scores: 0, dims: 0, vectors: 0 }
  protected ids: string[] = []
  protected readonly slots = new Map<string, number>()
  protected dims: number | null = null
  /**
   * Floats per stored vector: the dimensions rounded up to a multiple of 4, zero-padded, so the
   * scan's unrolled loop needs no remainder loop: with one (and a helper called per vector), the
   * scan ran at half the speed (bench: vector, 13 against 26 queries/s at 100k × 384).
   */
  protected stride = 0

  constructor(config: Partial<VectorScanConfig> = {}) {
    this.scanConfig = parseWith(VectorScanConfigSchema, config, 'vectorScan')
  }

  /** Whether searches run on the SIMD kernel (else in JavaScript). */
  get usesKernel(): boolean {
    return this.kernel !== null
  }

  get dimensions(): number | null {
    return this.dims
  }

  get size(): number {
    return this.ids.length
  }

  has(id: string): boolean {
    return this.slots.has(id)
  }

  /** A copy of the ids, in slot order. */
  idList(): string[] {
    return [...this.ids]
  }

  /** The stored (normalised) vector of `id`: a view into the buffer, valid until the next write. */
  vectorOf(id: string): Float32Array | undefined {
    const slot = this.slots.get(id)
    if (slot === undefined) return undefined
    const offset = slot * this.stride
    return this.data.subarray(offset, offset + (this.dims as number))
  }

  /** The stored (normalised) vectors with their ids; views into the buffer, valid until the next write. */
  *entries(): IterableIterator<[string, Float32Array]> {
    const dims = this.dims ?? 0
    for (let slot = 0; slot < this.ids.length; slot++) {
      const offset = slot * this.stride
      yield [this.ids[slot] as string, this.data.subarray(offset, offset + dims)]
    }
  }

  upsert(id: string, vector: Float32Array): void {
    this.checkDimensions(vector.length)
    if (this.dims === null) {
      this.dims = vector.length
      this.stride = paddedLength(vector.length)
    }
    const dims = this.dims
    const stride = this.stride
    let slot = this.slots.get(id)
    if (slot === undefined) {
      slot = this.ids.length
      if ((slot + 1) * stride > this.data.length) this.grow(Math.max(16, (slot + 1) * 2))
      this.ids.push(id)
      this.slots.set(id, slot)
    }
    // A stored zero vector stays zeros: it scores 0 against every query instead of NaN.
    const norm = vectorNorm(vector)
    const offset = slot * stride
    for (let i = 0; i < dims; i++) this.data[offset + i] = norm === 0 ? 0 : (vector[i] as number) / norm
    // The padding is zeros already: a slot is only ever written with vectors of this length.
    this.stored(slot)
  }

  remove(id: string): boolean {
    const slot = this.slots.get(id)
    if (slot === undefined || this.dims === null) return false
    // Move the last vector into the hole so the buffer stays dense.
    const last = this.ids.length - 1
    const lastId = this.ids[last] as string
    if (slot !== last) {
      this.data.copyWithin(slot * this.stride, last * this.stride, (last + 1) * this.stride)
      this.ids[slot] = lastId
      this.slots.set(lastId, slot)
      this.moved(last, slot)
    }
    // The freed slot is zeroed so a deleted vector leaves no copy behind, here or in a subclass's.
    this.data.fill(0, last * this.stride, (last + 1) * this.stride)
    this.cleared(last)
    this.ids.pop()
    this.slots.delete(id)
    if (this.ids.length === 0) {
      // The next vector may have another length: its padding must start as zeros again. The
      // kernel's memory goes too (wasm memory cannot shrink), so an emptied index holds nothing.
      this.dims = null
      this.data = new Float32Array(0)
      this.kernel = null
    }
    return true
  }

  /** Whether an index of `slots` vectors should scan with the kernel (also for subclasses' copies). */
  protected kernelWanted(slots: number): boolean {
    return !this.kernelRefused && this.scanConfig.kernel === 'auto' && slots >= this.scanConfig.kernelAbove
  }

  /**
   * Room for `slots` vectors, in the kernel's memory once the index is large enough: the vectors
   * are copied there once, then kept in step by writes through `data`, so no query copies them.
   */
  private grow(slots: number): void {
    const floats = slots * this.stride
    if (this.kernelWanted(slots)) {
      const kernel = this.kernel ?? ScanKernel.create()
      if (kernel !== null) {
        const strideBytes = this.stride * 4
        const query = 0
        const slotsAt = alignTo64(strideBytes)
        const scores = slotsAt + KERNEL_BLOCK * 4
        const dims = scores + KERNEL_BLOCK * 8
        const vectors = dims + alignTo64(strideBytes)
        if (kernel.reserve(vectors + floats * 4)) {
          const grown = new Float32Array(kernel.buffer, vectors, floats)
          // A grown memory keeps its contents, but the old view is detached: copy only when the
          // vectors come from a plain array.
          if (this.kernel === null) grown.set(this.data)
          this.kernel = kernel
          this.kernelLayout = { query, slots: slotsAt, scores, dims, vectors }
          this.data = grown
          return
        }
      }
      this.kernelRefused = true
    }
    const grown = new Float32Array(floats)
    grown.set(this.data.subarray(0, Math.min(this.data.length, floats)))
    this.data = grown
    this.kernel = null
  }

  search(query: Float32Array, limit: number): VectorHit[] {
    const k = this.resultCount(query, limit)
    if (k === 0) return []
    if (this.kernel !== null) return this.hits(this.kernelScan(this.kernel, query, k), vectorNorm(query))
    const stride = this.stride
    const padded = this.padded(query)
    const top = new TopK(k)
    const data = this.data
    const end = this.ids.length * stride
    // Raw dot products are ranked; dividing by the query's norm does not change the order. The
    // dot product is written out in the loop: four accumulators let the CPU overlap additions.
    for (let offset = 0, slot = 0; offset < end; offset += stride, slot++) {
      let a = 0
      let b = 0
      let c = 0
      let d = 0
      for (let i = 0; i < stride; i += 4) {
        const o = offset + i
        a += (data[o] as number) * (padded[i] as number)
        b += (data[o + 1] as number) * (padded[i + 1] as number)
        c += (data[o + 2] as number) * (padded[i + 2] as number)
        d += (data[o + 3] as number) * (padded[i + 3] as number)
      }
      const dot = a + b + c + d
      if (dot > top.threshold) top.push(dot, slot)
    }
    return this.hits(top, vectorNorm(query))
  }

  /**
   * The scan on the kernel, in blocks: the kernel keeps only scores above the threshold the block
   * starts with, so JavaScript handles a few candidates per block instead of every score.
   */
  private kernelScan(kernel: ScanKernel, query: Float32Array, k: number): TopK {
    const layout = this.kernelLayout
    const buffer = kernel.buffer
    const strideBytes = this.stride * 4
    const queryView = new Float32Array(buffer, layout.query, this.stride)
    queryView.fill(0)
    queryView.set(query)
    const slots = new Int32Array(buffer, layout.slots, KERNEL_BLOCK)
    const scores = new Float64Array(buffer, layout.scores, KERNEL_BLOCK)
    const top = new TopK(k)
    const size = this.ids.length
    for (let start = 0; start < size; start += KERNEL_BLOCK) {
      const count = Math.min(KERNEL_BLOCK, size - start)
      const base = layout.vectors + start * strideBytes
      const kept = kernel.dotScanAbove(
        layout.query,
        base,
        count,
        strideBytes,
        top.threshold,
        layout.slots,
        layout.scores,
      )
      for (let i = 0; i < kept; i++) {
        const score = scores[i] as number
        if (score > top.threshold) top.push(score, start + (slots[i] as number))
      }
    }
    return top
  }

  /** A derived copy of the vector at `slot` must be (re)computed from `data`. */
  protected stored(_slot: number): void {}

  /** The slot `slot` no longer holds a vector: a derived copy of it must be erased. */
  protected cleared(_slot: number): void {}

  /** The vector at `from` now lives at `to` (dense removal). */
  protected moved(_from: number, _to: number): void {}

  /**
   * How many hits a search returns, 0 when there is nothing to search (validating the query).
   * `!(limit >= 1)` also turns NaN away; a fractional limit means its whole part; a zero query has
   * no direction, so every similarity would be 0/0 and nothing is "near" it.
   */
  protected resultCount(query: Float32Array, limit: number): number {
    if (this.dims === null || this.ids.length === 0 || !(limit >= 1)) return 0
    this.checkDimensions(query.length)
    if (vectorNorm(query) === 0) return 0
    return Math.min(Math.floor(limit), this.ids.length)
  }

  /** The query copied to `stride` floats, zeros after its dimensions. */
  protected padded(query: Float32Array): Float32Array {
    if (query.length === this.stride) return query
    const padded = new Float32Array(this.stride)
    padded.set(query)
    return padded
  }

  /** Exact dot products of the query with the vectors at `candidates`, best `k` kept. */
  protected rescore(query: Float32Array, candidates: Int32Array, count: number, k: number): TopK {
    const dims = this.dims as number
    const stride = this.stride
    const data = this.data
    const top = new TopK(k)
    for (let n = 0; n < count; n++) {
      const slot = candidates[n] as number
      const offset = slot * stride
      let dot = 0
      for (let i = 0; i < dims; i++) dot += (data[offset + i] as number) * (query[i] as number)
      if (dot > top.threshold) top.push(dot, slot)
    }
    return top
  }

  /**
   * `rescore` over the query's non-zero dimensions only: the same sums (the others add zeros), and
   * a short query's ~30 of 384 leave most of each candidate's vector unread. On the kernel when the
   * vectors live there (bit-identical: the same f64 sums in the same order), since each candidate
   * costs a few dozen scattered reads into a large buffer, which JavaScript issues more slowly.
   */
  protected rescoreSparse(query: Float32Array, candidates: Int32Array, count: number, k: number): TopK {
    const dims = this.dims as number
    let nonZero = 0
    const at = new Int32Array(dims)
    for (let i = 0; i < dims; i++) if ((query[i] as number) !== 0) at[nonZero++] = i
    const top = new TopK(k)
    if (this.kernel !== null) {
      this.kernelRescore(this.kernel, query, at, nonZero, candidates, count, top)
      return top
    }
    const stride = this.stride
    const data = this.data
    for (let n = 0; n < count; n++) {
      const slot = candidates[n] as number
      const offset = slot * stride
      let dot = 0
      for (let j = 0; j < nonZero; j++) {
        const i = at[j] as number
        dot += (data[offset + i] as number) * (query[i] as number)
      }
      if (dot > top.threshold) top.push(dot, slot)
    }
    return top
  }

  private kernelRescore(
    kernel: ScanKernel,
    query: Float32Array,
    at: Int32Array,
    nonZero: number,
    candidates: Int32Array,
    count: number,
    top: TopK,
  ): void {
    const layout = this.kernelLayout
    const buffer = kernel.buffer
    const queryView = new Float32Array(buffer, layout.query, this.stride)
    queryView.fill(0)
    queryView.set(query)
    const offsets = new Int32Array(buffer, layout.dims, nonZero)
    for (let j = 0; j < nonZero; j++) offsets[j] = (at[j] as number) * 4
    const slots = new Int32Array(buffer, layout.slots, KERNEL_BLOCK)
    const scores = new Float64Array(buffer, layout.scores, KERNEL_BLOCK)
    for (let start = 0; start < count; start += KERNEL_BLOCK) {
      const block = Math.min(KERNEL_BLOCK, count - start)
      slots.set(candidates.subarray(start, start + block))
      kernel.sparseDots(
        layout.query,
        layout.dims,
        nonZero,
        layout.vectors,
        this.stride * 4,
        layout.slots,
        block,
        layout.scores,
      )
      for (let i = 0; i < block; i++) {
        const dot = scores[i] as number
        if (dot > top.threshold) top.push(dot, slots[i] as number)
      }
    }
  }

  protected hits(top: TopK, queryNorm: number): VectorHit[] {
    return top.sorted().map(({ slot, score }) => ({
      id: this.ids[slot] as string,
      similarity: score / queryNorm,
    }))
  }

  protected checkDimensions(length: number): void {
    if (this.dims !== null && length !== this.dims) {
      throw new ValidationError([
        { field: 'vector', message: `must have ${this.dims} dimensions (got ${length})`, limit: this.dims },
      ])
    }
  }
}
