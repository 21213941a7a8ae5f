import { createDatabase, type PostgresServer, startPostgres } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from '../helpers.ts'

// Postgres down (issue 14 §2): typed errors, no crash, and recovery when the server is back.
// The test owns its server (the run's shared one cannot be stopped under other files).
describe('Postgres down', () => {
  let server: PostgresServer
  let t: TestApp

  beforeAll(async () => {
    server = await startPostgres()
    t = await createTestApp({ postgresUrl: await createDatabase(server.url) })
    await createAgentKey(t, 'agent-a')
  })
  afterAll(async () => {
    await t?.close()
    await server?.stop()
  })

  const store = (content: string) =>
    t.gql(
      `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename ... on Message { id } } }`,
      { input: { agentId: 'agent-a', conversationId: 'c1', role: 'USER', content } },
    )
  const history = () =>
    t.gql(
      `query { session(agentId: "agent-a", conversationId: "c1") { ... on Session { messages(first: 10) { edges { node { content } } } } } }`,
    )
  const health = () => t.app.yoga.fetch('http://yoga/health')

  it('answers UNAVAILABLE (503) while the server is down, never crashes, and serves again when it is back', async () => {
    expect((await store('before the outage')).data.addMessage.__typename).toBe('Message')
    await server.pause()

    for (const result of [await store('during the outage'), await history()]) {
      expect(result.status).toBe(503)
      expect(result.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE')
      expect(result.errors?.[0]?.message).toMatch(/database is unavailable/)
    }
    expect((await health()).status).toBe(503)

    await server.resume()
    expect((await health()).status).toBe(200)
    expect((await store('after the outage')).data.addMessage.__typename).toBe('Message')
    const contents = (await history()).data.session.messages.edges.map((e: any) => e.node.content)
    // What was acknowledged before is there; what failed was never half-written.
    expect(contents).toEqual(['before the outage', 'after the outage'])
  })

  it('refuses a key it cannot check with the same typed error, not as unauthenticated', async () => {
    await server.pause()
    try {
      const result = await t.gql('query { agents { id } }', undefined, ADMIN_KEY)
      expect(result.errors?.[0]?.extensions?.code).toBe('UNAVAILABLE')
    } finally {
      await server.resume()
    }
  })
})
