import fs from 'node:fs'
import path from 'node:path'
import {
  type AdaptiveVectorIndex,
  createHashingEmbedder,
  DEFAULT_SLOT_POSTINGS_CONFIG,
  ExactVectorIndex,
  recallAtK,
  SlotPostingsIndex,
} from '@engram/core'
import { EmbeddingService } from '@engram/engine'
import {
  approximateIndexFor,
  HnswVectorIndex,
  SqliteEmbeddingRepository,
  SqliteJobQueue,
  SqliteVectorStore,
  type VectorIndexOptions,
} from '@engram/store-sqlite'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { asEventBus } from '../src/pubsub.ts'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const quiet = { info() {}, warn() {}, error() {} }
const AGENT = 'agent-vectors'
const WORDS = 'bees hive garden honey sunday morning queen wax flower pollen swarm keeper smoke frame'.split(
  ' ',
)

/** Texts that share words unevenly, so their vectors form loose topics. */
const textOf = (i: number) =>
  `${Array.from({ length: 6 }, (_, j) => WORDS[(i * (j + 3) + j * j) % WORDS.length]).join(' ')} item ${i}`

describe('EmbeddingService vector indexes: HNSW above a threshold, saved and reloaded', () => {
  let t: TestApp
  let directory: string
  let calibrated = 0
  const embedder = createHashingEmbedder({ dimensions: 64 })
  const options = (): VectorIndexOptions => ({
    directory,
    approximateAbove: 100,
    // The hashing embedder's vectors get slot postings by default: this suite is about HNSW.
    approximateIndex: 'hnsw',
    hnsw: { initialCapacity: 64 },
  })
  // A fresh service and vector store each time: what a restarted process would have.
  const service = () =>
    new EmbeddingService({
      vectors: new SqliteVectorStore(t.db, t.clock, embedder.model, options(), quiet),
      repository: new SqliteEmbeddingRepository(t.db, new SqliteJobQueue(t.db, t.clock)),
      embedder,
      clock: t.clock,
      events: asEventBus(t.app.services.pubsub),
      log: quiet,
    })
  const owners = (from: number, to: number, text = textOf) =>
    Array.from({ length: to - from }, (_, k) => ({ id: from + k, text: text(from + k) }))
  const graphs = () => fs.readdirSync(directory).filter((f) => f.endsWith('.graph'))

  beforeAll(async () => {
    t = await createTestApp({ embedder })
    directory = path.join(t.dir, 'vectors')
    await createAgentKey(t, AGENT)
  })
  afterAll(() => t.close())

  it('stays exact up to the threshold and moves to a saved HNSW graph above it', async () => {
    const first = service()
    await first.store(AGENT, 'memory', owners(1, 101))
    const small = (await first.index(AGENT, 'memory')) as AdaptiveVectorIndex
    await first.settled()
    expect(small.mode).toBe('exact')
    expect(fs.existsSync(directory)).toBe(false)

    // The graph is built on a worker thread: this thread never inserts into one.
    const inserts = vi.spyOn(HnswVectorIndex.prototype, 'upsert')
    await first.store(AGENT, 'memory', owners(101, 301))
    const large = (await first.index(AGENT, 'memory')) as AdaptiveVectorIndex
    expect(large.mode).toBe('building')
    await first.settled()
    expect(inserts).not.toHaveBeenCalled()
    inserts.mockRestore()
    expect(large.mode).toBe('approximate')
    expect(large.size).toBe(300)
    expect(graphs()).toHaveLength(1)
    expect(
      fs.readdirSync(directory).some((f) => /^agent-vectors~[0-9a-f]{8}-memory-[0-9a-f]{12}\.hnsw$/.test(f)),
    ).toBe(true)

    const exact = new ExactVectorIndex()
    for (const owner of owners(1, 301)) exact.upsert(String(owner.id), embedder.embedOne(owner.text))
    const queries = owners(1, 41).map((o) => embedder.embedOne(`${o.text} extra`))
    const recall = recallAtK(
      queries.map((q) => exact.search(q, 10)),
      queries.map((q) => large.search(q, 10)),
      10,
    )
    expect(recall).toBeGreaterThanOrEqual(0.95)
    // The build tuned efSearch to this data and the graph carries it.
    expect(large.calibration?.reached).toBe(true)
    calibrated = large.calibration!.breadth
    expect((large.active as HnswVectorIndex).searchBreadth).toBe(calibrated)
  })

  it('loads the saved graph on restart and patches in what changed meanwhile', async () => {
    // Changed while "down": rows deleted behind the service's back, texts re-embedded.
    await t.db.embedding.deleteMany({ where: { agentId: AGENT, kind: 'memory', ownerId: { in: [5, 6, 7] } } })
    const writer = service()
    await writer.store(
      AGENT,
      'memory',
      owners(10, 13, (i) => `replaced text about smoke ${i}`),
    )
    await writer.store(AGENT, 'memory', owners(301, 321))

    const savedGraph = graphs()[0]
    const restarted = service()
    const index = (await restarted.index(AGENT, 'memory')) as AdaptiveVectorIndex
    // Approximate at once: loaded, not rebuilt (a rebuild starts exact and builds in the background).
    expect(index.mode).toBe('approximate')
    expect((index.active as HnswVectorIndex).searchBreadth).toBe(calibrated)
    expect(index.size).toBe(300 - 3 + 20)
    expect(index.stampOf('10')).toBeDefined()
    const hits = index.search(embedder.embedOne('replaced text about smoke 11'), 300).map((h) => h.id)
    expect(hits[0]).toBe('11')
    for (const gone of ['5', '6', '7']) expect(hits).not.toContain(gone)
    expect(hits).toContain('303')
    // 26 changes are over 5% of the 317 vectors: the patched graph is saved again.
    await restarted.settled()
    expect(graphs()).toHaveLength(1)
    expect(graphs()[0]).not.toBe(savedGraph)
    const again = (await service().index(AGENT, 'memory')) as AdaptiveVectorIndex
    expect(again.mode).toBe('approximate')
    expect(again.stampOf('10')).toBe(index.stampOf('10'))
  })

  it('rebuilds from the table when too much changed, and saves at flush', async () => {
    await t.db.embedding.deleteMany({ where: { agentId: AGENT, kind: 'memory', ownerId: { lte: 200 } } })
    const writer = service()
    await writer.store(AGENT, 'memory', owners(400, 560))
    const rebuilt = service()
    const index = (await rebuilt.index(AGENT, 'memory')) as AdaptiveVectorIndex
    // Over half changed: not patched but read from the table, exact until the build finishes.
    expect(index.mode).toBe('building')
    await rebuilt.flush()
    expect(index.mode).toBe('exact')
    const next = service()
    // Two searches at once share one load (and one background build).
    const [after, twin] = (await Promise.all([
      next.index(AGENT, 'memory'),
      next.index(AGENT, 'memory'),
    ])) as AdaptiveVectorIndex[]
    expect(twin).toBe(after)
    expect(after!.size).toBe(index.size)
    await next.settled()
    expect(after!.mode).toBe('approximate')
  })
})

