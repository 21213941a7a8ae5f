import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { clusteredVectors, ExactVectorIndex, recallAtK, seededRandom, ValidationError } from '@engram/core'
import { afterAll, describe, expect, it } from 'vitest'
import { HnswVectorIndex } from './hnsw-index.ts'

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-hnsw-'))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** 5,000 clustered 64-dim vectors in both indexes, then 60 queries from the same mixture. */
function seededSet(seed: number) {
  const random = seededRandom(seed)
  const source = clusteredVectors(random, { dimensions: 64, latentDimensions: 16, clusters: 40 })
  const exact = new ExactVectorIndex()
  const hnsw = new HnswVectorIndex({ initialCapacity: 256 })
  for (let i = 0; i < 5_000; i++) {
    const vector = source.next()
    exact.upsert(`v${i}`, vector)
    hnsw.upsert(`v${i}`, vector, `stamp${i}`)
  }
  const queries = Array.from({ length: 60 }, () => source.next())
  return { random, source, exact, hnsw, queries }
}

const recall = (exact: ExactVectorIndex, hnsw: HnswVectorIndex, queries: Float32Array[]) =>
  recallAtK(
    queries.map((q) => exact.search(q, 10)),
    queries.map((q) => hnsw.search(q, 10)),
    10,
  )

describe('HnswVectorIndex', () => {
  const { random, source, exact, hnsw, queries } = seededSet(21)

  it('finds the exact top-10 (recall@10 ≥ 0.95) with cosine similarities', () => {
    expect(hnsw.size).toBe(5_000)
    expect(recall(exact, hnsw, queries)).toBeGreaterThanOrEqual(0.95)
    const [first] = hnsw.search(queries[0]!, 1)
    const [truth] = exact.search(queries[0]!, 1)
    expect(first?.id).toBe(truth?.id)
    expect(first?.similarity).toBeCloseTo(truth!.similarity, 5)
  })

  it('never returns a removed id, reuses its slot, and updates in place', () => {
    const removed = new Set<string>()
    for (let i = 0; i < 1_000; i++) {
      const id = `v${Math.floor(random() * 5_000)}`
      if (removed.has(id)) continue
      removed.add(id)
      expect(hnsw.remove(id)).toBe(true)
      exact.remove(id)
    }
    expect(hnsw.remove([...removed][0]!)).toBe(false)
    expect(hnsw.size).toBe(5_000 - removed.size)
    for (const query of queries)
      for (const hit of hnsw.search(query, 50)) expect(removed.has(hit.id)).toBe(false)
    // New vectors take the deleted slots.
    for (let i = 0; i < 500; i++) {
      const vector = source.next()
      exact.upsert(`n${i}`, vector)
      hnsw.upsert(`n${i}`, vector)
    }
    expect(hnsw.deletedCount).toBe(removed.size - 500)
    // An existing id moves to its new vector.
    const target = queries[1]!
    hnsw.upsert('v4999', target, 'moved')
    exact.upsert('v4999', target)
    expect(hnsw.search(target, 1)[0]).toMatchObject({ id: 'v4999' })
    expect(hnsw.stampOf('v4999')).toBe('moved')
    expect(recall(exact, hnsw, queries)).toBeGreaterThanOrEqual(0.95)
  })

  it('saves and loads to the same results, stamps included', async () => {
    const file = path.join(dir, 'a.hnsw')
    hnsw.setEfSearch(48)
    hnsw.save(file)
    hnsw.save(file) // a second save replaces the first graph file
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.graph'))).toHaveLength(1)
    const loaded = await HnswVectorIndex.load(file, {}, 64)
    expect(loaded).not.toBeNull()
    expect(loaded!.size).toBe(hnsw.size)
    expect(loaded!.deletedCount).toBe(hnsw.deletedCount)
    expect(loaded!.stampOf('v1')).toBe(hnsw.stampOf('v1'))
    // The saved search breadth comes back, unless the caller names one.
    expect(loaded!.searchBreadth).toBe(48)
    expect((await HnswVectorIndex.load(file, { efSearch: 100 }))!.searchBreadth).toBe(100)
    for (const query of queries) expect(loaded!.search(query, 10)).toEqual(hnsw.search(query, 10))
    // It keeps working after the load: deletes, new vectors in deleted slots, growth.
    loaded!.remove('v1')
    for (let i = 0; i < 1_000; i++) loaded!.upsert(`m${i}`, source.next())
    expect(loaded!.size).toBe(hnsw.size - 1 + 1_000)
    for (const hit of loaded!.search(queries[2]!, 100)) expect(hit.id).not.toBe('v1')
  })

  it('refuses a file it cannot trust, so the caller rebuilds', async () => {
    const file = path.join(dir, 'b.hnsw')
    expect(await HnswVectorIndex.load(file)).toBeNull()
    hnsw.save(file)
    expect(await HnswVectorIndex.load(file, {}, 32)).toBeNull()
    expect(await HnswVectorIndex.load(file, { m: 8 })).toBeNull()
    const graph = fs.readdirSync(dir).find((f) => f.startsWith('b.hnsw.') && f.endsWith('.graph'))!
    fs.truncateSync(path.join(dir, graph), 100)
    expect(await HnswVectorIndex.load(file)).toBeNull()
    fs.writeFileSync(file, '{not json')
    expect(await HnswVectorIndex.load(file)).toBeNull()
    HnswVectorIndex.delete(file)
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('b.hnsw'))).toEqual([])
  })

  it('handles empty, zero, wrong-length and fractional queries like the exact index', () => {
    const index = new HnswVectorIndex()
    expect(index.search(Float32Array.from([1, 0]), 3)).toEqual([])
    expect(() => index.save(path.join(dir, 'empty.hnsw'))).toThrow()
    index.upsert('x', Float32Array.from([3, 0]))
    index.upsert('y', Float32Array.from([0, 2]))
    expect(index.search(Float32Array.from([1, 0]), 1.9)).toEqual([{ id: 'x', similarity: 1 }])
    expect(index.search(Float32Array.from([0, 0]), 3)).toEqual([])
    expect(index.search(Float32Array.from([1, 0]), Number.NaN)).toEqual([])
    expect(() => index.search(Float32Array.from([1, 0, 0]), 3)).toThrow(ValidationError)
    index.remove('x')
    index.remove('y')
    index.upsert('z', Float32Array.from([0, 0, 1]))
    expect(index.dimensions).toBe(3)
    expect(index.search(Float32Array.from([0, 0, 5]), 5)).toEqual([{ id: 'z', similarity: 1 }])
  })
})
