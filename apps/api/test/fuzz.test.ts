import { seededRandom } from '@engram/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

/**
 * A seeded fuzzer over the whole request surface: valid operations whose variables, documents and
 * transport are broken in the ways clients break them. Whatever it sends, the server answers
 * with a client error, never a 5xx or a masked INTERNAL_SERVER_ERROR, and logs nothing as an error.
 * The seed and request count are fixed, so a failure names a request that reproduces it.
 */
const SEED = 20_261_124
const REQUESTS = 3_000

interface Operation {
  query: string
  variables: Record<string, unknown>
}

const OPERATIONS: Operation[] = [
  {
    query: `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename ... on Error { message code } } }`,
    variables: {
      input: {
        conversationId: 'fz-1',
        role: 'USER',
        content: 'the deploy failed on node 7',
        metadata: { a: 1 },
      },
    },
  },
  {
    query: `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename ... on Error { message code } } }`,
    variables: {
      input: {
        conversationId: 'fz-2',
        messages: [{ role: 'ASSISTANT', content: 'noted', timestamp: '2026-01-15T10:00:00.000Z' }],
      },
    },
  },
  {
    query: `query($f: Int, $after: String) { memories(first: $f, after: $after) { __typename ... on Error { message code } } }`,
    variables: { f: 5, after: null },
  },
  {
    query: `query($f: Int, $after: String) { sessions(first: $f, after: $after) { __typename } }`,
    variables: { f: 5, after: null },
  },
  {
    query: `query($f: Int, $a: String) { knowledge(first: $f, after: $a) { __typename ... on Error { message code } } }`,
    variables: { f: 5, a: null },
  },
  {
    query: `query($input: SearchInput!) { search(input: $input) { __typename ... on SearchResult { hits { score } } ... on Error { message code } } }`,
    variables: {
      input: { query: 'deploy failed', scopes: ['MESSAGES', 'MEMORIES'], limit: 5, mmrLambda: 0.7 },
    },
  },
  {
    query: `query($c: String!, $b: TokenBudgetInput) { contextWindow(conversationId: $c, budget: $b) { __typename ... on Error { message code } } }`,
    variables: { c: 'fz-1', b: { maxContextTokens: 9_800, fullMessageWindow: 4 } },
  },
  {
    query: `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename ... on Error { message code } } }`,
    variables: { input: { query: 'deploy', budgetTokens: 500 } },
  },
  {
    query: `mutation($input: CreateMemoryInput!) { createMemory(input: $input) { __typename ... on Error { message code } } }`,
    variables: {
      input: { content: 'Marco is the on-call SRE', category: 'FACT', importance: 0.5, tags: ['ops'] },
    },
  },
  {
    query: `mutation($input: RememberThisInput!) { rememberThis(input: $input) { __typename ... on Error { message code } } }`,
    variables: { input: { text: 'Remember that the subnet is 10.20.14.0/24', pinned: false } },
  },
  {
    query: `mutation($input: StoreKnowledgeInput!) { storeKnowledge(input: $input) { __typename ... on Error { message code } } }`,
    variables: { input: { key: 'region', value: 'eu-west-1', category: 'DOMAIN', confidence: 0.5 } },
  },
  {
    query: `query($v: [Float!]!, $l: Int) { searchByVector(vector: $v, limit: $l) { __typename ... on Error { message code } } }`,
    variables: { v: [0.1, 0.2, 0.3], l: 3 },
  },
  {
    query: `query($id: ID!) { memory(id: $id) { __typename ... on Error { message code } } }`,
    variables: { id: '1' },
  },
  // The knowledge graph (issue 15): an agent's reads; the operator's writes are not the agent's.
  {
    query: `query($name: String, $depth: Int, $types: [EntityType!], $asOf: DateTime, $limit: Int) { graphNeighbourhood(name: $name, depth: $depth, types: $types, asOf: $asOf, limit: $limit) { __typename ... on GraphNeighbourhood { truncated } ... on Error { message code } } }`,
    variables: {
      name: 'Marco',
      depth: 2,
      types: ['PERSON', 'COMPANY'],
      asOf: '2026-01-15T10:00:00.000Z',
      limit: 20,
    },
  },
  {
    query: `query($name: String, $relation: String, $history: Boolean, $knownAt: DateTime) { graphRelationships(name: $name, relation: $relation, includeHistory: $history, knownAt: $knownAt) { __typename ... on Error { message code } } }`,
    variables: { name: 'Marco', relation: 'works at', history: false, knownAt: '2026-01-15T10:00:00.000Z' },
  },
  {
    query: `query($from: String, $to: String, $maxDepth: Int, $limit: Int) { graphPaths(fromName: $from, toName: $to, maxDepth: $maxDepth, limit: $limit) { __typename ... on Error { message code } } }`,
    variables: { from: 'Marco', to: 'Acme', maxDepth: 3, limit: 5 },
  },
]

