import { type Clock, createTokenCounter, poolStorageAgentId } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { createOperations } from '../operations/operations.ts'
import type { Principal } from '../operations/principal.ts'
import { createInMemoryStorage } from '../testing/index.ts'

// Pools as a search scope (issue 17): POOLS searches every pool the agent is a member of and no
// other, each hit naming its pool. RECENCY ranks without the full-text index (the in-memory one is
// fed by hand); apps/api's pool-scope.test.ts checks HYBRID and the context section on SQLite and
// Postgres.

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const operator: Principal = { kind: 'operator' }
const as = (agentId: string) => ({ kind: 'agent', agentId }) as const satisfies Principal

async function twoPools() {
  const storage = createInMemoryStorage(clock)
  // The in-memory recall sources are fed by hand (like the full-text index): each stored memory
  // is mirrored there under its owner, a pool's under its storage agent.
  const mirror = (agentId: string, memory: { id: string; content: string }) =>
    storage.recall.addMemoryItem({
      id: memory.id,
      agentId,
      userId: null,
      content: memory.content,
      category: 'fact',
      tags: [],
      importance: 0.5,
      confidence: 1,
      pinned: false,
      sourceConversationId: null,
      sourceMessageId: null,
      accessCount: 0,
      lastAccessedAt: null,
      validFrom: clock.now(),
      validUntil: null,
      supersededById: null,
      metadata: {},
      tokenCount: 5,
      createdAt: clock.now(),
      updatedAt: clock.now(),
    })
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {} },
    optimizer: { intervalMs: 0 },
  })
  const ops = createOperations(engine)
  for (const id of ['researcher', 'coder', 'outsider']) await ops.createAgent(operator, { id })
  const docs = await ops.createPool(operator, {
    name: 'technical-docs',
    members: [
      { agentId: 'researcher', role: 'CONTRIBUTOR' },
      { agentId: 'coder', role: 'READER' },
    ],
  })
  const ops2 = await ops.createPool(operator, {
    name: 'operations',
    members: [{ agentId: 'researcher', role: 'CONTRIBUTOR' }],
  })
  for (const [pool, content] of [
    [docs.id, 'WebGPU requires WGSL shaders, not GLSL'],
    [ops2.id, 'Deploys freeze on Fridays after noon'],
  ] as const) {
    const shared = await ops.contributeToPool(as('researcher'), { poolId: pool, content, category: 'FACT' })
    mirror(poolStorageAgentId(pool), shared.memory)
  }
  const own = await ops.createMemory(as('coder'), {
    content: 'The coder prefers Rust for tooling',
    category: 'PREFERENCE',
  })
  mirror('coder', own.memory)
  return { ops, docs, ops2 }
}

const recent = { query: 'what do we know?', strategy: 'RECENCY' as const }

describe('the POOLS search scope', () => {
  it('searches every pool the agent reads, each hit naming its pool, merged with its own scopes', async () => {
    const { ops, docs, ops2 } = await twoPools()
    const reader = await ops.search(as('coder'), { ...recent, scopes: ['POOLS'] })
    expect(reader.hits.map((h) => [h.scope, h.poolId, h.memory?.content])).toEqual([
      ['POOLS', docs.id, 'WebGPU requires WGSL shaders, not GLSL'],
    ])
    // The hit is a use of the pool's memory, recorded under the pool (as queryPool records it).
    expect(reader.hits[0]?.memory?.accessCount).toBe(1)
    const merged = await ops.search(as('coder'), { ...recent, scopes: ['MEMORIES', 'POOLS'] })
    expect(merged.hits.map((h) => [h.scope, h.poolId])).toEqual(
      expect.arrayContaining([
        ['MEMORIES', null],
        ['POOLS', docs.id],
      ]),
    )
    expect(merged.hits).toHaveLength(2)
    // A contributor of both pools reads both.
    const contributor = await ops.search(as('researcher'), { ...recent, scopes: ['POOLS'] })
    expect(contributor.hits.map((h) => h.poolId).sort()).toEqual([docs.id, ops2.id].sort())
  })

  it('a non-member finds nothing, a removed member nothing from the next request, and POOLS is never a default', async () => {
    const { ops, docs } = await twoPools()
    expect((await ops.search(as('outsider'), { ...recent, scopes: ['POOLS'] })).hits).toEqual([])
    expect((await ops.search(as('coder'), { ...recent, scopes: ['POOLS'] })).hits).toHaveLength(1)
    await ops.removePoolMember(operator, { poolId: docs.id, agentId: 'coder' })
    expect((await ops.search(as('coder'), { ...recent, scopes: ['POOLS'] })).hits).toEqual([])
    // Without scopes search keeps its default (MESSAGES): no pool hit unless asked.
    const researcher = await ops.search(as('researcher'), recent)
    expect(researcher.hits.filter((h) => h.scope === 'POOLS')).toEqual([])
  })
})
