import { type Clock, createTokenCounter, poolStorageAgentId } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { createOperations } from '../operations/operations.ts'
import type { Principal } from '../operations/principal.ts'
import { createInMemoryStorage } from '../testing/index.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const operator: Principal = { kind: 'operator' }
const researcher = { kind: 'agent', agentId: 'researcher' } as const satisfies Principal
const coder = { kind: 'agent', agentId: 'coder' } as const satisfies Principal
const outsider = { kind: 'agent', agentId: 'outsider' } as const satisfies Principal

const SHADERS = 'WebGPU requires WGSL shaders, not GLSL'

/** Spec 002's example: a pool shared by a researcher (contributor) and a coder (reader). */
async function technicalDocs() {
  const storage = createInMemoryStorage(clock)
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {} },
    optimizer: { intervalMs: 0 },
  })
  const ops = createOperations(engine)
  for (const id of ['researcher', 'coder', 'outsider']) await ops.createAgent(operator, { id })
  const pool = await ops.createPool(operator, {
    name: 'technical-docs',
    description: 'What the team learnt',
    members: [
      { agentId: 'researcher', role: 'CONTRIBUTOR' },
      { agentId: 'coder', role: 'READER' },
    ],
  })
  return { engine, ops, storage, pool }
}

describe('shared memory pools', () => {
  it('stores contributions through the memory pipeline (STORED, then DUPLICATE)', async () => {
    const { ops, pool } = await technicalDocs()
    const stored = await ops.contributeToPool(researcher, {
      poolId: pool.id,
      content: SHADERS,
      category: 'FACT',
      source: 'MDN documentation',
    })
    expect(stored).toMatchObject({ outcome: 'STORED', contributorAgentId: 'researcher' })
    expect(stored.memory.metadata).toEqual({ source: 'MDN documentation' })
    // The same knowledge again is a duplicate of the first, as for an agent's own memories.
    const again = await ops.contributeToPool(researcher, {
      poolId: pool.id,
      content: SHADERS,
      category: 'FACT',
    })
    expect(again.outcome).toBe('DUPLICATE')
    expect(again.duplicateOf?.id).toBe(stored.memory.id)
    // The pool's hybrid search runs on the stores' full-text indexes: apps/api's pools.test.ts
    // checks its hits on SQLite and Postgres (the in-memory index is fed by tests by hand).
    const page = await ops.poolMemories(coder, { poolId: pool.id })
    expect(page.totalCount).toBe(1)
    expect((await ops.pool(coder, { id: pool.id })).memoryCount).toBe(1)
  })

  it('gives readers reads, contributors writes, and non-members nothing (NOT_FOUND)', async () => {
    const { ops, pool } = await technicalDocs()
    const reader = await ops.call('contributeToPool', coder, {
      poolId: pool.id,
      content: SHADERS,
      category: 'FACT',
    })
    expect(!reader.ok && reader.error.code).toBe('FORBIDDEN')
    for (const [name, input] of [
      ['pool', { id: pool.id }],
      ['poolMemories', { poolId: pool.id }],
      ['queryPool', { poolId: pool.id, query: 'shaders' }],
      ['contributeToPool', { poolId: pool.id, content: SHADERS, category: 'FACT' }],
      ['syncPoolToAgent', { poolId: pool.id }],
    ] as const) {
      const refused = await ops.call(name, outsider, input as never)
      expect(!refused.ok && refused.error.code, name).toBe('NOT_FOUND')
    }
    expect(await ops.pools(outsider, {})).toEqual([])
    expect((await ops.pools(coder, {})).map((p) => [p.name, p.role])).toEqual([['technical-docs', 'READER']])
    // Only admin keys change pools and membership.
    const created = await ops.call('createPool', researcher, { name: 'mine' })
    expect(!created.ok && created.error.code).toBe('FORBIDDEN')
  })

  it('applies a membership change on the next request (no cached membership)', async () => {
    const { ops, pool } = await technicalDocs()
    await ops.addPoolMember(operator, { poolId: pool.id, agentId: 'coder', role: 'CONTRIBUTOR' })
    expect(
      (await ops.contributeToPool(coder, { poolId: pool.id, content: SHADERS, category: 'FACT' })).outcome,
    ).toBe('STORED')
    await ops.removePoolMember(operator, { poolId: pool.id, agentId: 'coder' })
    const after = await ops.call('queryPool', coder, { poolId: pool.id, query: 'shaders' })
    expect(!after.ok && after.error.code).toBe('NOT_FOUND')
    // Without removeContributions its memory stays in the pool.
    expect((await ops.poolMemories(researcher, { poolId: pool.id })).totalCount).toBe(1)
  })

  it('syncs a pool into a member’s own memory once, with its provenance; never into another agent', async () => {
    const { ops, pool } = await technicalDocs()
    await ops.contributeToPool(researcher, { poolId: pool.id, content: SHADERS, category: 'FACT' })
    const first = await ops.syncPoolToAgent(coder, { poolId: pool.id })
    expect(first).toMatchObject({ stored: 1, duplicates: 0, agentId: 'coder' })
    expect(first.memories[0]?.metadata).toMatchObject({ provenance: `pool:${pool.id}` })
    const second = await ops.syncPoolToAgent(coder, { poolId: pool.id })
    expect(second).toMatchObject({ stored: 0, duplicates: 1, memories: [] })
    expect((await ops.memories(coder, {})).totalCount).toBe(1)
    const other = await ops.call('syncPoolToAgent', coder, { poolId: pool.id, agentId: 'researcher' })
    expect(!other.ok && other.error.code).toBe('FORBIDDEN')
    expect((await ops.memories(researcher, {})).totalCount).toBe(0)
  })

  it('lets only the contributor or an admin remove a pool memory', async () => {
    const { ops, pool } = await technicalDocs()
    await ops.addPoolMember(operator, { poolId: pool.id, agentId: 'coder', role: 'CONTRIBUTOR' })
    const mine = await ops.contributeToPool(researcher, {
      poolId: pool.id,
      content: SHADERS,
      category: 'FACT',
    })
    const refused = await ops.call('removePoolMemory', coder, { poolId: pool.id, memoryId: mine.memory.id })
    expect(!refused.ok && refused.error.code).toBe('FORBIDDEN')
    const removed = await ops.removePoolMemory(researcher, { poolId: pool.id, memoryId: mine.memory.id })
    expect(removed.contributorAgentId).toBe('researcher')
    expect((await ops.poolMemories(operator, { poolId: pool.id })).totalCount).toBe(0)
  })

  it('keeps pools’ storage agents out of agent lists and every-agent memory lists', async () => {
    const { ops, pool } = await technicalDocs()
    await ops.contributeToPool(researcher, { poolId: pool.id, content: SHADERS, category: 'FACT' })
    expect((await ops.agents(operator)).map((a) => a.id).sort()).toEqual(['coder', 'outsider', 'researcher'])
    expect((await ops.memories(operator, {})).totalCount).toBe(0)
  })

  it('refuses a taken name (CONFLICT on name) and bad input naming the field and the limit', async () => {
    const { ops } = await technicalDocs()
    const taken = await ops.call('createPool', operator, { name: ' technical-docs ' })
    expect(!taken.ok && taken.error).toMatchObject({ code: 'CONFLICT' })
    const long = await ops.call('createPool', operator, { name: 'n'.repeat(101) })
    expect(!long.ok && long.error.issues).toEqual([expect.objectContaining({ field: 'name', limit: 100 })])
    const twice = await ops.call('createPool', operator, {
      name: 'twice',
      members: [
        { agentId: 'coder', role: 'READER' },
        { agentId: 'coder', role: 'CONTRIBUTOR' },
      ],
    })
    expect(!twice.ok && twice.error.issues).toEqual([expect.objectContaining({ field: 'members.1.agentId' })])
    const ghost = await ops.call('createPool', operator, {
      name: 'ghost',
      members: [{ agentId: 'nobody', role: 'READER' }],
    })
    expect(!ghost.ok && ghost.error.code).toBe('NOT_FOUND')
    expect((await ops.pools(operator, {})).map((p) => p.name)).toEqual(['technical-docs'])
  })

  it('removes a deleted agent’s contributions and memberships, and a deleted pool’s storage agent', async () => {
    const { engine, ops, pool, storage } = await technicalDocs()
    await ops.addPoolMember(operator, { poolId: pool.id, agentId: 'coder', role: 'CONTRIBUTOR' })
    await ops.contributeToPool(researcher, { poolId: pool.id, content: SHADERS, category: 'FACT' })
    await ops.contributeToPool(coder, {
      poolId: pool.id,
      content: 'Compute passes dispatch workgroups',
      category: 'FACT',
    })
    await engine.lifecycle.deleteAgent('researcher')
    const left = await ops.poolMemories(operator, { poolId: pool.id })
    expect(left.memories.map((m) => m.contributorAgentId)).toEqual(['coder'])
    expect((await ops.pool(operator, { id: pool.id })).members.map((m) => m.agentId)).toEqual(['coder'])
    const report = await engine.lifecycle.report('researcher')
    expect(report.remaining).toBe(0)
    await ops.deletePool(operator, { id: pool.id })
    const storageAgent = poolStorageAgentId(pool.id)
    expect(await storage.repositories.agents.find(storageAgent)).toBeNull()
    expect((await engine.lifecycle.report(storageAgent)).remaining).toBe(0)
    expect((await engine.lifecycle.report('coder')).stores).toContainEqual(
      expect.objectContaining({ store: 'pool memberships', count: 0 }),
    )
    const gone = await ops.call('pool', operator, { id: pool.id })
    expect(!gone.ok && gone.error.code).toBe('NOT_FOUND')
  })
})
