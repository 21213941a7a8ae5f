import { ValidationError } from '../errors.ts'

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

/**
 * dot(data[offset..offset+dims], query): the scan's inner loop. Four accumulators let the CPU
 * overlap the additions, and a small function of its own is what V8 optimises best.
 */
function dotAt(data: Float32Array, offset: number, query: Float32Array, dims: number): number {
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  let i = 0
  for (; i + 3 < dims; i += 4) {
    const o = offset + i
    a += (data[o] as number) * (query[i] as number)
    b += (data[o + 1] as number) * (query[i + 1] as number)
    c += (data[o + 2] as number) * (query[i + 2] as number)
    d += (data[o + 3] as number) * (query[i + 3] as number)
  }
  for (; i < dims; i++) a += (data[offset + i] as number) * (query[i] as number)
  return a + b + c + d
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
 */
export class ExactVectorIndex implements VectorIndex {
  private data = new Float32Array(0)
  private ids: string[] = []
  private slots = new Map<string, number>()
  private dims: number | null = null

  get dimensions(): number | null {
    return this.dims
  }

  get size(): number {
    return this.ids.length
  }

  upsert(id: string, vector: Float32Array): void {
    this.checkDimensions(vector.length)
    if (this.dims === null) this.dims = vector.length
    const dims = this.dims
    let slot = this.slots.get(id)
    if (slot === undefined) {
      slot = this.ids.length
      if ((slot + 1) * dims > this.data.length) {
        const grown = new Float32Array(Math.max(dims * 16, this.data.length * 2))
        grown.set(this.data)
        this.data = grown
      }
      this.ids.push(id)
      this.slots.set(id, slot)
    }
    // A stored zero vector stays zeros: it scores 0 against every query instead of NaN.
    const norm = vectorNorm(vector)
    const offset = slot * dims
    for (let i = 0; i < dims; i++) this.data[offset + i] = norm === 0 ? 0 : (vector[i] as number) / norm
  }

  remove(id: string): boolean {
    const slot = this.slots.get(id)
    if (slot === undefined || this.dims === null) return false
    // Move the last vector into the hole so the buffer stays dense.
    const last = this.ids.length - 1
    const lastId = this.ids[last] as string
    if (slot !== last) {
      this.data.copyWithin(slot * this.dims, last * this.dims, (last + 1) * this.dims)
      this.ids[slot] = lastId
      this.slots.set(lastId, slot)
    }
    this.ids.pop()
    this.slots.delete(id)
    if (this.ids.length === 0) this.dims = null
    return true
  }

  search(query: Float32Array, limit: number): VectorHit[] {
    // `!(limit >= 1)` also turns NaN away; a fractional limit means its whole part.
    if (this.dims === null || this.ids.length === 0 || !(limit >= 1)) return []
    this.checkDimensions(query.length)
    const dims = this.dims
    const queryNorm = vectorNorm(query)
    // A zero query has no direction: every similarity would be 0/0, so nothing is "near" it.
    if (queryNorm === 0) return []
    const k = Math.min(Math.floor(limit), this.ids.length)
    // A min-heap of the best k: the root is the worst kept hit, replaced when beaten.
    const heapScores = new Float64Array(k)
    const heapSlots = new Int32Array(k)
    let heapSize = 0
    const data = this.data
    for (let slot = 0; slot < this.ids.length; slot++) {
      const score = dotAt(data, slot * dims, query, dims) / queryNorm
      if (heapSize < k) {
        let i = heapSize++
        while (i > 0) {
          const parent = (i - 1) >> 1
          if ((heapScores[parent] as number) <= score) break
          heapScores[i] = heapScores[parent] as number
          heapSlots[i] = heapSlots[parent] as number
          i = parent
        }
        heapScores[i] = score
        heapSlots[i] = slot
      } else if (score > (heapScores[0] as number)) {
        let i = 0
        for (;;) {
          const left = 2 * i + 1
          if (left >= k) break
          const right = left + 1
          const child =
            right < k && (heapScores[right] as number) < (heapScores[left] as number) ? right : left
          if ((heapScores[child] as number) >= score) break
          heapScores[i] = heapScores[child] as number
          heapSlots[i] = heapSlots[child] as number
          i = child
        }
        heapScores[i] = score
        heapSlots[i] = slot
      }
    }
    // Ties in slot order, so equal scores come back in a stable order.
    const order = Array.from({ length: heapSize }, (_, i) => i).sort(
      (a, b) =>
        (heapScores[b] as number) - (heapScores[a] as number) ||
        (heapSlots[a] as number) - (heapSlots[b] as number),
    )
    return order.map((i) => ({
      id: this.ids[heapSlots[i] as number] as string,
      similarity: heapScores[i] as number,
    }))
  }

  private checkDimensions(length: number): void {
    if (this.dims !== null && length !== this.dims) {
      throw new ValidationError([
        { field: 'vector', message: `must have ${this.dims} dimensions (got ${length})`, limit: this.dims },
      ])
    }
  }
}
