import { type Clock, createTokenCounter, DEFAULT_LIMITS, NotFoundError, ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentService } from '../agents/agent-service.ts'
import type { KnowledgeEmbeddings } from '../knowledge/collaborators.ts'
import { KnowledgeService } from '../knowledge/knowledge-service.ts'
import { PrivacyService } from '../privacy/privacy-service.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import type { MemoryEmbeddings } from './collaborators.ts'
import { MemoryItemService } from './memory-item-service.ts'

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
