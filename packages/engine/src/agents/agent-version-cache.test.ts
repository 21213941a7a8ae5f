import { describe, expect, it } from 'vitest'
import { AgentVersionCache } from './agent-version-cache.ts'
import { AgentWrites } from './agent-writes.ts'

describe('AgentVersionCache', () => {
  it('reads an agent once per write version, and again after a settings change', async () => {
    const writes = new AgentWrites()
    const reads: string[] = []
    let stored = 1
    const cache = new AgentVersionCache(async (agentId) => {
      reads.push(agentId)
      return { agentId, stored }
    }, writes)
    expect(await cache.of('a')).toEqual({ agentId: 'a', stored: 1 })
    expect(await cache.of('a')).toEqual({ agentId: 'a', stored: 1 })
    expect(reads).toEqual(['a'])
    stored = 2
    writes.touch('a', 'settings')
    expect(await cache.of('a')).toEqual({ agentId: 'a', stored: 2 })
    // Another agent is its own entry; a write of one leaves the other's alone.
    await cache.of('b')
    writes.touch('a')
    await cache.of('b')
    expect(reads).toEqual(['a', 'a', 'b'])
  })

  it('keeps no failed read, and forgets an agent', async () => {
    const writes = new AgentWrites()
    let fail = true
    const cache = new AgentVersionCache(async () => {
      if (fail) throw new Error('store down')
      return 'settings'
    }, writes)
    await expect(cache.of('a')).rejects.toThrow('store down')
    fail = false
    expect(cache.holds('a')).toBe(false)
    expect(await cache.of('a')).toBe('settings')
    expect(cache.holds('a')).toBe(true)
    cache.forget('a')
    expect(cache.holds('a')).toBe(false)
  })

  it('holds at most its limit of agents, the least recently asked read again', async () => {
    const writes = new AgentWrites()
    const reads: string[] = []
    const cache = new AgentVersionCache(
      async (agentId) => {
        reads.push(agentId)
        return agentId
      },
      writes,
      { max: 2 },
    )
    await cache.of('a')
    await cache.of('b')
    await cache.of('c')
    expect(cache.holds('a')).toBe(false)
    await cache.of('a')
    expect(reads).toEqual(['a', 'b', 'c', 'a'])
  })
})
