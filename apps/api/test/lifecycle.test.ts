import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { DEFAULT_TRAJECTORY_RULES, type Embedder, goalWords } from '@engram/core'
import { contentHash } from '@engram/engine'
import { type RedisServer, startRedis } from '@engram/test-servers'
import Database3 from 'better-sqlite3'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, TEST_BACKEND, type TestApp } from './helpers.ts'

const CONTEXT = `query($input: MemoryContextInput!) { memoryContext(input: $input) {
  __typename ... on MemoryContext { text cached } ... on Error { message } } }`
const CREATE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) {
  __typename ... on MemoryWrite { outcome } ... on Error { message } } }`
const ADD = `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, content: $t }) {
  __typename ... on Message { id } ... on Error { message } } }`
const SESSION = `query($c: String!) { session(conversationId: $c) { __typename ... on Session { messageCount } } }`
const SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MEMORIES, MESSAGES, KNOWLEDGE] }) {
  __typename ... on SearchResult { hits { text } } ... on Error { message } } }`
const DELETE = `mutation($id: ID!) { deleteAgent(id: $id) { __typename ... on Error { message } } }`
const CLEAR = `mutation($a: ID, $c: String!) { clearAll(agentId: $a, confirm: $c) { __typename ... on Error { message } } }`
const WINDOW = `query($c: String!) { contextWindow(conversationId: $c) { __typename ... on Error { message } } }`
const TURNS = `query($c: String!) { memoryContext(input: { conversationId: $c, sections: [CONVERSATION] }) {
  __typename ... on MemoryContext { text } ... on Error { message } } }`
const REPORT = `query($a: ID!) { deletionReport(agentId: $a) {
  __typename ... on DeletionReport { agentId remaining stores { store kind count } } ... on Error { message } } }`

/**
 * A run of the agent with what it left in trajectory memory (issue 16), the text in its goal: the
 * manifest, a trajectory (its goal words indexed), a run session entry, a fact and a selector the
 * run contributed to, and a hint, through the storage's repository.
 */
async function fillTrajectoryMemory(t: TestApp, agentId: string, text: string) {
  const memory = t.app.services.engine.storage.trajectories
  const at = new Date()
  const runId = `${agentId}-run`
  const place = { scope: 'default', domain: 'shop.example' }
  await memory.insertRun(agentId, {
    id: runId,
    sessionId: 'session',
    parentRunId: null,
    kind: 'START',
    isolation: 'SHARED',
    scope: 'default',
    status: 'COMPLETED',
    goal: `find ${text}`,
    domain: place.domain,
    startUrl: 'https://shop.example/',
    currentUrl: null,
    finalUrl: null,
    turnCount: 2,
    success: true,
    summary: `found ${text}`,
    result: null,
    reason: null,
    artifactPaths: [],
    model: null,
    durationMs: 10,
    extra: null,
    startedAt: at,
    updatedAt: at,
    completedAt: at,
  })
  await memory.insertTrajectory(
    agentId,
    {
      id: `${agentId}-trajectory`,
      ...place,
      origin: 'https://shop.example',
      goal: `find ${text}`,
      words: goalWords(`find ${text}`),
      runId,
      steps: [
        {
          action: 'type',
          selector: '#q',
          value: text,
          url: null,
          verified: true,
          durationMs: 5,
          extra: null,
        },
      ],
      stepCount: 1,
      verifiedCount: 1,
      success: true,
      turns: 2,
      durationMs: 10,
      outcome: `found ${text}`,
      model: null,
      recordedAt: at,
      extra: null,
    },
    100,
  )
  await memory.insertRunSession(
    agentId,
    {
      ...place,
      sessionId: 'session',
      runId,
      goal: `find ${text}`,
      outcome: `found ${text}`,
      success: true,
      finalUrl: null,
      turnsUsed: 2,
      durationMs: 10,
      endedAt: at,
      extra: null,
    },
    5,
  )
  const rules = DEFAULT_TRAJECTORY_RULES
  await memory.observeFact(
    agentId,
    { ...place, type: 'PATTERN', key: 'search', value: text },
    at,
    rules,
    runId,
  )
  await memory.observeSelector(
    agentId,
    { ...place, element: text, selector: '#q', outcome: 'SUCCESS' },
    at,
    runId,
  )
  await memory.addHint(agentId, {
    scope: 'default',
    text: `search for ${text}`,
    createdAt: at,
    updatedAt: at,
    extra: null,
  })
  expect(await memory.countTrajectories(agentId, {})).toBe(1)
}

const VAULT = 'Pinned: the vault code of the old owner is 4711'

const GRAPH_ENTITY = `mutation($input: CreateGraphEntityInput!) { createGraphEntity(input: $input) {
  __typename ... on GraphEntity { id } ... on Error { message } } }`
const GRAPH_LINK = `mutation($input: CreateGraphRelationshipInput!) { createGraphRelationship(input: $input) {
  __typename ... on GraphRelationship { id } ... on Error { message } } }`
const GRAPH_COUNT = `query($a: ID!) { graphRelationships(agentId: $a, includeHistory: true) {
  __typename ... on GraphRelationshipPage { totalCount } ... on Error { message } } }`

/**
 * A small knowledge graph naming `text`, entered through the operator's mutations (issue 15:
 * deleting the agent removes its graph like the rest of its data).
 */
async function fillGraph(t: TestApp, agentId: string, text: string) {
  const entity = async (type: string, name: string) => {
    const r = await t.gql(GRAPH_ENTITY, { input: { agentId, type, name, summary: `About ${text}` } })
    expect(r.data.createGraphEntity.__typename, JSON.stringify(r)).toBe('GraphEntity')
    return r.data.createGraphEntity.id as string
  }
  const person = await entity('PERSON', `Keeper ${text}`)
  const company = await entity('COMPANY', `${text} Holdings`)
  const link = await t.gql(GRAPH_LINK, {
    input: { agentId, sourceId: person, relation: 'works at', targetId: company },
  })
  expect(link.data.createGraphRelationship.__typename, JSON.stringify(link)).toBe('GraphRelationship')
  expect((await t.gql(GRAPH_COUNT, { a: agentId })).data.graphRelationships.totalCount).toBe(1)
}

const RUN_START = `mutation($input: StartRunInput!) { startRun(input: $input) {
  __typename ... on Run { id } ... on Error { message } } }`
const RUN_COMPLETE = `mutation($input: CompleteRunInput!) { completeRun(input: $input) {
  __typename ... on RunEnd { trajectoryId factsRecorded selectorsRecorded sessionRecorded } ... on Error { message } } }`
const RUN_FAIL = `mutation($input: FailRunInput!) { failRun(input: $input) {
  __typename ... on RunEnd { sessionRecorded } ... on Error { message } } }`
const RUN_RESUME = `mutation($input: ResumeRunInput!) { resumeRun(input: $input) {
  __typename ... on Run { id } ... on Error { message } } }`
