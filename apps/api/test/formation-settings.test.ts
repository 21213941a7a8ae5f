import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const SETTINGS = `query { memoryFormationSettings { __typename ... on MemoryFormationSettings {
  enabled summaries { strategy summaryDebounceSeconds summaryRetentionDays summarizationThresholdTokens summaryMaxTokens }
  profile { profileRegenerateThreshold profileMaxTokens } } } }`
const UPDATE = `mutation($s: MemoryFormationSettingsInput!) { updateMemoryFormationSettings(settings: $s) {
  __typename
  ... on MemoryFormationSettings { enabled summaries { strategy summaryDebounceSeconds summaryRetentionDays }
    profile { profileRegenerateThreshold profileMaxTokens } }
  ... on ValidationError { issues { field limit } } } }`

// Issue 13 §5: per-agent settings validated whole, like the memory settings.
describe('memory formation settings through GraphQL', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-s')
  })
  afterAll(() => t.close())

  it('answers the defaults, then changes what was given and keeps the rest', async () => {
    expect((await t.gql(SETTINGS, {}, key)).data.memoryFormationSettings).toEqual({
      __typename: 'MemoryFormationSettings',
      enabled: true,
      summaries: {
        strategy: 'EXTRACTIVE',
        summaryDebounceSeconds: 60,
        summaryRetentionDays: 7,
        summarizationThresholdTokens: 50_000,
        summaryMaxTokens: 400,
      },
      profile: { profileRegenerateThreshold: 10, profileMaxTokens: 2_000 },
    })
    const changed = await t.gql(
      UPDATE,
      {
        s: {
          summaries: { strategy: 'HIERARCHICAL', summaryDebounceSeconds: 120 },
          profile: { profileMaxTokens: 800 },
        },
      },
      key,
    )
    expect(changed.data.updateMemoryFormationSettings).toEqual({
      __typename: 'MemoryFormationSettings',
      enabled: true,
      summaries: { strategy: 'HIERARCHICAL', summaryDebounceSeconds: 120, summaryRetentionDays: 7 },
      profile: { profileRegenerateThreshold: 10, profileMaxTokens: 800 },
    })
    // The engine acts on them: the summary service reads the new strategy.
    expect(await t.app.services.engine.summaries.settings('agent-s')).toMatchObject({
      strategy: 'hierarchical',
      summaryDebounceSeconds: 120,
    })
  })

  it('a value out of its limits names the field and the limit and changes nothing', async () => {
    const bad = await t.gql(
      UPDATE,
      {
        s: {
          enabled: false,
          summaries: { summaryRetentionDays: 400 },
          profile: { profileRegenerateThreshold: 0 },
        },
      },
      key,
    )
    expect(bad.data.updateMemoryFormationSettings).toEqual({
      __typename: 'ValidationError',
      issues: [
        { field: 'settings.summaries.summaryRetentionDays', limit: '365' },
        { field: 'settings.profile.profileRegenerateThreshold', limit: '1' },
      ],
    })
    const after = (await t.gql(SETTINGS, {}, key)).data.memoryFormationSettings
    expect(after).toMatchObject({
      enabled: true,
      summaries: { summaryRetentionDays: 7 },
      profile: { profileRegenerateThreshold: 10 },
    })
    // A strategy GraphQL does not know is refused before any resolver runs, naming the variable.
    const unknown = await t.gql(UPDATE, { s: { summaries: { strategy: 'FASTEST' } } }, key)
    expect(unknown.errors?.[0]?.message).toMatch(/\$s.*strategy|FASTEST/)
  })
})
