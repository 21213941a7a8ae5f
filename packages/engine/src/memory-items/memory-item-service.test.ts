import {
  type Clock,
  cosineSimilarity,
  createTokenCounter,
  DEFAULT_LIMITS,
  NotFoundError,
  ValidationError,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentService } from '../agents/agent-service.ts'
import type { KnowledgeEmbeddings } from '../knowledge/collaborators.ts'
import { KnowledgeService } from '../knowledge/knowledge-service.ts'
import { PrivacyService } from '../privacy/privacy-service.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import type { MemoryEmbeddings } from './collaborators.ts'
import type { MemoryItemInput } from './memory-item-rules.ts'
import { MemoryItemService, type MemoryWriteResult } from './memory-item-service.ts'

// The moved use cases run on the in-memory adapter alone: no database, and an embedding
// collaborator that never has a vector (every write is left to the queue, as when a provider fails).

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
// Token counts do not matter here; the heuristic counter spares loading a tokenizer's tables.
const tokenCounter = createTokenCounter('heuristic')

function setUp() {
  const storage = createInMemoryStorage(clock)
  const queued: string[] = []
  const embeddings: MemoryEmbeddings & KnowledgeEmbeddings = {
    model: 'none',
    embedTexts: async (_agentId, texts) => texts.map(() => null),
    index: async () => ({ search: () => [] }),
    store: async () => 0,
    enqueue: async (_agentId: string, kind: string, ids: readonly number[]) => {
      queued.push(...ids.map((id) => `${kind}:${id}`))
    },
    forget: () => {},
    coverage: async () => [],
  }
  const privacy = new PrivacyService(storage.privacyPolicies)
  const memories = new MemoryItemService(
    storage.memoryItems,
    clock,
    tokenCounter,
    DEFAULT_LIMITS,
    privacy,
    embeddings,
  )
  const knowledge = new KnowledgeService(storage.knowledge, clock, DEFAULT_LIMITS, embeddings)
  const agents = new AgentService(storage.repositories.agents, storage.apiKeys, () => clock.now())
  return { storage, memories, knowledge, agents, privacy, queued }
}

// The first write compiles the privacy patterns and loads the verification's word lists: slow on a
// loaded machine, hence the timeout.
describe('the memory-item, knowledge, privacy and agent use cases on the in-memory storage', {
  timeout: 60_000,
}, () => {
  it('stores a memory, skips a near-duplicate and queues only the stored one for embedding', async () => {
    const { storage, memories, queued } = setUp()
    await storage.repositories.agents.upsert('a', null)
    const stored = await memories.create('a', { content: 'The user lives in Berlin', category: 'fact' })
    expect(stored.outcome).toBe('STORED')
    const again = await memories.create('a', { content: 'the user lives in Berlin!', category: 'fact' })
    expect(again).toMatchObject({ outcome: 'DUPLICATE', layer: 'jaccard' })
    expect(again.duplicateOf?.id).toBe(stored.item.id)
    expect(queued).toEqual([`memory:${stored.item.id}`])
    const listed = await memories.list('a', {}, 'createdAt')
    expect(listed.totalCount).toBe(1)
    expect((await memories.get('a', stored.item.id)).accessCount).toBe(1)
    await expect(memories.get('b', stored.item.id)).rejects.toBeInstanceOf(NotFoundError)
  })

  it('retires the least important memory past maxEntriesPerAgent, and redacts by the agent policy', async () => {
    const { storage, memories } = setUp()
    await storage.repositories.agents.upsert('a', null)
    await memories.updateSettings('a', { settings: { maxEntriesPerAgent: 1 } })
    await memories.create('a', { content: 'Likes green tea', category: 'preference', importance: 0.2 })
    const next = await memories.create('a', {
      content: 'Card 4111 1111 1111 1111 is on file',
      category: 'fact',
      importance: 0.9,
    })
    expect(next.evicted.map((m) => m.content)).toEqual(['Likes green tea'])
    expect(next.item.content).not.toContain('4111 1111 1111 1111')
    expect((await memories.stats('a')).current).toBe(1)
    await expect(
      memories.updateSettings('a', { settings: { maxEntriesPerAgent: -1 } }),
    ).rejects.toBeInstanceOf(ValidationError)
  })

  it('learns knowledge confidence on repeated stores and keeps keys unique', async () => {
    const { storage, knowledge, queued } = setUp()
    await storage.repositories.agents.upsert('a', null)
    const first = await knowledge.store('a', { category: 'domain', key: 'example.com', value: 'sso' })
    const again = await knowledge.store('a', { category: 'domain', key: 'example.com', value: 'sso v2' })
    expect(again).toMatchObject({ id: first.id, value: 'sso v2', storeCount: 2 })
    expect(again.confidence).toBeGreaterThan(first.confidence)
    const other = await knowledge.store('a', { category: 'domain', key: 'other.org', value: 'x' })
    await expect(knowledge.update('a', other.id, { key: 'example.com' })).rejects.toBeInstanceOf(
      ValidationError,
    )
    expect(queued).toEqual([`knowledge:${first.id}`, `knowledge:${first.id}`, `knowledge:${other.id}`])
    await expect(knowledge.deleteMany('a', [other.id, '999'])).rejects.toBeInstanceOf(NotFoundError)
    expect((await knowledge.deleteMany('a', [other.id, first.id])).deletedCount).toBe(2)
  })

  it('issues keys that identify their agent until revoked, and never revokes the last admin key', async () => {
    const { agents } = setUp()
    const generated = await agents.ensureAdminKey(undefined)
    expect(generated).toMatch(/^engram_/)
    expect(await agents.ensureAdminKey(undefined)).toBeNull()
    const admin = await agents.holderOf(generated as string)
    expect(admin?.kind).toBe('admin')
    const { key, apiKey } = await agents.createApiKey('new-agent', 'laptop')
    expect(await agents.holderOf(key)).toEqual({ kind: 'agent', keyId: apiKey.id, agentId: 'new-agent' })
    expect((await agents.requireAgent('new-agent')).name).toBe('new-agent')
    await agents.revokeApiKey(apiKey.id)
    expect(await agents.holderOf(key)).toBeNull()
    await expect(agents.revokeApiKey(admin?.keyId as string)).rejects.toBeInstanceOf(ValidationError)
    await expect(agents.createAgent('Not Valid')).rejects.toBeInstanceOf(ValidationError)
  })
})

