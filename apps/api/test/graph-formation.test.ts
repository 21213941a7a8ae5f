import { createOpenAiCompatibleLlm } from '@engram/providers'
import { chatReply, loopbackOnlyFetch, startChatServer } from '@engram/providers/testing'
import { describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Issue 15: the graph forms from every memory written, on the real stores (SQLite and Postgres:
// this file runs on both), offline and through a model over HTTP; deletions take it with them.
const CREATE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) {
  __typename ... on MemoryWrite { outcome memory { id } } ... on Error { message } } }`
const DELETE_MEMORY = `mutation($id: ID!) { deleteMemory(id: $id) { __typename ... on Error { message } } }`
const ADD = `mutation($c: String!, $t: String!) {
  addMessage(input: { conversationId: $c, role: USER, speaker: "dana", content: $t }) {
    __typename ... on Message { id } ... on Error { message } } }`
const DELETE_SESSION = `mutation($c: String!) { deleteSession(conversationId: $c) {
  __typename ... on DeleteSessionPayload { deleted } ... on Error { message } } }`

async function edges(t: TestApp, agentId: string, asOf = t.clock.now()) {
  const graph = t.app.services.engine.storage.graph
  const rows = await graph.relationships(agentId, { at: { asOf, knownAt: t.clock.now() } }, 0, 100)
  const name = async (id: string) => (await graph.findEntity(agentId, id))?.name
  return (
    await Promise.all(
      rows.map(async (r) => `${await name(r.sourceId)} -${r.relation}-> ${await name(r.targetId)}`),
    )
  ).sort()
}

async function remember(t: TestApp, key: string, content: string): Promise<string> {
  const r = await t.gql(CREATE, { input: { content, category: 'FACT' } }, key)
  expect(r.data.createMemory.outcome).toBe('STORED')
  await t.app.services.jobs.drain()
  return r.data.createMemory.memory.id
}

describe('the knowledge graph forms from memories', () => {
  it('offline: resolves names, ends a contradicted edge for "as of", and deletes what only a memory or a turn supported', async () => {
    const t = await createTestApp()
    try {
      const key = await createAgentKey(t, 'agent-g')
      await remember(t, key, 'Dana Kim moved to Berlin in 2023.')
      const lisbon = await remember(t, key, 'Dana moved to Lisbon in 2025.')
      expect(await edges(t, 'agent-g', new Date('2024-06-01T00:00:00Z'))).toEqual([
        'Dana Kim -lives in-> Berlin',
      ])
      expect(await edges(t, 'agent-g')).toEqual(['Dana Kim -lives in-> Lisbon'])

      expect((await t.gql(DELETE_MEMORY, { id: lisbon }, key)).data.deleteMemory.__typename).toBe(
        'MemoryItem',
      )
      // The fact that ended Berlin is gone: Berlin holds again.
      expect(await edges(t, 'agent-g')).toEqual(['Dana Kim -lives in-> Berlin'])
      const graph = t.app.services.engine.storage.graph
      expect((await graph.searchEntities('agent-g', {}, 0, 10)).map((e) => e.name).sort()).toEqual([
        'Berlin',
        'Dana Kim',
      ])

      // A memory formed from a turn goes from the graph with its conversation.
      const turn = await t.gql(ADD, { c: 'c1', t: 'I work at Acme.' }, key)
      expect(turn.data.addMessage.__typename).toBe('Message')
      await t.app.services.engine.syncMemory('agent-g')
      await t.app.services.jobs.drain()
      // "I" is the speaker dana, who resolves to the one Dana the graph knows.
      expect(await edges(t, 'agent-g')).toEqual(['Dana Kim -lives in-> Berlin', 'Dana Kim -works at-> Acme'])
      expect((await t.gql(DELETE_SESSION, { c: 'c1' }, key)).data.deleteSession.deleted).toBe(true)
      expect(await edges(t, 'agent-g')).toEqual(['Dana Kim -lives in-> Berlin'])
    } finally {
      await t.close()
    }
  })

  it('with a model over HTTP: entities and relations from its answer, invalid items dropped', async () => {
    const server = await startChatServer(() =>
      chatReply(
        JSON.stringify({
          entities: [
            { name: 'Priya', type: 'person' },
            { name: 'Atlas', type: 'PROJECT' },
            { name: 'Mars', type: 'PLANET' },
          ],
          relations: [{ source: 'Priya', relation: 'Tech Lead On', target: 'Atlas', confidence: 0.9 }],
        }),
      ),
    )
    const llm = createOpenAiCompatibleLlm({
      baseUrl: server.baseUrl,
      model: 'scripted',
      fetch: loopbackOnlyFetch,
    })
    const t = await createTestApp({ llm, env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off' } })
    try {
      const key = await createAgentKey(t, 'agent-m')
      await remember(t, key, 'Priya leads the work on Atlas as its technical lead.')
      expect(server.requests.some((r) => JSON.stringify(r.body).includes('knowledge_graph'))).toBe(true)
      expect(await edges(t, 'agent-m')).toEqual(['Priya -tech lead on-> Atlas'])
      const entities = await t.app.services.engine.storage.graph.searchEntities('agent-m', {}, 0, 10)
      expect(entities.map((e) => `${e.name}:${e.type}`).sort()).toEqual(['Atlas:PROJECT', 'Priya:PERSON'])
    } finally {
      await t.close()
      await server.close()
    }
  })
})
