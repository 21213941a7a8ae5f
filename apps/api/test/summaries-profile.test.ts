import fs from 'node:fs'
import { createOpenAiCompatibleLlm } from '@engram/providers'
import { chatReply, loopbackOnlyFetch, type OpenAiServer, startChatServer } from '@engram/providers/testing'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Issue 13 §3 and §4 through the API on SQLite: summaries form on the server's (moved) clock and
// are found by search and memoryContext; the profile is rebuilt as memories arrive; both survive a
// restart and go with their conversation, memory or agent.

const ADD = `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, speaker: "dana", content: $t }) {
  __typename ... on Message { id } ... on Error { message } } }`
const SEARCH = `query($q: String!, $c: String) { search(input: { query: $q, scopes: [SUMMARIES], conversationId: $c, strategy: LEXICAL }) {
  __typename ... on SearchResult { hits { id scope text conversationId } } ... on Error { message } } }`
const CONTEXT = `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename
  ... on MemoryContext { text sections { section included } } ... on Error { message } } }`
const COMPRESS = `mutation($c: String!, $id: ID!) { compressMessages(input: { conversationId: $c, olderThanId: $id, summary: "Dana asked about the Lisbon ferry timetable." }) { __typename } }`
const CREATE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) {
  __typename ... on MemoryWrite { outcome memory { id } } ... on Error { message } } }`
const DELETE_MEMORY = `mutation($id: ID!) { deleteMemory(id: $id) { __typename ... on Error { message } } }`
const DELETE_SESSION = `mutation($c: String!) { deleteSession(conversationId: $c) { __typename ... on Error { message } } }`

const TURNS = [
  'I am moving to Lisbon in March for the new job at Acme.',
  'The Acme office is close to the river and the new job starts in March.',
  'My sister Ana will help with the move to Lisbon in March.',
]

const PREFERENCES = [
  'Dana prefers green tea over coffee in the morning',
  'Dana likes hiking in the Sintra mountains on weekends',
  'Dana avoids meetings before ten in the morning',
]

describe('automatic summaries and the generated profile through the API (SQLite)', {
  timeout: 120_000,
}, () => {
  const apps: TestApp[] = []
  const directories: string[] = []
  let server: OpenAiServer | null = null
  afterEach(async () => {
    for (const t of apps.splice(0)) await t.close()
    for (const directory of directories.splice(0)) fs.rmSync(directory, { recursive: true, force: true })
    await server?.close()
    server = null
  })
  afterAll(async () => {
    await server?.close()
  })

  async function say(t: TestApp, key: string, conversationId: string, text: string): Promise<string> {
    const r = await t.gql(ADD, { c: conversationId, t: text }, key)
    expect(r.data.addMessage.__typename).toBe('Message')
    return r.data.addMessage.id
  }

  it('forms a summary after the debounce on the server clock, survives a restart, is searched and shown, and goes with its conversation', async () => {
    const first = await createTestApp()
    directories.push(first.dir)
    const key = await createAgentKey(first, 'sum-agent')
    for (const turn of TURNS) await say(first, key, 'move', turn)
    await first.app.services.jobs.drain()
    expect(await first.db.summary.count()).toBe(0)
    // A restart before the debounce is over: the queued job is in the database, not the process.
    await first.app.close()
    await first.db.$disconnect()
    const second = await createTestApp({ sameStoreAs: first, clock: first.clock })
    apps.push(second)
    second.clock.advance(60_000)
    await second.app.services.jobs.drain()
    const rows = await second.db.summary.findMany()
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      agentId: 'sum-agent',
      conversationId: 'move',
      trigger: 'debounce',
      messageCount: 3,
    })
    expect(rows[0]?.createdAt.getTime()).toBe(second.clock.now().getTime())

    // Search's SUMMARIES scope finds it, beside a [CONTEXT SUMMARY] message, per conversation.
    const last = await say(second, key, 'move', 'One more turn before compressing.')
    expect((await second.gql(COMPRESS, { c: 'move', id: last }, key)).data.compressMessages.__typename).toBe(
      'CompressMessagesPayload',
    )
    await say(second, key, 'other', 'An unrelated conversation about the office plants.')
    const found = await second.gql(SEARCH, { q: 'Lisbon', c: 'move' }, key)
    expect(found.errors).toBeUndefined()
    const hits = found.data.search.hits as { id: string; text: string; conversationId: string }[]
    expect(hits.map((h) => h.id)).toEqual(expect.arrayContaining([`summary:${rows[0]?.id}`]))
    expect(hits.some((h) => !h.id.startsWith('summary:') && h.text.includes('ferry timetable'))).toBe(true)
    expect(hits.every((h) => h.conversationId === 'move')).toBe(true)
    expect((await second.gql(SEARCH, { q: 'Lisbon', c: 'other' }, key)).data.search.hits).toEqual([])

    const context = await second.gql(CONTEXT, { input: { sections: ['SUMMARIES'] } }, key)
    expect(context.data.memoryContext.sections[0].included).toContain(`summary:${rows[0]?.id}`)
    expect(context.data.memoryContext.text).toContain('Lisbon')

    // Another agent sees none of it.
    const other = await createAgentKey(second, 'sum-other')
    expect((await second.gql(SEARCH, { q: 'Lisbon' }, other)).data.search.hits).toEqual([])

    expect((await second.gql(DELETE_SESSION, { c: 'move' }, key)).data.deleteSession.__typename).not.toBe(
      'NotFoundError',
    )
    expect(await second.db.summary.count({ where: { conversationId: 'move' } })).toBe(0)
    expect(await second.db.summaryCursor.count({ where: { conversationId: 'move' } })).toBe(0)
  })

  it('rebuilds the profile from new memories, with a scripted model on 127.0.0.1, and removes a deleted memory from every version', async () => {
    server = await startChatServer((request) => {
      const body = request.body as { messages: { role: string; content: string }[] }
      const data = JSON.parse(body.messages[1]?.content ?? '{}') as { memories?: { content: string }[] }
      const lines = (data.memories ?? []).map((m) => `- ${m.content}`)
      return chatReply(JSON.stringify({ profile: `## Profile\n${lines.join('\n')}` }))
    })
    const llm = createOpenAiCompatibleLlm({
      baseUrl: server.baseUrl,
      model: 'scripted',
      fetch: loopbackOnlyFetch,
    })
    // The requests counted are the profile's: the graph's own (one per memory) stay out.
    const t = await createTestApp({ llm, env: { ENGRAM_GRAPH: 'off' } })
    apps.push(t)
    const key = await createAgentKey(t, 'profile-agent')
    await t.app.services.profiles.updateSettings('profile-agent', { profileRegenerateThreshold: 3 })
    const ids: string[] = []
    for (const content of PREFERENCES) {
      const r = await t.gql(CREATE, { input: { content, category: 'PREFERENCE', userId: 'dana' } }, key)
      expect(r.data.createMemory.outcome).toBe('STORED')
      ids.push(r.data.createMemory.memory.id)
    }
    await t.app.services.jobs.drain()
    const current = await t.app.services.profiles.current('profile-agent', 'dana')
    expect(current).toMatchObject({ version: 1, writer: 'llm' })
    expect(current?.content).toContain('green tea')
    expect(server.requests).toHaveLength(1)
    const context = await t.gql(CONTEXT, { input: { userId: 'dana', sections: ['PROFILE'] } }, key)
    expect(context.data.memoryContext.sections[0].included[0]).toMatch(/^profile:/)

    expect((await t.gql(DELETE_MEMORY, { id: ids[0] }, key)).data.deleteMemory.__typename).toBe('MemoryItem')
    const left = await t.db.profileVersion.findMany({ where: { agentId: 'profile-agent' } })
    expect(left.every((v) => !v.content.includes('green tea'))).toBe(true)
    await t.app.services.jobs.drain()
    const rebuilt = await t.app.services.profiles.current('profile-agent', 'dana')
    expect(rebuilt).toMatchObject({ trigger: 'memory_deleted', writer: 'llm' })
    expect(rebuilt?.content).not.toContain('green tea')
    expect(rebuilt?.content).toContain('Sintra')
  })
})
