import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import {
  type ApproximateVectorIndex,
  parseWith,
  ValidationError,
  type VectorHit,
  vectorNorm,
} from '@engram/core'
import hnswlib, { type HierarchicalNSW } from 'hnswlib-node'
import { z } from 'zod'

/**
 * Graph parameters. Defaults measured on clustered 384-dim data (bench: vector, one core): M 16
 * with efConstruction 128 builds 100k vectors in ~40 s and 1M in ~9.5 min; efSearch 64 finds
 * recall@10 0.999 (100k) and 0.992 (1M) of the exact top-10 at 159x and 773x the exact scan's
 * speed. The server tunes efSearch per index after each build (AdaptiveVectorIndex calibration),
 * since other data needs more (the offline hashing embedder's vectors of synthetic text: 512 for
 * recall 0.96 at 100k); hnswlib uses max(efSearch, k) for a search, so a large `limit` stays
 * correct.
 */
export const HnswConfigSchema = z.object({
  m: z.number().int().min(4).max(96).default(16),
  efConstruction: z.number().int().min(10).max(2_000).default(128),
  efSearch: z.number().int().min(10).max(10_000).default(64),
  /** Slots reserved on creation; the graph doubles when full. */
  initialCapacity: z.number().int().min(16).max(100_000_000).default(1_024),
  /** hnswlib's level generator seed: the same inserts build the same graph. */
  randomSeed: z.number().int().min(0).max(2_147_483_647).default(100),
})
export type HnswConfig = z.infer<typeof HnswConfigSchema>
export const DEFAULT_HNSW_CONFIG: HnswConfig = HnswConfigSchema.parse({})

/**
 * How much a full graph grows by. Every slot costs a vector plus its links whether used or not
 * (~1.1x the raw vector bytes at M 16), so doubling would leave up to half the memory idle; a
 * quarter keeps the copies a resize makes rare enough (one per 25% growth).
 */
const GROWTH = 1.25

/** The manifest written beside the graph; bumped when its shape changes. */
const MANIFEST_FORMAT = 1

interface Manifest {
  format: number
  dimensions: number
  m: number
  efConstruction: number
  /** The search breadth in use when saved (calibrated to the data, see AdaptiveVectorIndex). */
  efSearch: number
  /** Names the graph file (`<path>.<generation>.graph`), so a half-written save is never read. */
  generation: string
  graphBytes: number
  /** Elements in the graph, deleted ones included (hnswlib keeps them until their slot is reused). */
  elements: number
  deleted: number
  nextLabel: number
  /** [label, id, stamp] for every live vector. */
  entries: [number, string, string][]
}

/**
 * Approximate cosine search through an HNSW graph (hnswlib-node): at efSearch 64, ~160x the
 * exact scan's queries per second at 100k vectors and ~770x at 1M, recall@10 ≥ 0.99 (bench:
 * vector, clustered data). Vectors are normalised on the way in and searched by inner product,
 * so similarity = 1 - distance, as in exact search.
 *
 * hnswlib labels are uint32; string ids map to labels handed out once each, never reused: a
 * removed vector is only marked deleted and its slot taken by the next new vector
 * (allowReplaceDeleted), which is why a new label is needed every time.
 *
 * Each id may carry a `stamp` (e.g. the content hash it was embedded from), saved with the graph,
 * so whoever loads it can tell which vectors changed since without reading the vectors.
 */
export class HnswVectorIndex implements ApproximateVectorIndex {
  private graph: HierarchicalNSW | null = null
  private dims: number | null = null
  private readonly labels = new Map<string, number>()
  /** Labels are handed out densely from 0, so an array maps them back (a Map costs ~3x more per entry). */
  private idsByLabel: (string | undefined)[] = []
  private readonly stamps = new Map<string, string>()
  private nextLabel = 0
  /** Deleted elements whose slots the next new vectors take. */
  private deleted = 0
  private readonly config: HnswConfig

  constructor(config: Partial<HnswConfig> = {}) {
    this.config = parseWith(HnswConfigSchema, config, 'hnsw')
  }

  get dimensions(): number | null {
    return this.dims
  }

  get size(): number {
    return this.labels.size
  }

  get settings(): HnswConfig {
    return { ...this.config }
  }

