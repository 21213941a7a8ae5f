import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

export function describeTransactions(initializer: StorageInitializer): void {
  describe(`${initializer.name}: unit of work`, () => {
    const fixture = useFixture(initializer)

    it('commits every write of a transaction together', async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      const value = await storage.unitOfWork.transaction(async (tx) => {
        await tx.parameters.put('agent-a', 'stats.totalOptimizations', 1)
        await tx.parameters.put('agent-a', 'stats.totalTokensSaved', 40)
        return 'done'
      })
      expect(value).toBe('done')
      expect(await storage.repositories.parameters.values('agent-a')).toEqual(
        new Map([
          ['stats.totalOptimizations', 1],
          ['stats.totalTokensSaved', 40],
        ]),
      )
    })

    it('rolls every write back when the work throws, and rethrows the error', async () => {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.parameters.put('agent-a', 'minRelevance', 0.2)
      const failure = new Error('the snapshot could not be written')
      await expect(
        storage.unitOfWork.transaction(async (tx) => {
          await tx.parameters.put('agent-a', 'minRelevance', 0.7)
          await tx.agents.upsert('agent-new', null)
          await tx.memoryEntries.create('agent-a', {
            type: 'short_term',
            role: 'user',
            content: 'half written',
            tokenCount: 2,
            relevance: 1,
            timestamp: clock.now(),
          })
          throw failure
        }),
      ).rejects.toBe(failure)
      expect(await storage.repositories.parameters.values('agent-a')).toEqual(
        new Map([['minRelevance', 0.2]]),
      )
      expect(await storage.repositories.agents.find('agent-new')).toBeNull()
      expect(await storage.repositories.memoryEntries.list('agent-a', null)).toEqual([])
    })
  })
}