/** Values of every wrong shape a client sends. */
function oddValue(random: () => number): unknown {
  const pick = Math.floor(random() * 22)
  switch (pick) {
    case 0:
      return 1.5
    case 1:
      return -1
    case 2:
      return 2 ** 53
    case 3:
      return 'user'
    case 4:
      return ''
    case 5:
      return 'x'.repeat(Math.floor(random() * 200_000))
    case 6:
      return null
    case 7:
      return [1, 'two', null]
    case 8:
      return { nested: { deeper: true } }
    case 9:
      return nest(Math.floor(random() * 4_000))
    case 10:
      return 'yesterday'
    case 11:
      return '%%%garbage-cursor'
    case 12:
      return Buffer.from('OffsetConnection:-5').toString('base64')
    case 13:
      return true
    case 14:
      return Number.NaN
    case 15:
      return '\u0000\u0001\ud800'
    case 16:
      return '(a+)+$'
    case 17:
      return Array.from({ length: Math.floor(random() * 5_000) }, () => random())
    case 18:
      return 'SELECT * FROM "Agent"; --'
    case 19:
      return 1e308
    case 20:
      return '2026-02-30T25:61:00Z'
    default:
      return { colour: 'red' }
  }
}

function nest(depth: number): unknown {
  let value: unknown = { leaf: 1 }
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { d: value }
  return value
}

/** Replaces one value somewhere in the variables (or adds an unknown field). */
function mutateVariables(variables: Record<string, unknown>, random: () => number): Record<string, unknown> {
  const copy = structuredClone(variables)
  const holders: Record<string, unknown>[] = [copy]
  const stack: Record<string, unknown>[] = [copy]
  while (stack.length) {
    const node = stack.pop() as Record<string, unknown>
    for (const value of Object.values(node)) {
      if (value && typeof value === 'object' && !Array.isArray(value)) {
        holders.push(value as Record<string, unknown>)
        stack.push(value as Record<string, unknown>)
      }
    }
  }
  const holder = holders[Math.floor(random() * holders.length)] as Record<string, unknown>
  const keys = Object.keys(holder)
  const roll = random()
  const victim = keys[Math.floor(random() * keys.length)] as string
  if (keys.length === 0 || roll < 0.1) holder[`unknown${Math.floor(random() * 3)}`] = oddValue(random)
  else if (roll < 0.2) delete holder[victim]
  else holder[victim] = oddValue(random)
  return copy
}

/** Breaks the document itself: cut, spliced, deepened, aliased, misspelled. */
function mutateDocument(query: string, random: () => number): string {
  const at = Math.floor(random() * query.length)
  switch (Math.floor(random() * 8)) {
    case 0:
      return query.slice(0, at)
    case 1:
      return `${query.slice(0, at)}${'{['[Math.floor(random() * 2)]}${query.slice(at)}`
    case 2:
      return `${query.slice(0, at)}${'['.repeat(Math.floor(random() * 30_000))}${query.slice(at)}`
    case 3:
      return query.replace('__typename', '__typename nope')
    case 4: {
      const body = query.slice(query.indexOf('{') + 1, query.lastIndexOf('}'))
      return `${query.slice(0, query.indexOf('{'))}{ ${Array.from({ length: 1 + Math.floor(random() * 30) }, (_, i) => `a${i}: ${body.trim()}`).join(' ')} }`
    }
    case 5:
      return query.replace(/\$(\w+)/, '$$undeclared')
    case 6:
      return `${query} ${query}`
    default:
      return query.replace(/\(\$[^)]*\)/, '')
  }
}