  /**
   * Deleted elements still in the graph. Searches walk through them, so a graph with more deleted
   * than live elements is worth rebuilding.
   */
  get deletedCount(): number {
    return this.deleted
  }

  /** Changes the search breadth (recall against speed) without rebuilding; saved with the graph. */
  setEfSearch(efSearch: number): void {
    this.config.efSearch = parseWith(HnswConfigSchema.shape.efSearch, efSearch, 'hnsw.efSearch')
    this.graph?.setEf(this.config.efSearch)
  }

  /** efSearch, under the name core's calibration knows it by. */
  get searchBreadth(): number {
    return this.config.efSearch
  }

  setSearchBreadth(breadth: number): void {
    this.setEfSearch(breadth)
  }

  has(id: string): boolean {
    return this.labels.has(id)
  }

  stampOf(id: string): string | undefined {
    const stamp = this.stamps.get(id)
    return stamp === '' ? undefined : stamp
  }

  /** Every live id with its stamp ('' when none was given). */
  stampEntries(): IterableIterator<[string, string]> {
    return this.stamps.entries()
  }

  /** The stored (normalised) vectors with their ids; each is read back from the graph. */
  *entries(): IterableIterator<[string, Float32Array]> {
    const graph = this.graph
    if (!graph) return
    for (const [id, label] of this.labels) yield [id, Float32Array.from(graph.getPoint(label))]
  }

  upsert(id: string, vector: Float32Array, stamp?: string): void {
    // Emptied, it takes another dimension, like the exact index (a fresh graph).
    if (this.labels.size === 0 && this.dims !== null && vector.length !== this.dims) this.clear()
    this.checkDimensions(vector.length)
    const graph = this.graph ?? this.create(vector.length)
    const point = normalised(vector)
    const existing = this.labels.get(id)
    if (existing !== undefined) {
      // In place: hnswlib re-links the element's neighbourhood for its new position.
      graph.addPoint(point, existing, false)
    } else {
      if (this.deleted === 0 && graph.getCurrentCount() >= graph.getMaxElements())
        graph.resizeIndex(Math.max(this.config.initialCapacity, Math.ceil(graph.getMaxElements() * GROWTH)))
      const label = this.nextLabel++
      graph.addPoint(point, label, true)
      if (this.deleted > 0) this.deleted--
      this.labels.set(id, label)
      this.idsByLabel[label] = id
    }
    this.stamps.set(id, stamp ?? '')
  }

  remove(id: string): boolean {
    const label = this.labels.get(id)
    if (label === undefined || !this.graph) return false
    this.graph.markDelete(label)
    this.deleted++
    this.labels.delete(id)
    this.idsByLabel[label] = undefined
    this.stamps.delete(id)
    return true
  }

  search(query: Float32Array, limit: number): VectorHit[] {
    // `!(limit >= 1)` also turns NaN away, as in the exact index.
    if (!this.graph || this.labels.size === 0 || !(limit >= 1)) return []
    this.checkDimensions(query.length)
    if (vectorNorm(query) === 0) return []
    const k = Math.min(Math.floor(limit), this.labels.size)
    const { neighbors, distances } = this.graph.searchKnn(normalised(query), k)
    const hits: VectorHit[] = []
    for (const [i, label] of neighbors.entries()) {
      const id = this.idsByLabel[label]
      if (id !== undefined) hits.push({ id, similarity: 1 - (distances[i] as number) })
    }
    return hits
  }

