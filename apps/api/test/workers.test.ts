import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { freePort } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgresDatabase, TEST_BACKEND } from './helpers.ts'

// Issue 18: one server of ENGRAM_WORKERS=2 processes (node:cluster) on one database, without
// Redis. The caches and deletions of issue 6 must hold across them: what one worker writes,
// deletes or revokes, the other's very next request sees. Each check reads through worker B first
// (so B has cached it), then changes it through worker A, then reads through B again.
const API_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SERVER_ENTRY = path.join(API_ROOT, 'src', 'server.ts')
const TSX_LOADER = pathToFileURL(createRequire(path.join(API_ROOT, 'package.json')).resolve('tsx')).href
const ADMIN_KEY = `admin-${randomUUID()}`

interface Answer {
  data?: Record<string, any>
  errors?: { message: string; extensions?: Record<string, unknown> }[]
}

/** A request on a socket of its own: node:cluster gives each connection to one worker for good. */
function request(agent: http.Agent, port: number, method: string, route: string, body?: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const outgoing = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: route,
        agent,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }))
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

/** A kept-alive connection to one worker of the cluster. */
class WorkerConnection {
  /** Set once the connection's worker is known (answering()). */
  worker = 0

  constructor(
    private readonly agent: http.Agent,
    private readonly port: number,
  ) {}

  async gql(query: string, variables: Record<string, unknown>, key: string): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const outgoing = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          method: 'POST',
          path: '/graphql',
          agent: this.agent,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        },
        (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk) => {
            text += chunk
          })
          response.on('end', () => resolve(JSON.parse(text) as Answer))
        },
      )
      outgoing.on('error', reject)
      outgoing.end(JSON.stringify({ query, variables }))
    })
  }

  /** Which worker answers on this connection now (the same one for the connection's life). */
  async answering(): Promise<number> {
    const health = await request(this.agent, this.port, 'GET', '/health')
    return JSON.parse(health.text).worker as number
  }

  close(): void {
    this.agent.destroy()
  }
}

function dataOf(answer: Answer, field: string): any {
  if (answer.errors) throw new Error(`${field}: ${JSON.stringify(answer.errors)}`)
  return answer.data?.[field]
}

