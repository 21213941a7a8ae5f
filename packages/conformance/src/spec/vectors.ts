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
  })
}
