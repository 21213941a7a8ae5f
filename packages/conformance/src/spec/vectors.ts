import { ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const v = (...values: number[]) => Float32Array.from(values)

export function describeVectors(initializer: StorageInitializer): void {
  describe(`${initializer.name}: vectors`, () => {
    const fixture = useFixture(initializer)

    async function withAgents(...ids: string[]) {
      const { storage } = fixture()
      for (const id of ids) await storage.repositories.agents.upsert(id, null)
      return storage.vectors
    }

    it('returns the most similar vectors first, at most `limit`, and forgets removed ones', async () => {
      const vectors = await withAgents('agent-a')
      await vectors.upsert('agent-a', 'memory', [
        { id: '1', vector: v(1, 0, 0) },
        { id: '2', vector: v(0.8, 0.6, 0) },
        { id: '3', vector: v(0, 0, 1) },
      ])
      const hits = await vectors.topK('agent-a', 'memory', v(1, 0.1, 0), 2)
      expect(hits.map((h) => h.id)).toEqual(['1', '2'])
      expect(hits[0]?.similarity).toBeGreaterThan(hits[1]?.similarity ?? 1)
      expect(await vectors.remove('agent-a', 'memory', ['1'])).toBe(1)
      expect((await vectors.topK('agent-a', 'memory', v(1, 0.1, 0), 3)).map((h) => h.id)).toEqual(['2', '3'])
      await vectors.upsert('agent-a', 'memory', [{ id: '3', vector: v(1, 0.1, 0) }])
      expect((await vectors.topK('agent-a', 'memory', v(1, 0.1, 0), 1))[0]?.id).toBe('3')
      expect(await vectors.count('agent-a', 'memory')).toBe(2)
    })

    it('keeps agents and kinds apart', async () => {
      const vectors = await withAgents('agent-a', 'agent-b')
      await vectors.upsert('agent-a', 'memory', [{ id: '1', vector: v(1, 0) }])
      await vectors.upsert('agent-b', 'memory', [{ id: '2', vector: v(1, 0) }])
      await vectors.upsert('agent-a', 'knowledge', [{ id: '3', vector: v(1, 0) }])
      expect((await vectors.topK('agent-a', 'memory', v(1, 0), 10)).map((h) => h.id)).toEqual(['1'])
      expect((await vectors.topK('agent-b', 'memory', v(1, 0), 10)).map((h) => h.id)).toEqual(['2'])
      expect(await vectors.topK('agent-c', 'memory', v(1, 0), 10)).toEqual([])
      expect(await vectors.remove('agent-a', 'memory', ['2'])).toBe(0)
      expect(await vectors.count('agent-b', 'memory')).toBe(1)
    })

    it('rejects other dimensions with a ValidationError naming the field and the size, and writes nothing', async () => {
      const vectors = await withAgents('agent-a', 'agent-b')
      await vectors.upsert('agent-a', 'memory', [{ id: '1', vector: v(1, 0, 0) }])
      const stored = await vectors
        .upsert('agent-a', 'memory', [
          { id: '2', vector: v(0, 1, 0) },
          { id: '3', vector: v(1, 0) },
        ])
        .catch((e: unknown) => e)
      expect(stored).toBeInstanceOf(ValidationError)
      expect((stored as ValidationError).issues[0]).toMatchObject({ field: 'vector', limit: 3 })
      expect(await vectors.count('agent-a', 'memory')).toBe(1)
      const searched = await vectors.topK('agent-a', 'memory', v(1, 0), 1).catch((e: unknown) => e)
      expect((searched as ValidationError).issues[0]).toMatchObject({ field: 'query', limit: 3 })
      expect(await vectors.dimensions('agent-a', 'memory')).toBe(3)
      // Another agent's vectors have their own dimensions.
      await vectors.upsert('agent-b', 'memory', [{ id: '4', vector: v(1, 0) }])
      expect(await vectors.dimensions('agent-b', 'memory')).toBe(2)
    })

    it('hands out a search index current with the stored vectors, catching up first when it may be stale', async () => {
      const vectors = await withAgents('agent-a')
      await vectors.upsert('agent-a', 'memory', [{ id: '1', vector: v(1, 0), contentHash: 'h1' }])
      let caughtUp = 0
      const catchUp = async () => {
        caughtUp++
        // What the engine does there: store the vectors still missing.
        await vectors.upsert('agent-a', 'memory', [{ id: '2', vector: v(0, 1), contentHash: 'h2' }])
      }
      const index = await vectors.searchIndex('agent-a', 'memory', { writeVersion: 'w1', catchUp })
      expect(caughtUp).toBe(1)
      expect(index.size).toBe(2)
      expect((await index.search(v(0.1, 1), 1))[0]?.id).toBe('2')
      // Written after: the index in hand follows, and so does the next one handed out.
      await vectors.upsert('agent-a', 'memory', [{ id: '3', vector: v(-1, 0) }])
      const next = await vectors.searchIndex('agent-a', 'memory', { writeVersion: 'w2' })
      expect((await next.search(v(-1, 0.1), 1))[0]?.id).toBe('3')
      expect(next.size).toBe(3)
      // Another agent's index is its own.
      expect((await vectors.searchIndex('agent-b', 'memory', { writeVersion: null })).size).toBe(0)
    })

    it('keeps the stored vectors through a reset of what is held in memory, for every agent', async () => {
      const vectors = await withAgents('agent-a', 'agent-b')
      await vectors.upsert('agent-a', 'memory', [{ id: '1', vector: v(1, 0) }])
      await vectors.upsert('agent-b', 'memory', [{ id: '2', vector: v(1, 0) }])
      await vectors.topK('agent-a', 'memory', v(1, 0), 1)
      vectors.reset('agent-a')
      expect(vectors.held('agent-a')).toBe(0)
      expect((await vectors.topK('agent-a', 'memory', v(1, 0), 5)).map((h) => h.id)).toEqual(['1'])
      vectors.reset()
      expect((await vectors.topK('agent-b', 'memory', v(1, 0), 5)).map((h) => h.id)).toEqual(['2'])
    })

    it('searches past the size where an adapter switches index, and removes what it persisted per agent', async () => {
      const vectors = await withAgents('agent-a', 'agent-b')
      // 40 vectors around a circle: the nearest to an angle is known.
      const around = (i: number) => v(Math.cos(i / 6.4), Math.sin(i / 6.4))
      for (const agentId of ['agent-a', 'agent-b'])
        await vectors.upsert(
          agentId,
          'memory',
          Array.from({ length: 40 }, (_, i) => ({
            id: String(agentId === 'agent-a' ? i + 1 : i + 101),
            vector: around(i),
          })),
        )
      for (const agentId of ['agent-a', 'agent-b'])
        await vectors.searchIndex(agentId, 'memory', { writeVersion: null })
      await vectors.settled()
      expect((await vectors.topK('agent-a', 'memory', around(7), 1))[0]?.id).toBe('8')
      expect((await vectors.topK('agent-b', 'memory', around(7), 1))[0]?.id).toBe('108')
      await vectors.flush()
      const persisted = vectors.persisted('agent-a')
      expect(persisted.length > 0).toBe(initializer.persistsVectorIndexes === true)
      expect(vectors.persisted('agent-b').some((p) => persisted.includes(p))).toBe(false)
      expect(vectors.removePersisted('agent-a')).toBe(persisted.length)
      expect(vectors.persisted('agent-a')).toEqual([])
      // Agents still listed keep theirs; the rest are orphans.
      const others = vectors.persisted('agent-b').length
      expect(vectors.removeOrphans(['agent-b'])).toBe(0)
      expect(vectors.persisted('agent-b')).toHaveLength(others)
      expect(vectors.removeOrphans([])).toBe(others)
      expect(vectors.persisted('agent-b')).toEqual([])
      // The rows are the durable copy: searches still find every vector.
      expect((await vectors.topK('agent-a', 'memory', around(30), 1))[0]?.id).toBe('31')
      expect(await vectors.count('agent-b', 'memory')).toBe(40)
    })
  })
}
