import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  DEFAULT_POOL_LIMITS,
  distinctMembers,
  isPoolStorageAgent,
  mayContribute,
  normalizePoolDescription,
  normalizePoolName,
  PoolLimitsSchema,
  poolStorageAgentId,
} from './pool-rules.ts'

const issuesOf = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    if (error instanceof ValidationError) return error.issues
    throw error
  }
  throw new Error('expected a ValidationError')
}

describe('pool rules', () => {
  it('stores a pool under an id no agent id can take', () => {
    const storage = poolStorageAgentId('p1')
    expect(storage).toBe('pool:p1')
    expect(isPoolStorageAgent(storage)).toBe(true)
    expect(isPoolStorageAgent('pool-agent')).toBe(false)
    // Agent ids are lowercase slugs: ':' never appears in one.
    expect(/^[a-z0-9][a-z0-9_-]{0,63}$/.test(storage)).toBe(false)
  })

  it('trims names and refuses blank or over-long ones, naming the field and the limit', () => {
    expect(normalizePoolName('  docs ')).toBe('docs')
    expect(issuesOf(() => normalizePoolName('   '))).toEqual([
      { field: 'name', message: 'must not be blank', limit: 1 },
    ])
    const max = DEFAULT_POOL_LIMITS.maxPoolNameChars
    expect(normalizePoolName('n'.repeat(max))).toHaveLength(max)
    expect(issuesOf(() => normalizePoolName('n'.repeat(max + 1)))[0]).toMatchObject({
      field: 'name',
      limit: max,
    })
  })

  it('keeps a description within its limit, blank as none', () => {
    expect(normalizePoolDescription('  ')).toBeNull()
    expect(normalizePoolDescription(undefined)).toBeNull()
    const max = DEFAULT_POOL_LIMITS.maxPoolDescriptionChars
    expect(normalizePoolDescription('d'.repeat(max))).toHaveLength(max)
    expect(issuesOf(() => normalizePoolDescription('d'.repeat(max + 1)))[0]).toMatchObject({
      field: 'description',
      limit: max,
    })
  })

  it('lets contributors write and readers only read', () => {
    expect(mayContribute('CONTRIBUTOR')).toBe(true)
    expect(mayContribute('READER')).toBe(false)
  })

  it('refuses an agent named twice and too many members', () => {
    expect(distinctMembers([{ agentId: 'a' }, { agentId: 'b' }])).toHaveLength(2)
    expect(issuesOf(() => distinctMembers([{ agentId: 'a' }, { agentId: 'a' }]))[0]).toMatchObject({
      field: 'members.1.agentId',
    })
    const limits = PoolLimitsSchema.parse({ maxMembersPerCall: 1 })
    expect(issuesOf(() => distinctMembers([{ agentId: 'a' }, { agentId: 'b' }], limits))[0]).toMatchObject({
      field: 'members',
      limit: 1,
    })
  })

  it('validates configured limits', () => {
    expect(() => PoolLimitsSchema.parse({ maxPoolNameChars: 0 })).toThrow()
    expect(PoolLimitsSchema.parse({}).maxPoolMembers).toBe(1_000)
  })
})