const RUN_HINT = `mutation($t: String!) { addRunHint(input: { text: $t }) { __typename ... on RunHint { id } ... on Error { message } } }`
const RUN_MEMORY = `query($a: ID, $d: String!) {
  runs(agentId: $a, domain: $d) { ... on RunPage { totalCount } }
  trajectories(agentId: $a, domain: $d) { ... on TrajectoryPage { totalCount } }
  runSessions(agentId: $a, domain: $d) { ... on QueryRunSessionsSuccess { data { id } } }
  appFacts(agentId: $a, domain: $d) { ... on AppFactPage { totalCount } }
  knownSelectors(agentId: $a, domain: $d) { ... on KnownSelectorPage { totalCount } }
}`

/**
 * Trajectory memory naming `text` (issue 16), written with the agent's key: on `<text>.example` a
 * completed run (trajectory, session entry, fact, selector) and its resume, still running; on
 * `<text>-two.example` a failed run (session entry, fact, selector); a hint.
 */
async function fillRuns(t: TestApp, key: string, text: string) {
  const domains = [`${text}.example`, `${text}-two.example`]
  const ok = (r: { data: Record<string, { __typename: string }> }, name: string, typename: string) =>
    expect(r.data[name]?.__typename, JSON.stringify(r)).toBe(typename)
  ok(
    await t.gql(RUN_START, { input: { goal: `Find the ${text} page`, domain: domains[0] } }, key),
    'startRun',
    'Run',
  )
  const first = (await t.gql(`{ runs(domain: "${domains[0]}") { ... on RunPage { runs { id } } } }`, {}, key))
    .data.runs.runs[0].id as string
  const completed = await t.gql(
    RUN_COMPLETE,
    {
      input: {
        runId: first,
        outcome: `Found the ${text} page`,
        finalUrl: `https://${domains[0]}/found`,
        steps: [{ action: 'type', selector: '#q', value: `${text} query`, verified: true }],
        facts: [{ type: 'QUIRK', key: 'search', value: `${text} search is slow` }],
        selectors: [{ element: 'input "Search"', selector: `#${text}-q` }],
      },
    },
    key,
  )
  expect(completed.data.completeRun, JSON.stringify(completed)).toMatchObject({
    factsRecorded: 1,
    selectorsRecorded: 1,
    sessionRecorded: true,
  })
  const resumed = await t.gql(RUN_RESUME, { input: { runId: first, goal: `Bookmark the ${text} page` } }, key)
  ok(resumed, 'resumeRun', 'Run')
  const second = await t.gql(RUN_START, { input: { goal: `Log in to ${text}`, domain: domains[1] } }, key)
  ok(second, 'startRun', 'Run')
  ok(
    await t.gql(
      RUN_FAIL,
      {
        input: {
          runId: second.data.startRun.id,
          reason: `${text} login refused`,
          facts: [{ type: 'TIMING', key: 'login', value: `${text} login takes 3s` }],
          selectors: [{ element: 'button "Log in"', selector: `#${text}-login`, outcome: 'FAILURE' }],
        },
      },
      key,
    ),
    'failRun',
    'RunEnd',
  )
  ok(await t.gql(RUN_HINT, { t: `Prefer the ${text} sitemap` }, key), 'addRunHint', 'RunHint')
  return { domains, first, resumed: resumed.data.resumeRun.id as string }
}

/** A provider with no `embedOne`: treated as remote, so texts go through the (per-agent) cache. */
class RemoteTestEmbedder implements Embedder {
  readonly model = 'lifecycle-remote'
  readonly dimensions = 16
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const digest = createHash('sha256').update(text).digest()
      return Float32Array.from({ length: this.dimensions }, (_, i) => (digest[i] as number) / 127.5 - 1)
    })
  }
}

type Report = { agentId: string; remaining: number; stores: { store: string; kind: string; count: number }[] }

async function report(t: TestApp, agentId: string): Promise<Report> {
  const r = await t.gql(REPORT, { a: agentId })
  expect(r.errors).toBeUndefined()
  expect(r.data.deletionReport.__typename).toBe('DeletionReport')
  return r.data.deletionReport
}

const nonZero = (r: Report) =>
  Object.fromEntries(r.stores.filter((s) => s.count > 0).map((s) => [s.store, s.count]))