describe('two server processes of one replica (ENGRAM_WORKERS=2) on one database, no Redis', () => {
  let child: ChildProcess
  const output: string[] = []
  let directory: string
  let port: number
  let a: WorkerConnection
  let b: WorkerConnection
  const spare: WorkerConnection[] = []
  const keys: Record<string, string> = {}

  beforeAll(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-workers-'))
    port = await freePort()
    child = spawn(process.execPath, ['--import', TSX_LOADER, SERVER_ENTRY], {
      cwd: API_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        NODE_ENV: 'test',
        DATABASE_URL:
          TEST_BACKEND === 'postgres'
            ? await freshPostgresDatabase()
            : `file:${path.join(directory, 'engram.db')}`,
        ENGRAM_ADMIN_KEY: ADMIN_KEY,
        API_HOST: '127.0.0.1',
        API_PORT: String(port),
        ENGRAM_WORKERS: '2',
        ENGRAM_EXTRACTION_WORKERS: '0',
        ENGRAM_TOKENIZER: 'heuristic',
        ENGRAM_EXTRACTION: 'off',
        ENGRAM_SUMMARIES: 'off',
        ENGRAM_PROFILE: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()))
    // Both workers listen once each has printed its banner.
    const deadline = Date.now() + 180_000
    while ((output.join('').match(/Engram API \(worker \d of 2\)/g) ?? []).length < 2) {
      if (child.exitCode !== null) throw new Error(`server exited:\n${output.join('')}`)
      if (Date.now() > deadline) throw new Error(`workers not listening:\n${output.join('')}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    // New connections go to the workers in turn: open some until one of each is held.
    const held = new Map<number, WorkerConnection>()
    for (let i = 0; i < 40 && held.size < 2; i++) {
      const connection = new WorkerConnection(new http.Agent({ keepAlive: true, maxSockets: 1 }), port)
      connection.worker = await connection.answering()
      if (held.has(connection.worker)) spare.push(connection)
      else held.set(connection.worker, connection)
    }
    a = held.get(1) as WorkerConnection
    b = held.get(2) as WorkerConnection
    expect(a?.worker).toBe(1)
    expect(b?.worker).toBe(2)
    for (const agentId of ['agent-w', 'agent-r']) {
      dataOf(
        await a.gql(`mutation($id: ID!) { createAgent(id: $id) { __typename } }`, { id: agentId }, ADMIN_KEY),
        'createAgent',
      )
      keys[agentId] = dataOf(
        await a.gql(
          `mutation($agentId: ID!) { createApiKey(agentId: $agentId) { ... on CreatedApiKey { key } } }`,
          { agentId },
          ADMIN_KEY,
        ),
        'createApiKey',
      ).key
    }
  }, 240_000)

  afterAll(async () => {
    for (const connection of [a, b, ...spare]) connection?.close()
    if (child && child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
    if (directory) fs.rmSync(directory, { recursive: true, force: true })
  })

  const SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES, MEMORIES], strategy: LEXICAL, limit: 10 }) { ... on SearchResult { hits { text } } } }`
  const CONTEXT = `query($q: String!) { memoryContext(input: { query: $q, budgetTokens: 4000 }) { ... on MemoryContext { cached text } } }`
  const SESSION = `query($c: String!) { session(conversationId: $c) { __typename ... on Session { messages(last: 100) { edges { node { content } } } } } }`
  const texts = async (on: WorkerConnection, q: string) =>
    (dataOf(await on.gql(SEARCH, { q }, keys['agent-w'] as string), 'search').hits as { text: string }[]).map(
      (hit) => hit.text,
    )
  const context = async (on: WorkerConnection, q: string) =>
    dataOf(await on.gql(CONTEXT, { q }, keys['agent-w'] as string), 'memoryContext') as {
      cached: boolean
      text: string
    }
  const messages = async (on: WorkerConnection, conversationId: string) => {
    const session = dataOf(await on.gql(SESSION, { c: conversationId }, keys['agent-w'] as string), 'session')
    return session?.__typename === 'Session'
      ? (session.messages.edges as { node: { content: string } }[]).map((edge) => edge.node.content)
      : null
  }
  const addMessage = async (on: WorkerConnection, conversationId: string, content: string) =>
    dataOf(
      await on.gql(
        `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, content: $t }) { __typename } }`,
        { c: conversationId, t: content },
        keys['agent-w'] as string,
      ),
      'addMessage',
    )
  const createMemory = async (on: WorkerConnection, content: string): Promise<string> =>
    dataOf(
      await on.gql(
        `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { ... on MemoryWrite { memory { id } } } }`,
        { i: { content, category: 'FACT' } },
        keys['agent-w'] as string,
      ),
      'createMemory',
    ).memory.id

  it('serves a message written through one worker on the other at once (conversation and search)', async () => {
    await addMessage(a, 'trip', 'we booked the ferry to Hydra')
    expect(await messages(b, 'trip')).toEqual(['we booked the ferry to Hydra'])
    expect(await texts(b, 'ferry Hydra')).toEqual(['we booked the ferry to Hydra'])
    await addMessage(a, 'trip', 'the ferry to Hydra leaves at nine')
    // No wait: B's next request sees A's write (its cached session counter and search state went).
    expect(await messages(b, 'trip')).toEqual([
      'we booked the ferry to Hydra',
      'the ferry to Hydra leaves at nine',
    ])
    expect((await texts(b, 'ferry Hydra')).sort()).toEqual(
      ['the ferry to Hydra leaves at nine', 'we booked the ferry to Hydra'].sort(),
    )
  })

  it("drops the other worker's cached memory context when a memory is added or deleted", async () => {
    const first = await createMemory(a, 'Dana prefers window seats on trains')
    expect((await context(b, 'window seats')).text).toContain('window seats')
    // The same question again on B within the cache's 10 s is answered from B's cache...
    expect((await context(b, 'window seats')).cached).toBe(true)
    // ...until A changes the agent's memories: then B builds it again with the change.
    const second = await createMemory(a, 'Dana also likes window seats on planes')
    const afterAdd = await context(b, 'window seats')
    expect(afterAdd.cached).toBe(false)
    expect(afterAdd.text).toContain('planes')
    dataOf(
      await a.gql(
        `mutation($id: ID!) { deleteMemory(id: $id) { __typename } }`,
        { id: first },
        keys['agent-w'] as string,
      ),
      'deleteMemory',
    )
    const afterDelete = await context(b, 'window seats')
    expect(afterDelete.text).not.toContain('trains')
    expect(afterDelete.text).toContain('planes')
    expect(await texts(b, 'window seats trains')).not.toContain('Dana prefers window seats on trains')
    expect(second).toBeTruthy()
  })

  it('removes a conversation deleted through one worker from the other worker’s reads and search', async () => {
    await addMessage(a, 'secret', 'the vault code is tangerine')
    expect(await texts(b, 'vault tangerine')).toEqual(['the vault code is tangerine'])
    expect(await messages(b, 'secret')).toEqual(['the vault code is tangerine'])
    dataOf(
      await a.gql(
        `mutation($c: String!) { deleteSession(conversationId: $c) { __typename } }`,
        { c: 'secret' },
        keys['agent-w'] as string,
      ),
      'deleteSession',
    )
    expect(await texts(b, 'vault tangerine')).toEqual([])
    expect(await messages(b, 'secret')).toBeNull()
  })

  it('refuses on the other worker, at its next request, a key revoked or an agent deleted through one', async () => {
    const ok = await b.gql(`{ memories(first: 1) { __typename } }`, {}, keys['agent-r'] as string)
    expect(ok.errors).toBeUndefined()
    const listed = dataOf(
      await a.gql(
        `{ apiKeys(agentId: "agent-r") { ... on QueryApiKeysSuccess { data { id } } } }`,
        {},
        ADMIN_KEY,
      ),
      'apiKeys',
    ).data as { id: string }[]
    for (const { id } of listed)
      dataOf(
        await a.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`, { id }, ADMIN_KEY),
        'revokeApiKey',
      )
    const refused = await b.gql(`{ memories(first: 1) { __typename } }`, {}, keys['agent-r'] as string)
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED')

    // The writing agent goes whole through A: B refuses its key and finds none of its rows.
    expect((await texts(b, 'ferry Hydra')).length).toBeGreaterThan(0)
    dataOf(
      await a.gql(`mutation { deleteAgent(id: "agent-w") { __typename } }`, {}, ADMIN_KEY),
      'deleteAgent',
    )
    const gone = await b.gql(SEARCH, { q: 'ferry Hydra' }, keys['agent-w'] as string)
    expect(gone.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED')
    const asAdmin = await b.gql(
      `query($q: String!) { search(input: { agentId: "agent-w", query: $q, scopes: [MESSAGES], strategy: LEXICAL }) { __typename ... on SearchResult { hits { text } } } }`,
      { q: 'ferry Hydra' },
      ADMIN_KEY,
    )
    expect(asAdmin.data?.search?.hits ?? []).toEqual([])
  })
})
