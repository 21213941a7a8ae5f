import { describe, expect, it } from 'vitest'
import { agentsOutside, isPoolRole, membersFromForm, membershipSummary, poolHref, syncSummary } from './pools'

describe('the pools pages’ pure steps', () => {
  it('reads the members picked on the create form: a role per agent, empty leaves it out', () => {
    const form = [
      ['name', 'support-kb'],
      ['role:agent-a', 'CONTRIBUTOR'],
      ['role:agent-b', ''],
      ['role:agent-c', 'READER'],
      ['role:agent-d', 'OWNER'],
      ['role:', 'READER'],
    ] as [string, unknown][]
    expect(membersFromForm(form)).toEqual([
      { agentId: 'agent-a', role: 'CONTRIBUTOR' },
      { agentId: 'agent-c', role: 'READER' },
    ])
    expect(membersFromForm([])).toEqual([])
  })

  it('knows the two roles and nothing else', () => {
    expect(isPoolRole('READER')).toBe(true)
    expect(isPoolRole('CONTRIBUTOR')).toBe(true)
    expect(isPoolRole('reader')).toBe(false)
    expect(isPoolRole('toString')).toBe(false)
    expect(isPoolRole(undefined)).toBe(false)
  })

  it('sums up a membership with singular and plural nouns', () => {
    expect(membershipSummary([])).toBe('no members')
    expect(membershipSummary([{ role: 'READER' }])).toBe('1 reader')
    expect(
      membershipSummary([
        { role: 'READER' },
        { role: 'CONTRIBUTOR' },
        { role: 'CONTRIBUTOR' },
        { role: 'READER' },
      ]),
    ).toBe('2 contributors, 2 readers')
    expect(membershipSummary([{ role: 'CONTRIBUTOR' }])).toBe('1 contributor')
  })

  it('says what a sync did, and that a second sync stored nothing new', () => {
    expect(syncSummary({ agentId: 'agent-b', stored: 3, duplicates: 0, superseded: 0 })).toBe(
      'Stored 3 new memories in agent-b.',
    )
    expect(syncSummary({ agentId: 'agent-b', stored: 0, duplicates: 3, superseded: 0 })).toBe(
      'Stored 0 new memories in agent-b; 3 were already there.',
    )
    expect(syncSummary({ agentId: 'b', stored: 1, duplicates: 1, superseded: 1 })).toBe(
      'Stored 1 new memory in b; 1 was already there; 1 replaced an older memory.',
    )
  })

  it('offers only agents that are not members yet', () => {
    const agents = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
    expect(
      agentsOutside(agents, [{ agentId: 'b', role: 'READER', addedAt: '2026-01-01T00:00:00Z' }]),
    ).toEqual([{ id: 'a' }, { id: 'c' }])
  })

  it('links to a pool by its id, escaped', () => {
    expect(poolHref('p1')).toBe('/pools/p1')
    expect(poolHref('a/b c')).toBe('/pools/a%2Fb%20c')
  })
})