/**
 * An embedding collaborator with vectors: placed texts get the test's vectors, others an axis of
 * their own (orthogonal to every other text); the index searches what was stored, exactly.
 */
function vectorEmbeddings(placed: Record<string, number[]>, dims = 64): MemoryEmbeddings {
  const axes = new Map<string, number>()
  const stored = new Map<string, Float32Array>()
  const embedOne = (text: string) => {
    const vector = new Float32Array(dims)
    const given = placed[text]
    if (given) vector.set(given)
    else {
      if (!axes.has(text)) axes.set(text, 8 + (axes.size % (dims - 8)))
      vector[axes.get(text) as number] = 1
    }
    return vector
  }
  return {
    model: 'test-table',
    embedTexts: async (_agentId, texts) => texts.map(embedOne),
    index: async () => ({
      search: (query, limit) =>
        [...stored]
          .map(([id, vector]) => ({ id, similarity: cosineSimilarity(query, vector) }))
          .sort((a, b) => b.similarity - a.similarity)
          .slice(0, limit),
    }),
    store: async (_agentId, _kind, owners) => {
      for (const owner of owners) stored.set(String(owner.id), owner.vector ?? embedOne(owner.text))
      return owners.length
    },
    enqueue: async () => {},
    forget: () => {},
    coverage: async () => [],
  }
}

function withVectors(placed: Record<string, number[]>) {
  const storage = createInMemoryStorage(clock)
  const privacy = new PrivacyService(storage.privacyPolicies)
  const memories = new MemoryItemService(
    storage.memoryItems,
    clock,
    tokenCounter,
    DEFAULT_LIMITS,
    privacy,
    vectorEmbeddings(placed),
  )
  return { storage, memories, privacy }
}

const PLACED = {
  'The user lives in Berlin with two cats': [1, 0, 0],
  // cosine 0.99 with the first, few words in common: a semantic duplicate only.
  'Home city: Berlin, pets: a pair of cats': [0.99, Math.sqrt(1 - 0.99 ** 2), 0],
}

/** Writes whose outcomes depend on the ones before them in the same batch. */
const BATCH: MemoryItemInput[] = [
  { content: 'The user lives in Berlin with two cats', category: 'fact' },
  { content: 'the user lives in Berlin with two cats!', category: 'fact' },
  { content: 'Home city: Berlin, pets: a pair of cats', category: 'fact' },
  { content: 'The user works at Acme as a data engineer in the platform team', category: 'fact' },
  { content: 'The user works at Globex as a data engineer now', category: 'fact' },
  { content: 'Likes green tea in the morning', category: 'preference', userId: 'u2' },
  { content: 'Likes green tea in the morning', category: 'preference' },
]

