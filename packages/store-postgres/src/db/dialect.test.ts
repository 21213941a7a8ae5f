import { bm25Scores } from '@engram/core'
import { createDatabase } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { PostgresFullTextIndex } from '../full-text/postgres-full-text-index.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresStorage, type PostgresStorage } from '../storage.ts'
import { createPostgresDatabase, type PostgresDatabase } from './client.ts'

let db: PostgresDatabase
let storage: PostgresStorage
beforeAll(async () => {
  const url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
  db = createPostgresDatabase(url, { poolSize: 2 })
  storage = createPostgresStorage({ db, clock: { now: () => new Date('2026-01-15T10:00:00Z') } })
})
afterAll(async () => {
  await storage?.close()
})

async function addMemories(agentId: string, contents: string[]): Promise<string[]> {
  await db.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
  const at = new Date('2026-01-15T10:00:00Z')
  const ids: string[] = []
  for (const content of contents) {
    const row = await db.memoryItem.create({
      data: {
        agentId,
        content,
        category: 'fact',
        validFrom: at,
        contentHash: content,
        tokenCount: 1,
        createdAt: at,
        updatedAt: at,
      },
    })
    ids.push(String(row.id))
  }
  return ids
}

describe('postgresDialect: the memories sharing words with a text', () => {
  it('ranks them by the BM25 the engine computes from the full-text index, ties by id, the agent’s own only', async () => {
    const [plain, rich, black, apples, , twin] = await addMemories('agent-a', [
      'green tea',
      'green tea with green leaves and more tea',
      'black tea at noon',
      'green apples',
      'coffee only',
      'green tea',
    ])
    // Another agent's documents: never candidates, and not in the agent's statistics.
    await addMemories('agent-b', ['green tea tea tea leaves', 'leaves leaves'])
    const text = 'green tea leaves'
    const sharing = await storage.memoryItems.sharingWords('agent-a', text, 10)

    // The engine's path: the index's counts for the agent, scored by packages/core's BM25.
    const index = new PostgresFullTextIndex(db)
    const terms = ['green', 'tea', 'leaves'].flatMap((word) => index.terms(word))
    const corpus = await index.corpus('memories', 'agent-a', 'all')
    const frequencies = await index.documentFrequencies('memories', 'agent-a', 'all', terms)
    const postings = await Promise.all(
      terms.map((term) => index.postings('memories', 'agent-a', 'all', term)),
    )
    const lengths = new Map(postings.flatMap((p) => [...p].map(([id, posting]) => [id, posting.length])))
    const scores = bm25Scores(
      lengths.keys(),
      terms.map((term, i) => ({
        documentFrequency: frequencies.get(term) ?? 0,
        frequencies: new Map([...(postings[i] ?? [])].map(([id, posting]) => [id, posting.frequency])),
      })),
      (id) => lengths.get(id) ?? 0,
      corpus,
    )
    const expected = [...scores].sort((a, b) => b[1] - a[1] || Number(a[0]) - Number(b[0])).map(([id]) => id)
    expect(expected).toEqual([rich, plain, twin, apples, black])
    expect(sharing).toEqual(expected)
    expect(await storage.memoryItems.sharingWords('agent-a', text, 2)).toEqual([rich, plain])
    expect(await storage.memoryItems.sharingWords('agent-a', 'the and', 10)).toEqual([])
  })
})
