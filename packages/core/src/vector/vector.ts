import { ValidationError } from '../errors.ts'
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
  protected data = new Float32Array(0)
  protected ids: string[] = []
  protected readonly slots = new Map<string, number>()
  protected dims: number | null = null
  /**
   * Floats per stored vector: the dimensions rounded up to a multiple of 4, zero-padded, so the
   * scan's unrolled loop needs no remainder loop: with one (and a helper called per vector), the
   * scan ran at half the speed (bench: vector, 13 against 26 queries/s at 100k × 384).
   */
  protected stride = 0

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
      if ((slot + 1) * stride > this.data.length) {
        const grown = new Float32Array(Math.max(stride * 16, this.data.length * 2))
        grown.set(this.data)
        this.data = grown
      }
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
    this.ids.pop()
    this.slots.delete(id)
    if (this.ids.length === 0) {
      // The next vector may have another length: its padding must start as zeros again.
      this.dims = null
      this.data = new Float32Array(0)
    }
    return true
  }

  search(query: Float32Array, limit: number): VectorHit[] {
    const k = this.resultCount(query, limit)
    if (k === 0) return []
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

  /** A derived copy of the vector at `slot` must be (re)computed from `data`. */
  protected stored(_slot: number): void {}

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