describe('createMany: one batch, the outcomes of one write after another', { timeout: 60_000 }, () => {
  const summary = (r: MemoryWriteResult) => ({
    outcome: r.outcome,
    layer: r.layer,
    content: r.item.content,
    superseded: r.superseded?.content ?? null,
  })

  it('resolves duplicates (by words and by vector) and supersession among the batch as create does', async () => {
    const sequential = withVectors(PLACED)
    await sequential.storage.repositories.agents.upsert('a', null)
    const oneByOne: MemoryWriteResult[] = []
    for (const input of BATCH) oneByOne.push(await sequential.memories.create('a', input))

    const batched = withVectors(PLACED)
    await batched.storage.repositories.agents.upsert('a', null)
    const together = await batched.memories.createMany(
      'a',
      BATCH.map((input) => ({ input })),
    )
    const results = together.map((r) => {
      if (!r.ok) throw r.error
      return r.result
    })
    expect(results.map(summary)).toEqual(oneByOne.map(summary))
    // The cases this batch is for: a word duplicate and a vector duplicate of its own first write,
    // and the same text for another user stored twice.
    expect(results.map((r) => [r.outcome, r.layer])).toEqual(
      expect.arrayContaining([
        ['DUPLICATE', 'jaccard'],
        ['DUPLICATE', 'semantic'],
      ]),
    )
    expect(results[1]?.duplicateOf?.id).toBe(results[0]?.item.id)
    expect(results[2]?.duplicateOf?.id).toBe(results[0]?.item.id)
    expect(results[4]).toMatchObject({ outcome: 'SUPERSEDED', superseded: { id: results[3]?.item.id } })
    expect(results.slice(5).map((r) => r.outcome)).toEqual(['STORED', 'STORED'])
  })

  it('returns a refused write as its error and still stores the others', async () => {
    const { storage, memories, privacy } = withVectors({})
    await storage.repositories.agents.upsert('a', null)
    await privacy.setPolicy('a', 'reject', [])
    const written = await memories.createMany('a', [
      { input: { content: 'Prefers window seats', category: 'preference' } },
      { input: { content: 'Card 4111 1111 1111 1111 is on file', category: 'fact' } },
      { input: { content: '', category: 'fact' } },
      { input: { content: 'Flies to Lisbon in May', category: 'fact' } },
    ])
    expect(written.map((w) => w.ok)).toEqual([true, false, false, true])
    expect(written[1]).toMatchObject({ ok: false, error: expect.any(ValidationError) })
    expect((await memories.stats('a')).current).toBe(2)
  })

  it('applies a named supersession in the batch, so a later write no longer sees the replaced item', async () => {
    const { storage, memories } = withVectors({})
    await storage.repositories.agents.upsert('a', null)
    const old = await memories.create('a', { content: 'Drives a blue car', category: 'fact' })
    const written = await memories.createMany('a', [
      { input: { content: 'Sold the car, now cycles', category: 'fact' }, supersedes: old.item.id },
      { input: { content: 'Drives a blue car', category: 'fact' } },
    ])
    expect(written[0]).toMatchObject({ ok: true, alsoSuperseded: { id: old.item.id } })
    // The replaced item is no longer current: the same words again are a new memory, not its duplicate.
    expect(written[1]).toMatchObject({ ok: true, result: { outcome: 'STORED' } })
  })

  it('leaves nothing of the batch behind when a write fails half-way', async () => {
    const { storage, memories } = withVectors({})
    await storage.repositories.agents.upsert('a', null)
    const items = storage.memoryItems
    let creates = 0
    const failing = new MemoryItemService(
      {
        ...items,
        transaction: (fn) =>
          items.transaction((inner) =>
            fn({
              ...inner,
              create: async (agentId, item) => {
                if (++creates === 2) throw new Error('disk full')
                return inner.create(agentId, item)
              },
            }),
          ),
      },
      clock,
      tokenCounter,
      DEFAULT_LIMITS,
      new PrivacyService(storage.privacyPolicies),
      vectorEmbeddings({}),
    )
    await expect(
      failing.createMany('a', [
        { input: { content: 'Prefers window seats', category: 'preference' } },
        { input: { content: 'Flies to Lisbon in May', category: 'fact' } },
      ]),
    ).rejects.toThrow('disk full')
    expect((await memories.stats('a')).total).toBe(0)
  })
})
