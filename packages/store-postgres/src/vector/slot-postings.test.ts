import {
  type AdaptiveVectorIndex,
  createHashingEmbedder,
  ExactVectorIndex,
  recallAtK,
  SlotPostingsIndex,
} from '@engram/core'
import { createDatabase } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createPostgresDatabase } from '../db/client.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresStorage, type PostgresStorage } from '../storage.ts'

// The in-process index of a replica (search: notify) on a real postgresql-15, for the offline
// hashing embedder's model: slot postings above the threshold, as on SQLite.

const clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const embedder = createHashingEmbedder({ dimensions: 64 })
const WORDS = 'bees hive garden honey sunday morning queen wax flower pollen swarm keeper smoke frame'.split(
  ' ',
)
const textOf = (i: number) =>
  `${Array.from({ length: 6 }, (_, j) => WORDS[(i * (j + 3) + j * j) % WORDS.length]).join(' ')} item ${i}`

let storage: PostgresStorage

beforeAll(async () => {
  const url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
  storage = createPostgresStorage({
    db: createPostgresDatabase(url, { poolSize: 4 }),
    clock,
    vectorModel: embedder.model,
    vectorIndex: { approximateAbove: 100 },
    vectors: { search: 'notify', listenUrl: url },
  })
})

afterAll(() => storage.close())

describe('Postgres in-process vector index for the offline embedder', () => {
  it('moves to slot postings above the threshold, holds recall, and forgets a removed vector', async () => {
    await storage.repositories.agents.upsert('agent-slots', null)
    const vectors = Array.from({ length: 300 }, (_, i) => ({
      id: String(i + 1),
      vector: embedder.embedOne(textOf(i + 1)),
      contentHash: `h${i + 1}`,
    }))
    await storage.vectors.upsert('agent-slots', 'memory', vectors)
    const held = () =>
      storage.vectors.searchIndex('agent-slots', 'memory', {
        writeVersion: null,
      }) as Promise<AdaptiveVectorIndex>
    await held()
    await (storage.vectors as unknown as { settled(): Promise<void> }).settled()
    const index = await held()
    expect(index.mode).toBe('approximate')
    expect(index.active).toBeInstanceOf(SlotPostingsIndex)

    const exact = new ExactVectorIndex()
    for (const { id, vector } of vectors) exact.upsert(id, vector)
    const queries = Array.from({ length: 40 }, (_, i) => embedder.embedOne(`${textOf(i + 1)} extra`))
    const recall = recallAtK(
      queries.map((q) => exact.search(q, 10)),
      queries.map((q) => index.search(q, 10)),
      10,
    )
    expect(recall).toBeGreaterThanOrEqual(0.95)

    const target = vectors[41]?.vector as Float32Array
    expect(index.search(target, 1)[0]?.id).toBe('42')
    expect(await storage.vectors.remove('agent-slots', 'memory', ['42'])).toBe(1)
    const after = await held()
    expect(after.search(target, 300).map((hit) => hit.id)).not.toContain('42')
    expect(after.stampOf('42')).toBeUndefined()
  })
})