// Issue 10: "A deleted agent's data is served to the next owner of its id."
describe('a deleted or replaced agent leaves nothing in memory for the next owner of its id', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  /** An agent with a pinned memory, a conversation, and a memory context served from the cache. */
  async function seed(agentId: string): Promise<string> {
    const key = await createAgentKey(t, agentId)
    const created = await t.gql(CREATE, { input: { content: VAULT, category: 'FACT', pinned: true } }, key)
    expect(created.data.createMemory.outcome).toBe('STORED')
    expect(
      (await t.gql(ADD, { c: 'chat', t: 'The vault is behind the painting' }, key)).data.addMessage
        .__typename,
    ).toBe('Message')
    const first = await t.gql(CONTEXT, { input: { query: 'vault code' } }, key)
    expect(first.data.memoryContext).toMatchObject({ cached: false, text: expect.stringContaining('4711') })
    const second = await t.gql(CONTEXT, { input: { query: 'vault code' } }, key)
    expect(second.data.memoryContext).toMatchObject({ cached: true, text: expect.stringContaining('4711') })
    expect(JSON.stringify((await t.gql(SEARCH, { q: 'vault' }, key)).data.search.hits)).toContain('4711')
    // The optimizer keeps the agent's entries and their redundancy join between runs (issue 18).
    const run = await t.gql(`mutation { runOptimizer { __typename } }`, {}, key)
    expect(run.data.runOptimizer.__typename).toBe('OptimizationSnapshot')
    expect(nonZero(await report(t, agentId))).toMatchObject({
      'optimizer kept entries': expect.any(Number),
      'optimizer redundancy joins': 1,
    })
    return key
  }

  /** What the next user of the id sees: nothing of the old data, nothing from a cache. */
  async function expectNothingServed(key: string) {
    const context = await t.gql(CONTEXT, { input: { query: 'vault code' } }, key)
    expect(context.data.memoryContext.__typename).toBe('MemoryContext')
    expect(context.data.memoryContext.cached).toBe(false)
    expect(context.data.memoryContext.text).not.toContain('4711')
    expect(JSON.stringify((await t.gql(SEARCH, { q: 'vault painting' }, key)).data.search)).not.toMatch(
      /4711|painting/,
    )
    // The conversation starts again: no cached session counts the old messages.
    expect((await t.gql(ADD, { c: 'chat', t: 'hello' }, key)).data.addMessage.__typename).toBe('Message')
    expect((await t.gql(SESSION, { c: 'chat' }, key)).data.session.messageCount).toBe(1)
  }

  it('deleteAgent, then a new key for the same id (the reported scenario)', async () => {
    await seed('rt-del')
    expect((await t.gql(DELETE, { id: 'rt-del' })).data.deleteAgent.__typename).toBe('Agent')
    // Within the 10 s the context cache would keep it: the clock does not move.
    const newOwner = await createAgentKey(t, 'rt-del')
    await expectNothingServed(newOwner)
    const left = nonZero(await report(t, 'rt-del'))
    // The new owner's own key, conversation and context are all that is there.
    expect(Object.keys(left).sort()).toEqual(
      [
        'Agent',
        'ApiKey',
        // The new owner's message waits for its embedding.
        'Job',
        'Message',
        'MemoryEntry',
        // Its full-text entry: an FTS5 table on SQLite, the row's tsvector on Postgres.
        t.postgresUrl ? 'Message.searchVector' : 'MessageSearch',
        'Session',
        // ...and schedules its conversation's summary (issue 13 §3).
        'SummaryCursor',
        'context cache',
        // Its turn's extraction and summary jobs, as this process knows them (issue 18).
        'debounced jobs known pending',
        // Its search built its own lexical indexes (issue 18), from its own rows only.
        'lexical indexes in memory',
        // ...and holds its participants, newest turn and settings between searches.
        'search facts in memory',
        'session cache',
        'vector indexes in memory',
      ].sort(),
    )
  })

  it("deleteMemory and deleteSession take the documents out of search's in-process lexical index at once (issue 18)", async () => {
    const key = await createAgentKey(t, 'rt-lexical')
    const created = await t.gql(
      CREATE,
      { input: { content: 'The zqxlexical vault code is 4711', category: 'FACT' } },
      key,
    )
    expect(created.data.createMemory.outcome).toBe('STORED')
    const memoryId = (await t.db.memoryItem.findFirst({ where: { agentId: 'rt-lexical' } }))?.id
    await t.gql(ADD, { c: 'doomed', t: 'The zqxlexical key hides behind the painting' }, key)
    await t.gql(ADD, { c: 'kept', t: 'The zqxlexical garden needs water' }, key)
    // A search builds the agent's indexes from the store.
    expect(JSON.stringify((await t.gql(SEARCH, { q: 'zqxlexical' }, key)).data.search.hits)).toContain(
      'painting',
    )
    const indexes = t.app.services.lexicalIndexes
    const [term] = t.app.services.storage.fullText.terms('zqxlexical')
    const messages = () => indexes.peek('messages', 'rt-lexical')
    const memories = () => indexes.peek('memories', 'rt-lexical')
    expect(messages()?.documentFrequency(term as string, 'all')).toBe(2)
    expect(memories()?.documentFrequency(term as string, 'all')).toBe(1)
    const doomed = await t.db.message.findMany({
      where: { agentId: 'rt-lexical', session: { conversationId: 'doomed' } },
    })
    expect(doomed).toHaveLength(1)
    expect(messages()?.has(String(doomed[0]?.id))).toBe(true)
    // The agent's turn timeline (dialogue context's reads) is held beside the messages' index.
    const timeline = () => indexes.timeline('rt-lexical')
    expect(timeline()?.has(String(doomed[0]?.id))).toBe(true)

    const deleted = await t.gql(
      `mutation { deleteSession(conversationId: "doomed") { __typename } }`,
      {},
      key,
    )
    expect(deleted.errors).toBeUndefined()
    await indexes.settled()
    // Gone from memory at once: the deletion resets the agent's search state, so its index is
    // dropped whole, before any search; the next search builds it again without the turn.
    expect(messages()).toBeNull()
    expect(timeline()).toBeNull()
    await t.gql(SEARCH, { q: 'zqxlexical' }, key)
    expect(messages()?.has(String(doomed[0]?.id))).toBe(false)
    expect(timeline()?.has(String(doomed[0]?.id))).toBe(false)
    expect(timeline()?.size).toBe(1)
    expect(messages()?.documentFrequency(term as string, 'all')).toBe(1)

    expect(memoryId).toBeTruthy()
    await t.gql(`mutation($id: ID!) { deleteMemory(id: $id) { __typename } }`, { id: memoryId }, key)
    await indexes.settled()
    // A deleted memory resets the agent's memories (search forgets the agent): that index goes whole.
    expect(memories()).toBeNull()
    const hits = JSON.stringify(
      (await t.gql(SEARCH, { q: 'zqxlexical painting vault' }, key)).data.search.hits,
    )
    expect(hits).not.toMatch(/painting|4711/)
    expect(hits).toContain('garden')

    // Deleting the agent drops its indexes whole.
    expect(indexes.held('rt-lexical')).toBeGreaterThan(0)
    expect((await t.gql(DELETE, { id: 'rt-lexical' })).data.deleteAgent.__typename).toBe('Agent')
    expect(indexes.held('rt-lexical')).toBe(0)
    expect(timeline()).toBeNull()
    expect(messages()).toBeNull()
  })

  it('clearAll of one agent', async () => {
    const key = await seed('rt-clear')
    expect((await t.gql(CLEAR, { a: 'rt-clear', c: 'CLEAR rt-clear' })).data.clearAll.__typename).toBe(
      'ClearAllPayload',
    )
    await expectNothingServed(key)
  })

  it('clearAll of every agent', async () => {
    const key = await seed('rt-clear-all')
    expect((await t.gql(CLEAR, { c: 'CLEAR ALL AGENTS' })).data.clearAll.__typename).toBe('ClearAllPayload')
    await expectNothingServed(key)
  })

  it('importMemory (REPLACE) of a document without the memory', async () => {
    const key = await seed('rt-import')
    const empty = await createAgentKey(t, 'rt-empty')
    const exported = await t.gql(`{ exportMemory { ... on MemoryExport { document } } }`, {}, empty)
    const imported = await t.gql(
      `mutation($d: JSON!) { importMemory(document: $d, mode: REPLACE) { __typename ... on Error { message } } }`,
      { d: exported.data.exportMemory.document },
      key,
    )
    expect(imported.data.importMemory.__typename).toBe('ImportReport')
    await expectNothingServed(key)
  })

  it('restoreDatabase of a backup taken before the memory was written', async () => {
    await createAgentKey(t, 'rt-restore')
    const backup = await t.gql(`mutation { backupDatabase { ... on Backup { name } } }`)
    const name = backup.data.backupDatabase.name as string
    await t.gql(`mutation { deleteAgent(id: "rt-restore") { __typename } }`)
    const again = await seed('rt-restore')
    const restored = await t.gql(
      `mutation($n: String!) { restoreDatabase(name: $n) { __typename ... on Error { message } } }`,
      { n: name },
    )
    expect(restored.data.restoreDatabase.__typename).toBe('RestorePayload')
    // Keys stay as they are (restore keeps them); the agent is the backup's, without the memory.
    expect((await t.gql(`{ viewer { agentId } }`, {}, again)).data.viewer.agentId).toBe('rt-restore')
    await expectNothingServed(again)
  })

  it('maintenance runs keep their counts and nothing of a deleted agent (issue 17 §4)', async () => {
    await seed('rt-maint')
    const RUN = `mutation($a: ID) { runMaintenance(dryRun: true, agentId: $a) { __typename ... on MaintenanceRun { id agentId removed { conversations } } } }`
    const run = (await t.gql(RUN, { a: 'rt-maint' })).data.runMaintenance
    expect(run).toMatchObject({ __typename: 'MaintenanceRun', agentId: 'rt-maint' })
    expect(nonZero(await report(t, 'rt-maint'))).toMatchObject({ MaintenanceRun: 1 })
    expect((await t.gql(DELETE, { id: 'rt-maint' })).data.deleteAgent.__typename).toBe('Agent')
    // The run stays (what was removed, counts only) and no longer names the agent.
    const row = await t.db.maintenanceRun.findUniqueOrThrow({ where: { id: run.id } })
    expect(row.agentId).toBeNull()
    expect(JSON.stringify(row)).not.toContain('rt-maint')
    expect((await report(t, 'rt-maint')).remaining).toBe(0)
  })

  it('serves no built prompt (buildContext, issue 17) of a deleted agent to the next owner of its id', async () => {
    const BUILT = `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename
      ... on MemoryContext { cached built { messages { content } memories { included overflowed summarized } } } } }`
    const input = { query: 'vault code', buildContext: { instructions: 'Be brief.' } }
    const key = await seed('rt-built')
    for (const cached of [false, true]) {
      const built = (await t.gql(BUILT, { input }, key)).data.memoryContext
      expect(built.cached).toBe(cached)
      expect(JSON.stringify(built.built.messages)).toContain('4711')
    }
    expect((await t.gql(DELETE, { id: 'rt-built' })).data.deleteAgent.__typename).toBe('Agent')
    // Within the 10 s the context cache would keep it: the clock does not move.
    const newOwner = await createAgentKey(t, 'rt-built')
    const after = (await t.gql(BUILT, { input }, newOwner)).data.memoryContext
    expect(after.cached).toBe(false)
    expect(JSON.stringify(after.built)).not.toMatch(/4711|painting/)
    expect(after.built.memories).toEqual({ included: [], overflowed: [], summarized: [] })
  })

  it('writes search accesses after the flush interval, and never those of a deleted memory or agent (issue 18)', async () => {
    const FOUND = `query($q: String!) { search(input: { query: $q, scopes: [MEMORIES] }) {
      ... on SearchResult { hits { id memory { accessCount } } } } }`
    const accesses = t.app.services.search.accesses
    const stored = async (id: string) =>
      (await t.db.memoryItem.findUnique({ where: { id: Number(id) } }))?.accessCount ?? null
    const key = await createAgentKey(t, 'rt-access')
    const create = async (content: string) =>
      (
        await t.gql(
          `mutation($c: String!) { createMemory(input: { content: $c, category: FACT }) { ... on MemoryWrite { memory { id } } } }`,
          { c: content },
          key,
        )
      ).data.createMemory.memory.id as string
    const kept = await create('the harbour crane lifts containers')
    const doomed = await create('the harbour ferry leaves at dawn')
    const first = (await t.gql(FOUND, { q: 'harbour' }, key)).data.search.hits
    // The hits show the access at once; the rows get it with the next flush.
    expect(first.map((h: { memory: { accessCount: number } }) => h.memory.accessCount)).toEqual([1, 1])
    expect(await stored(kept)).toBe(0)
    expect(accesses.pendingOf('rt-access', kept)).toBe(1)

    // A memory deleted while its access is pending: the access goes with it.
    await t.gql(`mutation($id: ID!) { deleteMemory(id: $id) { __typename } }`, { id: doomed }, key)
    expect(accesses.pendingOf('rt-access', doomed)).toBe(0)
    t.clock.advance(1_000)
    await t.gql(FOUND, { q: 'crane' }, key)
    await accesses.flush()
    expect(await stored(kept)).toBe(2)
    expect(await stored(doomed)).toBeNull()

    // The agent deleted with an access pending: nothing of it is kept or written after.
    await t.gql(FOUND, { q: 'crane' }, key)
    expect(accesses.pendingOf('rt-access', kept)).toBe(1)
    expect((await t.gql(DELETE, { id: 'rt-access' })).data.deleteAgent.__typename).toBe('Agent')
    expect(accesses.pendingOf('rt-access', kept)).toBe(0)
    await accesses.flush()
    expect(await t.db.memoryItem.count({ where: { agentId: 'rt-access' } })).toBe(0)
  })

  it('deleting an agent removes its pool contributions and memberships; deleting a pool removes its storage agent everywhere', async () => {
    const src = await createAgentKey(t, 'pool-source')
    const keep = await createAgentKey(t, 'pool-keeper')
    const created = await t.gql(
      `mutation($input: CreatePoolInput!) { createPool(input: $input) { ... on MemoryPool { id } } }`,
      {
        input: {
          name: 'lifecycle-pool',
          members: [
            { agentId: 'pool-source', role: 'CONTRIBUTOR' },
            { agentId: 'pool-keeper', role: 'CONTRIBUTOR' },
          ],
        },
      },
    )
    const poolId = created.data.createPool.id as string
    const contribute = async (content: string, key: string) => {
      const r = await t.gql(
        `mutation($input: ContributeToPoolInput!) { contributeToPool(input: $input) { __typename ... on PoolContribution { outcome } } }`,
        { input: { poolId, content, category: 'FACT' } },
        key,
      )
      expect(r.data.contributeToPool).toMatchObject({ outcome: 'STORED' })
    }
    await contribute('The pool-source agent says the vault opens with 9182', src)
    await contribute('The keeper knows the garden gate code', keep)
    const poolHits = async (query: string) =>
      JSON.stringify(
        (
          await t.gql(
            `query($p: ID!, $q: String!) { queryPool(poolId: $p, query: $q) { ... on PoolQueryResult { hits { memory { content } } } } }`,
            { p: poolId, q: query },
            keep,
          )
        ).data.queryPool,
      )
    // Before: the pool finds the source's contribution, and the report counts its pool rows.
    expect(await poolHits('vault 9182')).toContain('9182')
    expect(nonZero(await report(t, 'pool-source'))).toMatchObject({ PoolMember: 1, PoolContribution: 1 })

    expect((await t.gql(DELETE, { id: 'pool-source' })).data.deleteAgent.__typename).toBe('Agent')

    expect(nonZero(await report(t, 'pool-source'))).toEqual({})
    expect(await poolHits('vault 9182')).not.toContain('9182')
    const left = await t.gql(
      `query($p: ID!) { pool(id: $p) { ... on MemoryPool { memoryCount members { agentId } } } }`,
      { p: poolId },
    )
    expect(left.data.pool).toEqual({ memoryCount: 1, members: [{ agentId: 'pool-keeper' }] })

    // The pool's own deletion: its storage agent ends like a deleted agent, in every store.
    const storageAgent = `pool:${poolId}`
    const before = await t.app.services.lifecycle.report(storageAgent)
    expect(before.stores.find((s) => s.store === 'MemoryItem')?.count).toBe(1)
    const deleted = await t.gql(`mutation($p: ID!) { deletePool(id: $p) { __typename } }`, { p: poolId })
    expect(deleted.data.deletePool.__typename).toBe('DeletePoolPayload')
    const after = await t.app.services.lifecycle.report(storageAgent)
    expect(after.stores.filter((s) => s.count > 0)).toEqual([])
    expect(nonZero(await report(t, 'pool-keeper'))).not.toHaveProperty('PoolMember')
  })

  // Issue 17's metrics: no label carries an id, so a deleted agent leaves no series behind; the
  // counts it was part of drop with it, and the server's samples hold aggregates only.
  it('deleteAgent leaves nothing of the agent in /metrics or serverMetrics', async () => {
    await seed('rt-metrics-gone')
    const scrape = async () =>
      (
        await t.app.yoga.fetch('http://yoga/metrics', { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      ).text()
    const agents = (text: string) => Number(/^engram_agents (\d+)$/m.exec(text)?.[1])
    const before = await scrape()
    expect(before).not.toContain('rt-metrics-gone')
    await t.gql(`mutation { deleteAgent(id: "rt-metrics-gone") { __typename } }`)
    const after = await scrape()
    expect(after).not.toContain('rt-metrics-gone')
    expect(agents(after)).toBe(agents(before) - 1)
    await t.app.sampler.sample()
    expect(
      JSON.stringify(
        (await t.gql(`{ serverMetrics { ... on ServerMetrics { samples { counts { agents } } } } }`)).data,
      ),
    ).not.toContain('rt-metrics-gone')
  })

  it('deleteAgent and clearAll remove the working context (issue 17): the next owner of the id starts empty', async () => {
    const APPEND = `mutation($t: String!) { appendWorkingContext(messages: [{ role: USER, content: $t }]) { __typename } }`
    const PAD = `mutation { setWorkingScratchpad(scratchpad: "the vault code is 4711") { __typename } }`
    const READ = `{ workingContext { ... on WorkingContext { messages { content } scratchpad } } }`
    const inContext = (agentId: string) => async () =>
      (await report(t, agentId)).stores.find((s) => s.store === 'working context (L1)')?.count
    for (const agentId of ['rt-wc-del', 'rt-wc-clear']) {
      const key = await createAgentKey(t, agentId)
      await t.gql(APPEND, { t: 'the vault is behind the painting' }, key)
      await t.gql(PAD, {}, key)
      expect(await inContext(agentId)()).toBe(1)
    }
    expect((await t.gql(DELETE, { id: 'rt-wc-del' })).data.deleteAgent.__typename).toBe('Agent')
    expect(await inContext('rt-wc-del')()).toBe(0)
    const newOwner = await createAgentKey(t, 'rt-wc-del')
    expect((await t.gql(READ, {}, newOwner)).data.workingContext).toEqual({ messages: [], scratchpad: '' })
    const cleared = await t.gql(CLEAR, { a: 'rt-wc-clear', c: 'CLEAR rt-wc-clear' })
    expect(cleared.data.clearAll.__typename).toBe('ClearAllPayload')
    expect(await inContext('rt-wc-clear')()).toBe(0)
  })
})

// Issue 16: deleting a run, a domain or an agent removes its trajectories, knowledge, selectors and
// run sessions from every store: read back through the API, and counted by the deletion report.
describe('deleting a run, a domain or an agent removes its trajectory memory', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  const memoryOf = async (agentId: string, domain: string) => {
    const r = await t.gql(RUN_MEMORY, { a: agentId, d: domain })
    expect(r.errors, JSON.stringify(r)).toBeUndefined()
    return {
      runs: r.data.runs.totalCount,
      trajectories: r.data.trajectories.totalCount,
      runSessions: r.data.runSessions.data.length,
      facts: r.data.appFacts.totalCount,
      selectors: r.data.knownSelectors.totalCount,
    }
  }
  const none = { runs: 0, trajectories: 0, runSessions: 0, facts: 0, selectors: 0 }

  it('deleteRun, then deleteRunDomain, leave the agent as it was before its runs; deleteAgent leaves nothing', async () => {
    const key = await createAgentKey(t, 'traj-gone')
    const before = nonZero(await report(t, 'traj-gone'))
    const keeperKey = await createAgentKey(t, 'traj-keep')
    const keeper = await fillRuns(t, keeperKey, 'keeper')
    const kept = nonZero(await report(t, 'traj-keep'))
    const keeperMemory = await memoryOf('traj-keep', keeper.domains[0] as string)

    const gone = await fillRuns(t, key, 'doomed')
    const [one, two] = gone.domains as [string, string]
    expect(await memoryOf('traj-gone', one)).toEqual({
      runs: 2,
      trajectories: 1,
      runSessions: 1,
      facts: 1,
      selectors: 1,
    })
    const filled = await report(t, 'traj-gone')
    expect(filled.remaining).toBeGreaterThan(Object.values(before).reduce((a, b) => a + b, 0))

    // The run: its trajectory, its session entry, and the fact and selector only it confirmed.
    const deleted = await t.gql(
      `mutation($r: String!) { deleteRun(runId: $r) { __typename ... on RunDeletion { runs trajectories runSessions facts selectors } } }`,
      { r: gone.first },
      key,
    )
    expect(deleted.data.deleteRun).toEqual({
      __typename: 'RunDeletion',
      runs: 1,
      trajectories: 1,
      runSessions: 1,
      facts: 1,
      selectors: 1,
    })
    expect(await memoryOf('traj-gone', one)).toEqual({ ...none, runs: 1 })
    // Its resume stays, its parent now missing from the lineage.
    const lineage = await t.gql(
      `query($r: String!) { runLineage(runId: $r) { ... on RunLineage { rootRunId parentMissing } } }`,
      { r: gone.resumed },
      key,
    )
    expect(lineage.data.runLineage).toEqual({ rootRunId: gone.resumed, parentMissing: true })

    // The domains: their runs and whatever memory is left of them.
    for (const domain of [one, two]) {
      const r = await t.gql(
        `mutation($d: String!) { deleteRunDomain(domain: $d) { __typename ... on RunDeletion { runs } } }`,
        { d: domain },
        key,
      )
      expect(r.data.deleteRunDomain, JSON.stringify(r)).toEqual({ __typename: 'RunDeletion', runs: 1 })
      expect(await memoryOf('traj-gone', domain)).toEqual(none)
    }
    // The hint is cross-domain: it goes with the scope.
    const cleared = await t.gql(
      `mutation { clearRunMemoryScope(scope: "default") { ... on RunDeletion { hints } } }`,
      {},
      key,
    )
    expect(cleared.data.clearRunMemoryScope.hints).toBe(1)
    // Every store counts what it held before the runs: nothing of them is left anywhere.
    expect(nonZero(await report(t, 'traj-gone'))).toEqual(before)

    // Filled again, then the agent: nothing in any store; the other agent keeps all of its own.
    await fillRuns(t, key, 'doomed')
    expect((await t.gql(DELETE, { id: 'traj-gone' })).data.deleteAgent.__typename).toBe('Agent')
    const after = await report(t, 'traj-gone')
    expect(after.remaining).toBe(0)
    expect(nonZero(after)).toEqual({})
    expect(nonZero(await report(t, 'traj-keep'))).toEqual(kept)
    expect(await memoryOf('traj-keep', keeper.domains[0] as string)).toEqual(keeperMemory)
    // A new owner of the id starts with no runs and no memory of the old one's.
    const newOwner = await createAgentKey(t, 'traj-gone')
    const context = await t.gql(
      `query($d: String!) { runContext(domain: $d, goal: "Find the doomed page") { ... on RunContext { text reference { trajectory { id } } } } }`,
      { d: one },
      newOwner,
    )
    expect(context.data.runContext).toEqual({ text: '', reference: null })
    expect(
      (await t.gql(`{ runs { ... on RunPage { totalCount } } }`, {}, newOwner)).data.runs.totalCount,
    ).toBe(0)
  })
})

