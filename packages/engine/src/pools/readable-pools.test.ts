import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import type { PoolMemberRecord } from '../ports/pools.ts'
import { readablePoolsOf } from './pool-service.ts'

describe('readablePoolsOf: the pools an agent reads, kept per write version', () => {
  it('reads the memberships once per version, and again after a change bumps it', async () => {
    const memberships = new Map<string, string[]>([['agent-a', ['p1']]])
    let reads = 0
    const repository = {
      async membershipsOf(agentId: string) {
        reads++
        return (memberships.get(agentId) ?? []).map(
          (poolId) => ({ poolId, agentId, role: 'READER', addedAt: new Date(0) }) as PoolMemberRecord,
        )
      },
    }
    const writes = new AgentWrites()
    const readable = readablePoolsOf(repository, writes)

    expect(await readable('agent-a')).toEqual(['p1'])
    expect(await readable('agent-a')).toEqual(['p1'])
    expect(reads).toBe(1)

    // A removal (PoolService.membershipChanged touches the agent) holds from the next request.
    memberships.set('agent-a', [])
    writes.touch('agent-a')
    expect(await readable('agent-a')).toEqual([])
    expect(reads).toBe(2)

    // Another agent's change leaves this one's kept answer alone; a deleted agent's id starts over.
    writes.touch('agent-b')
    expect(await readable('agent-a')).toEqual([])
    expect(reads).toBe(2)
    memberships.set('agent-a', ['p2'])
    writes.ended('agent-a')
    expect(await readable('agent-a')).toEqual(['p2'])
    expect(reads).toBe(3)
  })
})
