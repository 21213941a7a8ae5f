import { createOpenAiCompatibleLlm } from '@engram/providers'
import { chatReply, loopbackOnlyFetch, startChatServer } from '@engram/providers/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const SETTINGS = `query { memoryFormationSettings { __typename ... on MemoryFormationSettings {
  enabled extraction { extractor model } summaries { strategy summaryDebounceSeconds summaryRetentionDays summarizationThresholdTokens summaryMaxTokens }
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
      extraction: { extractor: 'OFFLINE', model: null },
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

const EXTRACTION = `mutation($s: MemoryFormationSettingsInput!) { updateMemoryFormationSettings(settings: $s) {
  __typename ... on MemoryFormationSettings { extraction { extractor model } }
  ... on ValidationError { issues { field message limit } } } }`
const SYNC = `mutation { syncMemory { ... on SyncMemoryPayload { turns extractors } } }`
// syncMemory also summarises the conversations it read: who wrote each summary.
const WRITERS = `{ summaries { ... on QuerySummariesSuccess { data { writer } } } }`
const SAY = `mutation($t: String!) { addMessage(input: { conversationId: "c", role: USER, speaker: "john", content: $t }) { __typename } }`

// Issue 13 §5: "extractor (offline / llm), core model" per agent.
describe('the extractor and core model are per agent', () => {
  it('llm without a model on the server is refused naming settings.extraction.extractor; a model name is 1-200 characters', async () => {
    const t = await createTestApp()
    try {
      const key = await createAgentKey(t, 'agent-x')
      const refused = (await t.gql(EXTRACTION, { s: { extraction: { extractor: 'LLM' } } }, key)).data
        .updateMemoryFormationSettings
      expect(refused).toEqual({
        __typename: 'ValidationError',
        issues: [
          {
            field: 'settings.extraction.extractor',
            message: expect.stringMatching(/no language model is configured/),
            limit: null,
          },
        ],
      })
      const long = (await t.gql(EXTRACTION, { s: { extraction: { model: 'm'.repeat(201) } } }, key)).data
        .updateMemoryFormationSettings
      expect(long.issues).toEqual([
        expect.objectContaining({ field: 'settings.extraction.model', limit: '200' }),
      ])
      const named = (await t.gql(EXTRACTION, { s: { extraction: { model: 'qwen2.5:7b' } } }, key)).data
        .updateMemoryFormationSettings
      expect(named.extraction).toEqual({ extractor: 'OFFLINE', model: 'qwen2.5:7b' })
    } finally {
      await t.close()
    }
  })

  it('with a model on the server: an offline agent never calls it, another is asked for its own model', async () => {
    // The scripted OpenAI-compatible server answers extraction and summary prompts by their schema.
    const server = await startChatServer((request) => {
      const format = request.body.response_format as { json_schema?: { name?: string } } | undefined
      return chatReply(
        JSON.stringify(
          format?.json_schema?.name === 'conversation_summary'
            ? { summary: 'John works at Acme.' }
            : { items: [] },
        ),
      )
    })
    const llm = createOpenAiCompatibleLlm({
      baseUrl: server.baseUrl,
      model: 'server-model',
      fetch: loopbackOnlyFetch,
    })
    const t = await createTestApp({ llm })
    try {
      const offline = await createAgentKey(t, 'agent-offline')
      const own = await createAgentKey(t, 'agent-own')
      const plain = await createAgentKey(t, 'agent-plain')
      // By default an agent follows the server: a model is configured, so LLM.
      expect((await t.gql(SETTINGS, {}, plain)).data.memoryFormationSettings.extraction).toEqual({
        extractor: 'LLM',
        model: null,
      })
      await t.gql(EXTRACTION, { s: { extraction: { extractor: 'OFFLINE' } } }, offline)
      await t.gql(EXTRACTION, { s: { extraction: { model: 'agent-model' } } }, own)
      for (const key of [offline, own, plain])
        await t.gql(SAY, { t: 'I work at Acme as a data engineer.' }, key)

      expect((await t.gql(SYNC, {}, offline)).data.syncMemory).toEqual({ turns: 1, extractors: ['OFFLINE'] })
      expect((await t.gql(WRITERS, {}, offline)).data.summaries.data).toEqual([{ writer: 'EXTRACTIVE' }])
      expect(server.requests).toHaveLength(0)

      expect((await t.gql(SYNC, {}, own)).data.syncMemory).toEqual({ turns: 1, extractors: ['LLM'] })
      expect((await t.gql(WRITERS, {}, own)).data.summaries.data).toEqual([{ writer: 'LLM' }])
      expect(server.requests.length).toBeGreaterThanOrEqual(2)
      expect(new Set(server.requests.map((r) => r.body.model))).toEqual(new Set(['agent-model']))

      const before = server.requests.length
      expect((await t.gql(SYNC, {}, plain)).data.syncMemory.extractors).toEqual(['LLM'])
      expect(new Set(server.requests.slice(before).map((r) => r.body.model))).toEqual(
        new Set(['server-model']),
      )
      // The activity panel reports each agent's extractor.
      const ACTIVITY = `{ formationActivity { ... on FormationActivity { extractor circuitState } } }`
      expect((await t.gql(ACTIVITY, {}, offline)).data.formationActivity).toEqual({
        extractor: 'OFFLINE',
        circuitState: 'CLOSED',
      })
      expect((await t.gql(ACTIVITY, {}, own)).data.formationActivity.extractor).toBe('LLM')
    } finally {
      await t.close()
      await server.close()
    }
  })
})