/** Every file in a folder (recursively). */
function filesIn(folder: string): string[] {
  if (!fs.existsSync(folder)) return []
  return fs
    .readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
}

/** Which of the needles occur in which files (as raw bytes). */
function occurrences(files: string[], needles: string[]): string[] {
  const found: string[] = []
  for (const file of files) {
    if (!fs.existsSync(file)) continue
    const bytes = fs.readFileSync(file)
    for (const needle of needles)
      if (bytes.includes(Buffer.from(needle))) found.push(`${path.basename(file)}: ${needle}`)
  }
  return found
}

// Issue 10: "Deleted data stays on disk."
// With REDIS_URL set (issue 14), as several replicas run: deleted data must not stay in Redis either.
// The SQLite file's bytes are scanned below; on Postgres the next describe checks the database
// itself (VACUUM, the report, every table's rows), as the issue asks.
describe.skipIf(TEST_BACKEND === 'postgres')('deleted data does not stay on disk, nor in Redis', () => {
  const embedder = new RemoteTestEmbedder()
  // Saved HNSW graphs from a few dozen vectors on (instead of 20,000).
  const vectorIndex = { approximateAbove: 40, hnsw: { initialCapacity: 64 } }
  let t: TestApp
  let vectors: string
  let redis: RedisServer
  let raw: Redis
  const marker = (agentId: string) => `zqxmarker-${agentId.replace(/-/g, '')}`
  const env = () => ({ REDIS_URL: redis.url })

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    t = await createTestApp({ embedder, vectorIndex, env: env() })
    vectors = path.join(path.dirname(t.databaseFile), 'vectors')
  })
  afterAll(async () => {
    await t.close()
    raw?.disconnect()
    await redis?.stop()
  })

  /** Every Redis key (any prefix, SCAN) naming the agent as a segment or holding one of the texts. */
  async function inRedis(agentId: string, texts: string[]): Promise<string[]> {
    const found: string[] = []
    let cursor = '0'
    do {
      const [next, keys] = await raw.scan(cursor, 'COUNT', 1000)
      cursor = next
      for (const key of keys) {
        const type = await raw.type(key)
        const values =
          type === 'zset'
            ? await raw.zrange(key, '0', '-1')
            : type === 'hash'
              ? Object.entries(await raw.hgetall(key)).flat()
              : type === 'string'
                ? [(await raw.get(key)) ?? '']
                : []
        if (key.split(':').includes(agentId) || values.some((v) => texts.some((text) => v.includes(text))))
          found.push(key)
      }
    } while (cursor !== '0')
    return found
  }

  const databaseFiles = () => [t.databaseFile, `${t.databaseFile}-wal`]

  /** Messages, memories and knowledge, all carrying the agent's marker, embedded and indexed. */
  async function fill(agentId: string): Promise<{ key: string; texts: string[] }> {
    const key = await createAgentKey(t, agentId)
    const texts: string[] = []
    const messages = Array.from({ length: 60 }, (_, i) => ({
      role: 'USER',
      content: `Note ${i} about ${marker(agentId)} and the garden shed number ${i}`,
    }))
    const added = await t.gql(
      `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "c", messages: $m }) { __typename } }`,
      { m: messages },
      key,
    )
    expect(added.data.addMessages.__typename).toBe('AddMessagesPayload')
    texts.push(...messages.map((m) => m.content))
    const places = ['the blue drawer', 'a tin under the stairs', 'the attic trunk', 'the glovebox']
    for (const [i, place] of places.entries()) {
      const content = `Memory ${i}: ${marker(agentId)} is kept in ${place}`
      await t.gql(CREATE, { input: { content, category: 'FACT' } }, key)
      texts.push(content)
    }
    await t.gql(
      `mutation($v: String!) { storeKnowledge(input: { category: DOMAIN, key: "marker.example", value: $v }) { __typename } }`,
      { v: `The ${marker(agentId)} domain` },
      key,
    )
    // An automatic summary of the conversation and a generated profile, both holding the marker (issue 13).
    const preference = `I prefer ${marker(agentId)} tea in the garden shed`
    await t.gql(CREATE, { input: { content: preference, category: 'PREFERENCE' } }, key)
    texts.push(preference)
    await fillGraph(t, agentId, marker(agentId))
    await fillTrajectoryMemory(t, agentId, marker(agentId))
    expect((await t.app.services.summaries.summarize(agentId, 'c'))?.content).toContain(marker(agentId))
    expect((await t.app.services.profiles.regenerate(agentId, null)).content).toContain(marker(agentId))
    // A search embeds what is missing and loads the indexes; above 40 vectors they become HNSW
    // graphs saved in the vector folder.
    await t.gql(SEARCH, { q: `${marker(agentId)} garden drawer` }, key)
    await t.app.services.embeddings.settled()
    await t.gql(SEARCH, { q: `${marker(agentId)} garden drawer` }, key)
    await t.app.services.embeddings.settled()
    // The context window and memoryContext's turns read the conversation through Redis (L2).
    expect((await t.gql(WINDOW, { c: 'c' }, key)).data.contextWindow.__typename).toBe('ContextWindow')
    expect((await t.gql(TURNS, { c: 'c' }, key)).data.memoryContext.text).toContain(marker(agentId))
    return { key, texts }
  }

  it('deleteAgent removes the graphs, cache entries, full-text segments and every byte of the text', async () => {
    await fill('disk-keep')
    // A reader holding its snapshot keeps every frame written meanwhile in the WAL (no checkpoint
    // can move past it): the agent's rows are in the -wal file, as under a steady read load.
    const reader = new Database3(t.databaseFile, { readonly: true })
    reader.prepare('BEGIN').run()
    reader.prepare('SELECT count(*) FROM "Agent"').get()
    const { texts } = await fill('disk-gone')
    reader.prepare('COMMIT').run()
    reader.close()
    const gone = marker('disk-gone')
    expect(occurrences([`${t.databaseFile}-wal`], [gone])).not.toEqual([])
    // A message's: the manifest of the messages' graph lists it (ids and content hashes).
    const hash = contentHash(texts[10] as string)

    // Before: the scan finds what it looks for, so finding nothing later means something.
    const agentFiles = () => filesIn(vectors).filter((f) => path.basename(f).startsWith('disk-gone~'))
    expect(agentFiles().some((f) => f.endsWith('.graph'))).toBe(true)
    expect(occurrences(agentFiles(), [hash])).not.toEqual([])
    expect(occurrences(databaseFiles(), [gone])).not.toEqual([])
    expect(await t.db.embeddingCache.count({ where: { agentId: 'disk-gone' } })).toBeGreaterThan(60)
    // The summary has its vector (issue 13 §3), embedded by its job before the search, and cached.
    const [summary] = await t.db.summary.findMany({ where: { agentId: 'disk-gone' } })
    const summaryHash = contentHash(summary?.content as string)
    expect(await t.db.embedding.count({ where: { agentId: 'disk-gone', kind: 'summary' } })).toBe(1)
    expect(
      await t.db.embeddingCache.count({ where: { agentId: 'disk-gone', contentHash: summaryHash } }),
    ).toBe(1)
    const before = await report(t, 'disk-gone')
    expect(nonZero(before)).toMatchObject({
      Agent: 1,
      ApiKey: 1,
      Message: 60,
      MemoryItem: expect.any(Number),
      Knowledge: 1,
      Embedding: expect.any(Number),
      EmbeddingCache: expect.any(Number),
      MessageSearch: 60,
      MemorySearch: expect.any(Number),
      KnowledgeSearch: 1,
      // The conversation's queued extraction (issue 13 §2), not yet due.
      Job: expect.any(Number),
      Summary: 1,
      SummaryCursor: 1,
      ProfileVersion: expect.any(Number),
      'vector graph files': expect.any(Number),
      'vector indexes in memory': expect.any(Number),
      // The conversation's L2 set and its meta hash.
      'Redis keys': 2,
      // Trajectory memory (issue 16).
      AgentRun: 1,
      Trajectory: 1,
      TrajectoryWord: expect.any(Number),
      RunSession: 1,
      AppFact: 1,
      KnownSelector: 1,
      RunHint: 1,
      RunContribution: 2,
    })
    expect(await inRedis('disk-gone', [gone])).toHaveLength(2)
    const kept = await report(t, 'disk-keep')
    // The planner's statistics (refreshed hourly) sample index keys, agent ids among them.
    await t.db.$executeRawUnsafe('ANALYZE')

    expect((await t.gql(DELETE, { id: 'disk-gone' })).data.deleteAgent.__typename).toBe('Agent')

    const after = await report(t, 'disk-gone')
    expect(after.remaining).toBe(0)
    expect(nonZero(after)).toEqual({})
    expect(after.stores.map((s) => s.kind)).toEqual(
      expect.arrayContaining(['TABLE', 'FULL_TEXT', 'FILE', 'CACHE', 'QUEUE']),
    )
    expect(agentFiles()).toEqual([])
    expect(
      occurrences([...databaseFiles(), ...filesIn(vectors)], [gone, hash, summaryHash, 'disk-gone']),
    ).toEqual([])
    // No Redis key names the agent or holds its text; the other agent's sets stay.
    expect(await inRedis('disk-gone', [gone])).toEqual([])
    expect(await inRedis('disk-keep', [marker('disk-keep')])).not.toEqual([])
    // The other agent keeps everything, its graph included.
    expect(nonZero(await report(t, 'disk-keep'))).toEqual(nonZero(kept))
    expect((await t.gql(GRAPH_COUNT, { a: 'disk-keep' })).data.graphRelationships.totalCount).toBe(1)
    expect(occurrences(databaseFiles(), [marker('disk-keep')])).not.toEqual([])
  })

  it('clearAll does the same for the agent it clears', async () => {
    await fill('disk-clear')
    const cleared = marker('disk-clear')
    expect(occurrences(databaseFiles(), [cleared])).not.toEqual([])
    expect((await t.gql(CLEAR, { a: 'disk-clear', c: 'CLEAR disk-clear' })).data.clearAll.__typename).toBe(
      'ClearAllPayload',
    )
    const after = nonZero(await report(t, 'disk-clear'))
    // The agent and its key stay; nothing of its memory does.
    expect(after).toEqual({ Agent: 1, ApiKey: 1 })
    expect(filesIn(vectors).filter((f) => path.basename(f).startsWith('disk-clear~'))).toEqual([])
    expect(occurrences([...databaseFiles(), ...filesIn(vectors)], [cleared])).toEqual([])
    expect(await inRedis('disk-clear', [cleared])).toEqual([])
  })

  it("deleteSession removes its summaries' vectors, cached vectors and queued embed jobs", async () => {
    const key = await createAgentKey(t, 'disk-talk')
    const summaryVectors = () => t.db.embedding.count({ where: { agentId: 'disk-talk', kind: 'summary' } })
    const summarize = async (text: string) => {
      expect((await t.gql(ADD, { c: 'talk', t: text }, key)).data.addMessage.__typename).toBe('Message')
      return t.app.services.summaries.summarize('disk-talk', 'talk')
    }
    const embedded = await summarize(`The ${marker('disk-talk')} lives in the blue drawer`)
    // A SUMMARIES search runs the agent's embed jobs first: the summary gets its vector, cached.
    await t.gql(
      `query($q: String!) { search(input: { query: $q, scopes: [SUMMARIES] }) { __typename } }`,
      { q: 'blue drawer' },
      key,
    )
    expect(await summaryVectors()).toBe(1)
    const embeddedHash = contentHash(embedded?.content as string)
    expect(
      await t.db.embeddingCache.count({ where: { agentId: 'disk-talk', contentHash: embeddedHash } }),
    ).toBe(1)
    // A second summary whose embed job is still queued.
    const queued = await summarize('The spare key moved to the glovebox')
    expect(await t.db.job.count({ where: { agentId: 'disk-talk', key: `summary:${queued?.id}` } })).toBe(1)

    const deleted = await t.gql(`mutation { deleteSession(conversationId: "talk") { __typename } }`, {}, key)
    expect(deleted.errors).toBeUndefined()
    expect(await t.db.summary.count({ where: { agentId: 'disk-talk' } })).toBe(0)
    expect(await summaryVectors()).toBe(0)
    expect(
      await t.db.embeddingCache.count({ where: { agentId: 'disk-talk', contentHash: embeddedHash } }),
    ).toBe(0)
    expect(await t.db.job.count({ where: { agentId: 'disk-talk', key: { startsWith: 'summary:' } } })).toBe(0)
    // Nothing of the summaries is searchable any more.
    const search = await t.gql(
      `query($q: String!) { search(input: { query: $q, scopes: [SUMMARIES] }) { ... on SearchResult { hits { text } } } }`,
      { q: 'blue drawer glovebox' },
      key,
    )
    expect(search.data.search.hits).toEqual([])
  })

  it('after a restart nothing comes back, and graphs of agents that no longer exist are swept', async () => {
    await fill('disk-restart')
    const doomed = marker('disk-restart')
    const keeperFiles = filesIn(vectors).filter((f) => path.basename(f).startsWith('disk-keep~'))
    expect(keeperFiles).not.toEqual([])
    expect((await t.gql(DELETE, { id: 'disk-restart' })).data.deleteAgent.__typename).toBe('Agent')
    // A graph left behind by a server without the sweep (or a crash mid-deletion).
    const leftover = path.join(vectors, 'gone-agent~0123abcd-message-0123456789ab.hnsw')
    fs.writeFileSync(leftover, '{}')
    fs.writeFileSync(`${leftover}.0000.graph`, doomed)

    // Shutdown saves every graph it holds: the deleted agent's must not be among them.
    await t.app.close()
    await t.db.$disconnect()
    const restarted = await createTestApp({ sameStoreAs: t, embedder, vectorIndex, env: env() })
    try {
      expect(await restarted.app.services.lifecycle.removeOrphanFiles()).toBe(2)
      expect(fs.existsSync(leftover)).toBe(false)
      for (const file of keeperFiles) expect(fs.existsSync(file)).toBe(true)
      const key = await createAgentKey(restarted, 'disk-keep-2')
      await restarted.gql(SEARCH, { q: 'garden' }, key)
      await restarted.app.services.embeddings.settled()
      expect(filesIn(vectors).filter((f) => path.basename(f).startsWith('disk-restart~'))).toEqual([])
      expect(occurrences([...databaseFiles(), ...filesIn(vectors)], [doomed, 'disk-restart'])).toEqual([])
      const r = await restarted.gql(REPORT, { a: 'disk-restart' })
      expect(r.data.deletionReport.remaining).toBe(0)
      expect(await inRedis('disk-restart', [doomed])).toEqual([])
    } finally {
      // The original app is closed already; its directory is removed by the restarted one's close.
      await restarted.app.close()
      await restarted.db.$disconnect()
      fs.rmSync(restarted.dir, { recursive: true, force: true })
      t = { ...t, close: async () => fs.rmSync(t.dir, { recursive: true, force: true }) }
    }
  })
})