describe('fuzzed requests', () => {
  let t: TestApp
  let key: string
  const logged: unknown[][] = []
  beforeAll(async () => {
    t = await createTestApp({ log: { info() {}, warn() {}, error: (...args) => logged.push(args) } })
    key = await createAgentKey(t, 'fuzz')
    // A small graph for the graph reads to walk (written by the operator).
    const entity = async (type: string, name: string) =>
      (
        await t.gql(
          `mutation($input: CreateGraphEntityInput!) { createGraphEntity(input: $input) { ... on GraphEntity { id } } }`,
          { input: { agentId: 'fuzz', type, name } },
        )
      ).data.createGraphEntity.id as string
    const [marco, acme] = [await entity('PERSON', 'Marco'), await entity('COMPANY', 'Acme')]
    await t.gql(
      `mutation($input: CreateGraphRelationshipInput!) { createGraphRelationship(input: $input) { __typename } }`,
      { input: { agentId: 'fuzz', sourceId: marco, relation: 'works at', targetId: acme } },
    )
  })
  afterAll(() => t.close())

  it(`${REQUESTS} seeded requests: no 5xx, no INTERNAL_SERVER_ERROR, nothing logged as a server error`, async () => {
    const random = seededRandom(SEED)
    const failures: string[] = []
    const codes = new Map<string, number>()
    for (let n = 0; n < REQUESTS && failures.length < 5; n++) {
      const operation = OPERATIONS[Math.floor(random() * OPERATIONS.length)] as Operation
      const kind = random()
      let query = operation.query
      let variables: unknown = operation.variables
      let body: string | undefined
      let method = 'POST'
      let url = 'http://yoga/graphql'
      let authorization: string | undefined = `Bearer ${key}`
      if (kind < 0.55) variables = mutateVariables(operation.variables, random)
      else if (kind < 0.8) query = mutateDocument(query, random)
      else if (kind < 0.85) body = JSON.stringify({ query, variables }).slice(0, Math.floor(random() * 60))
      else if (kind < 0.9) {
        method = 'GET'
        url += `?query=${encodeURIComponent(query)}&variables=${random() < 0.5 ? '%7Bbad' : encodeURIComponent(JSON.stringify(variables))}`
      } else if (kind < 0.93) authorization = random() < 0.5 ? undefined : 'Bearer not-a-key'
      else if (kind < 0.96) variables = [variables]
      else body = JSON.stringify({ query: 12, variables: 'x', operationName: ['y'] })

      const response = await t.app.yoga.fetch(url, {
        method,
        headers: {
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...(authorization ? { authorization } : {}),
        },
        ...(method === 'POST' ? { body: body ?? JSON.stringify({ query, variables }) } : {}),
      })
      const text = await response.text()
      let errors: { message: string; extensions?: { code?: string } }[] = []
      try {
        errors = (JSON.parse(text) as { errors?: typeof errors }).errors ?? []
      } catch {
        failures.push(`#${n}: not JSON (${response.status}): ${text.slice(0, 200)}`)
        continue
      }
      for (const error of errors) {
        const code = error.extensions?.code ?? 'NONE'
        codes.set(code, (codes.get(code) ?? 0) + 1)
      }
      if (response.status >= 500 || errors.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR')) {
        failures.push(
          `#${n} ${method} ${response.status}: ${query.slice(0, 120)} ${JSON.stringify(variables).slice(0, 200)} → ${text.slice(0, 300)}`,
        )
      }
    }
    expect(failures).toEqual([])
    expect(logged.map((args) => String(args[1] ?? args[0]).slice(0, 300))).toEqual([])
    // The fuzzer reached the client-error paths it is meant to exercise.
    for (const code of [
      'BAD_USER_INPUT',
      'GRAPHQL_PARSE_FAILED',
      'GRAPHQL_VALIDATION_FAILED',
      'QUERY_TOO_NESTED',
      'BAD_REQUEST',
      'UNAUTHENTICATED',
    ])
      expect(codes.get(code) ?? 0, code).toBeGreaterThan(0)
  }, 120_000)
})