describe('EmbeddingService vector indexes: slot postings for the offline embedder above a threshold', () => {
  let t: TestApp
  let directory: string
  const embedder = createHashingEmbedder({ dimensions: 64 })
  // The default (`auto`) for the hashing embedder's model: slot postings.
  const service = () =>
    new EmbeddingService({
      vectors: new SqliteVectorStore(
        t.db,
        t.clock,
        embedder.model,
        { directory, approximateAbove: 100 },
        quiet,
      ),
      repository: new SqliteEmbeddingRepository(t.db, new SqliteJobQueue(t.db, t.clock)),
      embedder,
      clock: t.clock,
      events: asEventBus(t.app.services.pubsub),
      log: quiet,
    })
  const owners = (from: number, to: number, text = textOf) =>
    Array.from({ length: to - from }, (_, k) => ({ id: from + k, text: text(from + k) }))

  beforeAll(async () => {
    t = await createTestApp({ embedder })
    directory = path.join(t.dir, 'slot-vectors')
    await createAgentKey(t, AGENT)
  })
  afterAll(() => t.close())

  it('picks slot postings for the hashing embedder and HNSW for other models unless told', () => {
    expect(approximateIndexFor(embedder.model)).toBe('slot-postings')
    expect(approximateIndexFor('engram-hashing-v2-wn31-s3-384')).toBe('slot-postings')
    expect(approximateIndexFor('text-embedding-3-small')).toBe('hnsw')
    expect(approximateIndexFor(embedder.model, 'hnsw')).toBe('hnsw')
    expect(approximateIndexFor('text-embedding-3-small', 'slot-postings')).toBe('slot-postings')
  })

  it('moves to slot postings above the threshold, holds recall, saves no file, and forgets removed vectors', async () => {
    const first = service()
    await first.store(AGENT, 'memory', owners(1, 301))
    const index = (await first.index(AGENT, 'memory')) as AdaptiveVectorIndex
    await first.settled()
    expect(index.mode).toBe('approximate')
    expect(index.active).toBeInstanceOf(SlotPostingsIndex)
    expect(index.size).toBe(300)
    // Not calibrated on stored vectors (whole texts): the default candidates suit search queries.
    expect(index.calibration).toBeNull()
    expect((index.active as SlotPostingsIndex).searchBreadth).toBe(DEFAULT_SLOT_POSTINGS_CONFIG.candidates)
    // Rebuilt from the table at each start: nothing is written beside the database.
    expect(fs.existsSync(directory)).toBe(false)

    const exact = new ExactVectorIndex()
    for (const owner of owners(1, 301)) exact.upsert(String(owner.id), embedder.embedOne(owner.text))
    const queries = owners(1, 41).map((o) => embedder.embedOne(`${o.text} extra`))
    const recall = recallAtK(
      queries.map((q) => exact.search(q, 10)),
      queries.map((q) => index.search(q, 10)),
      10,
    )
    expect(recall).toBeGreaterThanOrEqual(0.95)

    const target = embedder.embedOne(textOf(42))
    expect(index.search(target, 1)[0]?.id).toBe('42')
    await first.discard(AGENT, 'memory', [{ id: 42, text: textOf(42) }])
    const after = (await first.index(AGENT, 'memory')) as AdaptiveVectorIndex
    expect(after.search(target, 300).map((hit) => hit.id)).not.toContain('42')
    expect((after.active as SlotPostingsIndex).stampOf('42')).toBeUndefined()

    // A restart reads the table again (no row for 42) and builds the same kind of index.
    const restarted = service()
    const reloaded = (await restarted.index(AGENT, 'memory')) as AdaptiveVectorIndex
    await restarted.settled()
    expect(reloaded.mode).toBe('approximate')
    expect(reloaded.active).toBeInstanceOf(SlotPostingsIndex)
    expect(reloaded.size).toBe(299)
    expect(reloaded.search(target, 300).map((hit) => hit.id)).not.toContain('42')
  })
})