  /**
   * Writes the graph to `<path>.<generation>.graph`, then the manifest to `path` by rename, then
   * drops older graphs: a crash at any point leaves either the old pair or the new one readable.
   * Synchronous because hnswlib must not be written to while it saves (~1 s per GB).
   */
  save(file: string): void {
    if (!this.graph || this.dims === null) throw new Error('nothing to save: the index is empty')
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const generation = randomUUID()
    const graphFile = `${file}.${generation}.graph`
    this.graph.writeIndexSync(graphFile)
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      dimensions: this.dims,
      m: this.config.m,
      efConstruction: this.config.efConstruction,
      efSearch: this.config.efSearch,
      generation,
      graphBytes: fs.statSync(graphFile).size,
      elements: this.graph.getCurrentCount(),
      deleted: this.deleted,
      nextLabel: this.nextLabel,
      entries: [...this.labels].map(([id, label]) => [label, id, this.stamps.get(id) ?? '']),
    }
    const temporary = `${file}.${generation}.tmp`
    fs.writeFileSync(temporary, JSON.stringify(manifest))
    fs.renameSync(temporary, file)
    for (const old of graphFilesOf(file)) if (old !== graphFile) fs.rmSync(old, { force: true })
  }

  /**
   * The index saved at `file`, or null when there is none or it cannot be trusted (missing or
   * truncated graph, other dimensions or graph parameters, counts that disagree): the caller then
   * rebuilds. efSearch is the saved one unless `config` names one; the capacity step comes from
   * `config`.
   */
  static async load(
    file: string,
    config: Partial<HnswConfig> = {},
    expectedDimensions?: number,
  ): Promise<HnswVectorIndex | null> {
    const index = new HnswVectorIndex(config)
    let manifest: Manifest
    try {
      manifest = JSON.parse(await fs.promises.readFile(file, 'utf8')) as Manifest
    } catch {
      return null
    }
    const graphFile = `${file}.${manifest.generation}.graph`
    if (
      manifest.format !== MANIFEST_FORMAT ||
      (expectedDimensions !== undefined && manifest.dimensions !== expectedDimensions) ||
      manifest.m !== index.config.m ||
      manifest.efConstruction !== index.config.efConstruction ||
      !Array.isArray(manifest.entries) ||
      manifest.entries.length + manifest.deleted !== manifest.elements
    )
      return null
    const bytes = await fs.promises.stat(graphFile).then(
      (s) => s.size,
      () => -1,
    )
    if (bytes !== manifest.graphBytes) return null
    const graph = new hnswlib.HierarchicalNSW('ip', manifest.dimensions)
    try {
      // The asynchronous read runs off the event loop; nothing else holds this graph yet.
      await graph.readIndex(graphFile, true)
    } catch {
      return null
    }
    if (graph.getCurrentCount() !== manifest.elements) return null
    if (config.efSearch === undefined && Number.isInteger(manifest.efSearch))
      index.config.efSearch = parseWith(HnswConfigSchema.shape.efSearch, manifest.efSearch, 'hnsw.efSearch')
    graph.setEf(index.config.efSearch)
    index.graph = graph
    index.dims = manifest.dimensions
    index.nextLabel = manifest.nextLabel
    index.deleted = manifest.deleted
    for (const [label, id, stamp] of manifest.entries) {
      index.labels.set(id, label)
      index.idsByLabel[label] = id
      index.stamps.set(id, stamp)
    }
    return index
  }

  /** Removes a saved index (manifest and graphs). */
  static delete(file: string): void {
    for (const old of graphFilesOf(file)) fs.rmSync(old, { force: true })
    fs.rmSync(file, { force: true })
  }

  private clear(): void {
    this.graph = null
    this.dims = null
    this.idsByLabel = []
    this.nextLabel = 0
    this.deleted = 0
  }

  private create(dimensions: number): HierarchicalNSW {
    const graph = new hnswlib.HierarchicalNSW('ip', dimensions)
    graph.initIndex({
      maxElements: this.config.initialCapacity,
      m: this.config.m,
      efConstruction: this.config.efConstruction,
      randomSeed: this.config.randomSeed,
      allowReplaceDeleted: true,
    })
    graph.setEf(this.config.efSearch)
    this.graph = graph
    this.dims = dimensions
    return graph
  }

  private checkDimensions(length: number): void {
    if (this.dims !== null && length !== this.dims) {
      throw new ValidationError([
        { field: 'vector', message: `must have ${this.dims} dimensions (got ${length})`, limit: this.dims },
      ])
    }
  }
}

/** hnswlib-node takes plain arrays; a zero vector stays zeros (it scores 0, as in exact search). */
function normalised(vector: Float32Array): number[] {
  const norm = vectorNorm(vector)
  const out = new Array<number>(vector.length)
  for (let i = 0; i < vector.length; i++) out[i] = norm === 0 ? 0 : (vector[i] as number) / norm
  return out
}

function graphFilesOf(file: string): string[] {
  const folder = path.dirname(file)
  const prefix = `${path.basename(file)}.`
  try {
    return fs
      .readdirSync(folder)
      .filter((name) => name.startsWith(prefix) && (name.endsWith('.graph') || name.endsWith('.tmp')))
      .map((name) => path.join(folder, name))
  } catch {
    return []
  }
}