// Issue 14: deletion on Postgres. The rows go with the agent (cascades), VACUUM reclaims their dead
// versions (the purge), the admin report counts nothing left in any table or full-text column, no
// row of any table still holds the text, and Redis holds no key of the agent. WAL segments and
// the server's base backups keep older pages until recycled: the documented exception.
describe.runIf(TEST_BACKEND === 'postgres')('deleted data does not stay in Postgres, nor in Redis', () => {
  let t: TestApp
  let redis: RedisServer
  let raw: Redis
  const marker = (agentId: string) => `zqxmarker-${agentId.replace(/-/g, '')}`

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    t = await createTestApp({ env: { REDIS_URL: redis.url } })
  })
  afterAll(async () => {
    await t.close()
    raw?.disconnect()
    await redis?.stop()
  })

  /** Rows of any table whose text (every column, as Postgres prints the row) holds the marker. */
  async function rowsHolding(text: string): Promise<Record<string, number>> {
    const tables = await t.db.$queryRawUnsafe<{ name: string }[]>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`,
    )
    const found: Record<string, number> = {}
    for (const { name } of tables) {
      const [row] = await t.db.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT count(*) AS n FROM "${name}" x WHERE x::text LIKE ?`,
        `%${text}%`,
      )
      if (Number(row?.n ?? 0) > 0) found[name] = Number(row?.n)
    }
    return found
  }

  async function fill(agentId: string): Promise<string> {
    const key = await createAgentKey(t, agentId)
    const messages = Array.from({ length: 20 }, (_, i) => ({
      role: 'USER',
      content: `Note ${i} about ${marker(agentId)} and the garden shed`,
    }))
    await t.gql(
      `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "c", messages: $m }) { __typename } }`,
      { m: messages },
      key,
    )
    await t.gql(
      CREATE,
      { input: { content: `${marker(agentId)} is kept in the attic`, category: 'FACT' } },
      key,
    )
    await t.gql(
      `mutation($v: String!) { storeKnowledge(input: { category: DOMAIN, key: "marker.example", value: $v }) { __typename } }`,
      { v: `The ${marker(agentId)} domain` },
      key,
    )
    await fillGraph(t, agentId, marker(agentId))
    await fillTrajectoryMemory(t, agentId, marker(agentId))
    await t.gql(SEARCH, { q: `${marker(agentId)} garden` }, key)
    await t.app.services.embeddings.settled()
    return key
  }

  it('deleteAgent leaves no row, no full-text entry and no Redis key of the agent, and VACUUMs', async () => {
    await fill('pg-keep')
    await fill('pg-gone')
    const gone = marker('pg-gone')
    // Before: the checks find what they look for, so finding nothing later means something.
    expect(Object.keys(await rowsHolding(gone))).toEqual(expect.arrayContaining(['Message', 'MemoryItem']))
    // The graph's entities hold the marker in their names (whatever the adapter calls its tables).
    expect(Object.keys(await rowsHolding(gone)).some((table) => /graph/i.test(table))).toBe(true)
    // So do trajectory memory's records (issue 16; the goal-word index holds the marker's parts,
    // split at its hyphen, and is counted by the report below).
    expect(nonZero(await report(t, 'pg-gone'))).toMatchObject({ TrajectoryWord: expect.any(Number) })
    expect(Object.keys(await rowsHolding(gone))).toEqual(
      expect.arrayContaining(['AgentRun', 'Trajectory', 'RunSession', 'AppFact', 'KnownSelector', 'RunHint']),
    )
    expect(nonZero(await report(t, 'pg-gone'))).toMatchObject({ 'Message.searchVector': 20 })
    const vacuumedBefore = await t.db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT coalesce(sum(vacuum_count), 0) AS n FROM pg_stat_user_tables WHERE relname = 'Message'`,
    )

    expect((await t.gql(DELETE, { id: 'pg-gone' })).data.deleteAgent.__typename).toBe('Agent')

    expect(nonZero(await report(t, 'pg-gone'))).toEqual({})
    expect(await rowsHolding(gone)).toEqual({})
    expect((await t.gql(GRAPH_COUNT, { a: 'pg-keep' })).data.graphRelationships.totalCount).toBe(1)
    expect(await t.app.services.engine.storage.trajectories.countTrajectories('pg-keep', {})).toBe(1)
    // The other agent's data is all there.
    expect(Object.keys(await rowsHolding(marker('pg-keep')))).toEqual(
      expect.arrayContaining(['Message', 'MemoryItem', 'Knowledge']),
    )
    // The purge VACUUMed the tables the rows were in (statistics arrive asynchronously).
    let vacuumed = 0
    for (let i = 0; i < 50 && vacuumed <= Number(vacuumedBefore[0]?.n ?? 0); i++) {
      const [row] = await t.db.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT coalesce(sum(vacuum_count), 0) AS n FROM pg_stat_user_tables WHERE relname = 'Message'`,
      )
      vacuumed = Number(row?.n ?? 0)
      if (vacuumed <= Number(vacuumedBefore[0]?.n ?? 0)) await new Promise((r) => setTimeout(r, 20))
    }
    expect(vacuumed).toBeGreaterThan(Number(vacuumedBefore[0]?.n ?? 0))
    const keys = await raw.keys('*')
    expect(keys.filter((k) => k.split(':').includes('pg-gone'))).toEqual([])
  })
})
