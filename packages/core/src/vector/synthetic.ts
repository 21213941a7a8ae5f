import { z } from 'zod'
import { parseWith } from '../errors.ts'

/**
 * Test and benchmark data shaped like text embeddings, from an injected seeded `random`: a mixture
 * of Gaussian clusters of uneven popularity (cluster `floor(clusters × u^popularitySkew)`, so a few
 * topics hold most points) living in a `latentDimensions`-dimensional subspace, mapped into
 * `dimensions` by a fixed random linear map, plus isotropic noise, then normalised. Sentence
 * embeddings behave like this: a low intrinsic dimension and topical clusters, which is what graph
 * indexes exploit. `latentDimensions: 0` puts the clusters in the full space instead (no map), the
 * harder case; `clusters: 1` with no map is plain isotropic Gaussian data, the worst case.
 */
export const ClusteredVectorsSchema = z.object({
  dimensions: z.number().int().min(1).max(4_096).default(384),
  clusters: z.number().int().min(1).max(1_000_000).default(1_000),
  latentDimensions: z.number().int().min(0).max(4_096).default(48),
  /** Spread of a cluster's points around its centre, against centres ~N(0, 1) per dimension. */
  clusterSpread: z.number().min(0).max(100).default(0.6),
  /** Isotropic noise added after the map, per output dimension. */
  noise: z.number().min(0).max(100).default(0.15),
  popularitySkew: z.number().min(1).max(10).default(2),
})
export type ClusteredVectorsOptions = z.infer<typeof ClusteredVectorsSchema>

export interface VectorSource {
  readonly dimensions: number
  /** The next vector, written into `out` when given. */
  next(out?: Float32Array): Float32Array
  /** `count` vectors back to back in one buffer. */
  many(count: number): Float32Array
}

/** A standard normal draw (Box–Muller) from a uniform [0, 1) source. */
export function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
}

export function clusteredVectors(
  random: () => number,
  options: Partial<ClusteredVectorsOptions> = {},
): VectorSource {
  const o = parseWith(ClusteredVectorsSchema, options, 'clusteredVectors')
  const dims = o.dimensions
  const space = o.latentDimensions === 0 ? dims : o.latentDimensions
  const centres = new Float64Array(o.clusters * space)
  for (let i = 0; i < centres.length; i++) centres[i] = gaussian(random)
  // Column-scaled so a latent point's norm carries over to the output on average.
  const map = o.latentDimensions === 0 ? null : new Float64Array(space * dims)
  if (map) for (let i = 0; i < map.length; i++) map[i] = gaussian(random) / Math.sqrt(space)
  const latent = new Float64Array(space)
  const next = (out: Float32Array = new Float32Array(dims)): Float32Array => {
    const cluster = Math.floor(o.clusters * random() ** o.popularitySkew)
    for (let l = 0; l < space; l++)
      latent[l] = (centres[cluster * space + l] as number) + o.clusterSpread * gaussian(random)
    let norm = 0
    for (let j = 0; j < dims; j++) {
      let value = o.noise * gaussian(random)
      if (map) for (let l = 0; l < space; l++) value += (latent[l] as number) * (map[l * dims + j] as number)
      else value += latent[j] as number
      out[j] = value
      norm += value * value
    }
    norm = Math.sqrt(norm)
    for (let j = 0; j < dims; j++) out[j] = (out[j] as number) / norm
    return out
  }
  return vectorSource(dims, next)
}

/** A VectorSource from its `next`: `many` fills one buffer with consecutive draws. */
export function vectorSource(dimensions: number, next: (out?: Float32Array) => Float32Array): VectorSource {
  return {
    dimensions,
    next,
    many(count) {
      const all = new Float32Array(count * dimensions)
      for (let i = 0; i < count; i++) next(all.subarray(i * dimensions, (i + 1) * dimensions))
      return all
    },
  }
}
