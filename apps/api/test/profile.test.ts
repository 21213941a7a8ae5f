import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const REMEMBER = `mutation($c: String!, $cat: MemoryCategory!) {
  createMemory(input: { content: $c, category: $cat, userId: "maya" }) { __typename } }`
const REGENERATE = `mutation { regenerateProfile(userId: "maya") { __typename
  ... on ProfileVersion { version content writer trigger userId sourceMemoryIds } } }`
const CURRENT = `query($u: String) { userProfile(userId: $u) { __typename ... on UserProfile { current { version content } } } }`
const VERSIONS = `query($o: Int, $l: Int) { profileVersions(userId: "maya", offset: $o, limit: $l) { __typename
  ... on ProfileVersionPage { totalCount versions { version } }
  ... on ValidationError { issues { field limit } } } }`
const DIFF = `query($f: Int!, $t: Int!) { profileDiff(userId: "maya", from: $f, to: $t) { __typename
  ... on ProfileDiff { from to added removed unchanged } ... on NotFoundError { message } } }`

// Issue 13 §4: the versioned profile through GraphQL.
describe('the user profile through GraphQL', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-p')
  })
  afterAll(() => t.close())

  it('null until generated; regenerate, versions newest first, a diff of two', async () => {
    expect((await t.gql(CURRENT, { u: 'maya' }, key)).data.userProfile).toEqual({
      __typename: 'UserProfile',
      current: null,
    })
    await t.gql(REMEMBER, { c: 'Maya prefers trains to planes', cat: 'PREFERENCE' }, key)
    const first = (await t.gql(REGENERATE, {}, key)).data.regenerateProfile
    expect(first).toMatchObject({ version: 1, writer: 'EXTRACTIVE', trigger: 'REQUEST', userId: 'maya' })
    expect(first.content).toMatch(/trains/)
    expect(first.sourceMemoryIds).toHaveLength(1)
    await t.gql(REMEMBER, { c: 'Maya speaks Japanese', cat: 'SKILL' }, key)
    expect((await t.gql(REGENERATE, {}, key)).data.regenerateProfile.version).toBe(2)
    expect((await t.gql(CURRENT, { u: 'maya' }, key)).data.userProfile.current.version).toBe(2)
    // Another user's profile is another profile.
    expect((await t.gql(CURRENT, { u: 'someone-else' }, key)).data.userProfile.current).toBeNull()
    expect((await t.gql(VERSIONS, {}, key)).data.profileVersions).toEqual({
      __typename: 'ProfileVersionPage',
      totalCount: 2,
      versions: [{ version: 2 }, { version: 1 }],
    })
    expect((await t.gql(VERSIONS, { o: 1, l: 1 }, key)).data.profileVersions.versions).toEqual([
      { version: 1 },
    ])
    const diff = (await t.gql(DIFF, { f: 1, t: 2 }, key)).data.profileDiff
    expect(diff).toMatchObject({ __typename: 'ProfileDiff', from: 1, to: 2, removed: [] })
    expect(diff.added.join(' ')).toMatch(/Japanese/)
    expect((await t.gql(DIFF, { f: 1, t: 9 }, key)).data.profileDiff.__typename).toBe('NotFoundError')
  })

  it('paging out of range names the field and the limit', async () => {
    expect((await t.gql(VERSIONS, { l: 101 }, key)).data.profileVersions).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'limit', limit: '100' }],
    })
    expect((await t.gql(VERSIONS, { o: -1 }, key)).data.profileVersions).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'offset', limit: '0' }],
    })
  })
})
