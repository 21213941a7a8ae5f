import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// A client's mistake is answered with a plain, typed message and never logged as a server error;
// only a fault of ours is "Unexpected error.".
describe('client mistakes get typed errors', () => {
  let t: TestApp
  const logged: unknown[][] = []
  let key: string
  beforeAll(async () => {
    t = await createTestApp({
      log: { info() {}, warn() {}, error: (...args) => logged.push(args) },
    })
    key = await createAgentKey(t, 'errs')
    await t.gql(
      `mutation { addMessage(input: {conversationId: "c", role: USER, content: "the deploy failed on node 7"}) { __typename } }`,
      undefined,
      key,
    )
  })
  afterAll(() => t.close())

  async function expectClientError(
    query: string,
    variables: Record<string, unknown> | undefined,
    pattern: RegExp,
    code = 'BAD_USER_INPUT',
  ) {
    const before = logged.length
    const result = await t.gql(query, variables, key)
    expect(result.errors, JSON.stringify(result)).toBeDefined()
    const error = result.errors?.[0]
    expect(error?.message).not.toBe('Unexpected error.')
    expect(error?.message).toMatch(pattern)
    expect(error?.extensions?.code).toBe(code)
    expect(error?.extensions).not.toHaveProperty('originalError')
    expect(result.status).toBeLessThan(500)
    expect(logged.length, 'a client mistake must not be logged as an error').toBe(before)
    return result
  }

  it('a variable of the wrong type', async () => {
    await expectClientError(
      'query($f: Int) { memories(first: $f) { __typename } }',
      { f: 1.5 },
      /Int cannot represent non-integer value: 1\.5/,
    )
  })

  it('a lowercase enum, a bad DateTime, non-object JSON and an unknown input field in variables', async () => {
    const add = `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename } }`
    await expectClientError(add, { input: { conversationId: 'c', role: 'user', content: 'x' } }, /Role/)
    await expectClientError(
      `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename } }`,
      { input: { conversationId: 'c', messages: [{ role: 'USER', content: 'x', timestamp: 'yesterday' }] } },
      /DateTime must be an ISO 8601 date-time/,
    )
    await expectClientError(
      add,
      { input: { conversationId: 'c', role: 'USER', content: 'x', metadata: [1, 2] } },
      /JSON must be an object/,
    )
    await expectClientError(
      add,
      { input: { conversationId: 'c', role: 'USER', content: 'x', colour: 'red' } },
      /colour/,
    )
  })

  it('a garbage Relay cursor on every offset-paged list', async () => {
    for (const list of ['memories', 'knowledge', 'sessions']) {
      const result = await t.gql(
        `query($after: String) { ${list}(after: $after) { __typename ... on Error { message code } } }`,
        { after: '%%%not-a-cursor' },
        key,
      )
      expect(result.errors, list).toBeUndefined()
      expect(result.data[list], list).toMatchObject({
        __typename: 'ValidationError',
        code: 'VALIDATION',
      })
      expect(result.data[list].message, list).toMatch(/after/)
    }
  })

  it('GET with variables that are not JSON, and a POST body that is not JSON', async () => {
    const get = await t.app.yoga.fetch(
      `http://yoga/graphql?query=${encodeURIComponent('query($f:Int){ memories(first:$f){ __typename } }')}&variables=%7Bbad`,
      { headers: { authorization: `Bearer ${key}` } },
    )
    expect(get.status).toBe(400)
    const getBody = (await get.json()) as {
      errors: { message: string; extensions: Record<string, unknown> }[]
    }
    expect(getBody.errors[0]?.message).toMatch(/not valid JSON/)
    expect(getBody.errors[0]?.extensions.code).toBe('BAD_REQUEST')

    const post = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: '{"query": "{ __typename }"',
    })
    expect(post.status).toBe(400)
    const postBody = (await post.json()) as {
      errors: { message: string; extensions: Record<string, unknown> }[]
    }
    expect(postBody.errors[0]?.extensions.code).toBe('BAD_REQUEST')
    expect(postBody.errors[0]?.extensions).not.toHaveProperty('originalError')
    expect(logged).toEqual([])
  })

  it('input nested past every limit is refused before it can overflow a parser or walker', async () => {
    // 20,000 nested list literals overflowed graphql-js's recursive parser.
    const literal = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`
    await expectClientError(
      `{ searchByVector(vector: ${literal}) { __typename } }`,
      undefined,
      /nests brackets more than 64 levels/,
      'QUERY_TOO_NESTED',
    )
    // Metadata 3,000 deep is 6 KB, under the byte limit: it is the JSON scalar's depth that refuses it.
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 3_000; i++) deep = { d: deep }
    const add = `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename ... on ValidationError { issues { field limit } } } }`
    await expectClientError(
      add,
      { input: { conversationId: 'c', role: 'USER', content: 'x', metadata: deep } },
      /nest at most 64 levels/,
    )
    // Within the scalar's bound but past the configured metadata depth (32): a ValidationError.
    let forty: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 40; i++) forty = { d: forty }
    const result = await t.gql(
      add,
      { input: { conversationId: 'c', role: 'USER', content: 'x', metadata: forty } },
      key,
    )
    expect(result.data.addMessage).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'message.metadata', limit: '32' }],
    })
    const memory = await t.gql(
      `mutation($m: JSON) { createMemory(input: {content: "x", category: FACT, metadata: $m}) { __typename ... on ValidationError { issues { field limit } } } }`,
      { m: forty },
      key,
    )
    expect(memory.data.createMemory).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'metadata', limit: '32' }],
    })
  })

  it('aliased searches in one request all answer (no statement shared mid-iteration)', async () => {
    const aliases = Array.from(
      { length: 6 },
      (_, i) =>
        `s${i}: search(input: {query: "deploy failed ${i}", scopes: [MESSAGES, MEMORIES, KNOWLEDGE, SUMMARIES]}) { __typename ... on SearchResult { hits { id } } ... on Error { message } }`,
    ).join(' ')
    for (let round = 0; round < 3; round++) {
      const result = await t.gql(`{ ${aliases} }`, undefined, key)
      expect(result.errors, JSON.stringify(result.errors)).toBeUndefined()
      for (let i = 0; i < 6; i++) expect(result.data[`s${i}`].__typename).toBe('SearchResult')
    }
    expect(logged).toEqual([])
  })

  it('a fault of ours is still masked and logged', async () => {
    const before = logged.length
    await t.db.$executeRawUnsafe('ALTER TABLE "Agent" RENAME TO "AgentGone"')
    try {
      const result = await t.gql('{ agents { id } }', undefined, ADMIN_KEY)
      expect(result.errors?.[0]?.message).toBe('Unexpected error.')
      expect(result.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR')
      expect(logged.length).toBe(before + 1)
    } finally {
      await t.db.$executeRawUnsafe('ALTER TABLE "AgentGone" RENAME TO "Agent"')
    }
  })
})

describe('introspection', () => {
  const query = '{ __schema { queryType { name } } }'
  it('is on in development and test, off in production, and ENGRAM_INTROSPECTION decides when set', async () => {
    for (const [env, allowed] of [
      [{ NODE_ENV: 'test' }, true],
      [{ NODE_ENV: 'production' }, false],
      [{ NODE_ENV: 'production', ENGRAM_INTROSPECTION: true }, true],
      [{ NODE_ENV: 'development', ENGRAM_INTROSPECTION: false }, false],
    ] as const) {
      const t = await createTestApp({ env })
      try {
        const result = await t.gql(query)
        if (allowed) expect(result.data?.__schema?.queryType?.name, JSON.stringify(env)).toBe('Query')
        else {
          expect(result.errors?.[0]?.message, JSON.stringify(env)).toMatch(/introspection/i)
          expect(result.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED')
        }
      } finally {
        await t.close()
      }
    }
  })
})
