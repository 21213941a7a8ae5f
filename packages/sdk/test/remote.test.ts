import { CONTRACT_LIMITS, catalog } from '@engram/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engram } from '../src/index.ts'
import { clientContract } from './client-contract.ts'
import { ADMIN_KEY, startServer } from './server.ts'

clientContract('remote (GraphQL over HTTP and graphql-ws, real server)', async () => {
  const server = await startServer()
  return {
    async clients() {
      const [a, b] = await Promise.all([server.agentKey('contract-a'), server.agentKey('contract-b')])
      return {
        agentA: Engram.connect({ url: server.url, apiKey: a }),
        agentB: Engram.connect({ url: server.url, apiKey: b }),
        admin: Engram.connect({ url: server.url, apiKey: ADMIN_KEY }),
        agentAId: 'contract-a',
      }
    },
    close: () => server.close(),
  }
})

describe('remote client', () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let key: string
  beforeAll(async () => {
    server = await startServer()
    key = await server.agentKey('remote-x')
  })
  afterAll(() => server.close())

  /** Sends a document as is, without the client's own checks: what the server itself enforces. */
  async function raw(query: string, variables: Record<string, unknown>) {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    })
    return (await response.json()) as { data: { r: { __typename: string; issues?: { field: string }[] } } }
  }
  const ISSUES = '__typename ... on ValidationError { issues { field limit } }'

  it('the server refuses what the catalog refuses, on the same field (the limits held in the API services)', async () => {
    const memory = (input: Record<string, unknown>) =>
      raw(`mutation($i: CreateMemoryInput!) { r: createMemory(input: $i) { ${ISSUES} } }`, {
        i: { category: 'FACT', content: 'a fact', ...input },
      })
    const cases: [string, Record<string, unknown>, string][] = [
      ['tags', { tags: Array.from({ length: CONTRACT_LIMITS.maxTags + 1 }, (_, i) => `t${i}`) }, 'tags'],
      ['tag chars', { tags: ['x'.repeat(CONTRACT_LIMITS.maxTagChars + 1)] }, 'tags.0'],
      ['memory chars', { content: 'x'.repeat(CONTRACT_LIMITS.maxMemoryChars + 1) }, 'content'],
      ['user id', { userId: 'u'.repeat(CONTRACT_LIMITS.maxUserIdChars + 1) }, 'userId'],
    ]
    const client = Engram.connect({ url: server.url, apiKey: key })
    for (const [what, input, field] of cases) {
      const server = await memory(input)
      expect(server.data.r.__typename, what).toBe('ValidationError')
      expect(
        server.data.r.issues?.map((i) => i.field),
        what,
      ).toContain(field)
      const local = await client.createMemory({ category: 'FACT', content: 'a fact', ...input } as never)
      expect(!local.ok && local.error.issues?.map((i) => i.field), what).toContain(field)
      // One under the limit passes both.
    }
    const search = (input: Record<string, unknown>) =>
      raw(`query($i: SearchInput!) { r: search(input: $i) { ${ISSUES} } }`, { i: { query: 'q', ...input } })
    for (const [input, field] of [
      [{ query: 'q'.repeat(CONTRACT_LIMITS.maxQueryChars + 1) }, 'query'],
      [{ limit: CONTRACT_LIMITS.maxSearchLimit + 1 }, 'limit'],
      [{ contextTurns: CONTRACT_LIMITS.maxContextTurns + 1 }, 'contextTurns'],
      [{ windowDays: CONTRACT_LIMITS.maxWindowDays + 1 }, 'windowDays'],
    ] as const) {
      const answer = await search(input)
      expect(answer.data.r.issues?.map((i) => i.field)).toContain(field)
      const local = await client.search({ query: 'q', ...input })
      expect(!local.ok && local.error.issues?.map((i) => i.field)).toContain(field)
    }
    const atLimit = await client.search({
      query: 'q',
      limit: CONTRACT_LIMITS.maxSearchLimit,
      contextTurns: 5,
    })
    expect(atLimit.ok).toBe(true)
    await client.close()
  })

  it('serverMetrics (issue 17): the operator reads the sampled series; an agent key is FORBIDDEN', async () => {
    const admin = Engram.connect({ url: server.url, apiKey: ADMIN_KEY })
    expect((await admin.agents()).ok).toBe(true)
    await server.t.app.sampler.sample()
    const report = await admin.serverMetrics({ windowSeconds: 600 })
    expect(report.ok && catalog.serverMetrics.output.safeParse(report.data).success).toBe(true)
    expect(report.ok && report.data.current?.counts.agents).toBe(1)
    const refused = await Engram.connect({ url: server.url, apiKey: key }).serverMetrics({})
    expect(!refused.ok && refused.error.code).toBe('FORBIDDEN')
    // The catalog's limit is checked before anything is sent.
    const invalid = await admin.serverMetrics({ windowSeconds: 5 })
    expect(!invalid.ok && invalid.error.issues?.[0]).toMatchObject({ field: 'windowSeconds', limit: 10 })
  })

  it('a wrong key is UNAUTHENTICATED, an unreachable server UNAVAILABLE: as results, never thrown', async () => {
    const wrong = Engram.connect({ url: server.url, apiKey: 'engram_nope' })
    const denied = await wrong.agents()
    expect(!denied.ok && denied.error.code).toBe('UNAUTHENTICATED')
    const nowhere = Engram.connect({ url: 'http://127.0.0.1:9', apiKey: key, timeoutMs: 2_000 })
    const down = await nowhere.agents()
    expect(!down.ok && down.error.code).toBe('UNAVAILABLE')
  })

  it('takes the /graphql endpoint or the server root alike, and runs over an injected fetch', async () => {
    const withPath = Engram.connect({ url: `${server.url}/graphql`, apiKey: key })
    expect((await withPath.agents()).ok).toBe(true)
    const inProcess = Engram.connect({
      url: 'http://yoga',
      apiKey: key,
      fetch: async (input, init) => server.t.app.yoga.fetch(String(input), init as RequestInit & {}),
    })
    const agents = await inProcess.agents()
    expect(agents.ok && agents.data.map((a) => a.id)).toEqual(['remote-x'])
  })

  it('a subscription refused by the server ends with a typed failure', async () => {
    const client = Engram.connect({ url: server.url, apiKey: key })
    const progress = client.watchEmbeddingProgress()
    const step = await progress.next()
    expect(!step.done && !step.value.ok && step.value.error.code).toBe('FORBIDDEN')
    expect((await progress.next()).done).toBe(true)
    await client.close()
  })
})
