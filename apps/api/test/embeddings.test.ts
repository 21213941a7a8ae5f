import { createHash } from 'node:crypto'
import { bytesToVector, type Embedder } from '@engram/core'
import { contentHash } from '@engram/engine'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EmbeddingProgressEvent } from '../src/pubsub.ts'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

/**
 * A provider the test controls: no `embedOne`, so the service treats it as remote (cache, background
 * fills). Vectors come from the text's hash, so equal texts get equal vectors and different texts
 * nearly orthogonal ones; it records every text it is asked for and fails while told to.
 */
class RemoteTestEmbedder implements Embedder {
  readonly texts: string[] = []
  failing = false
  constructor(
    readonly model: string,
    readonly dimensions: number,
  ) {}

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.texts.push(...texts)
    if (this.failing) throw new Error(`${this.model} is unavailable`)
    if (texts.some((text) => text.startsWith('unembeddable')))
      throw new Error(`${this.model} refuses the batch`)
    return texts.map((text) => this.vectorOf(text))
  }

  vectorOf(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions)
    for (let i = 0; i < this.dimensions; i++) {
      const byte = createHash('sha256').update(`${this.model}/${i}/${text}`).digest()[0] as number
      vector[i] = byte / 127.5 - 1
    }
    return vector
  }

  timesAsked(text: string): number {
    return this.texts.filter((t) => t === text).length
  }
}

const CREATE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) {
  __typename ... on MemoryWrite { outcome memory { id content } } ... on Error { message }
} }`
const SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MEMORIES] }) {
  ... on SearchResult { hits { id text components { bm25 vector } } }
} }`
const STATS = `query($a: ID) { memoryStats(agentId: $a) { ... on MemoryStats {
  embeddingModel embedded embeddingCoverage coverage { kind total embedded }
} } }`
const PROGRESS_FIELDS = 'model state total done failed error'

const BEES = 'The user keeps bees in the garden'
const HIVE = 'The hive needs checking every Sunday morning'

describe('persisted embeddings with a remote provider', () => {
  let t: TestApp
  let keyOne: string
  let keyTwo: string
  const providerA = new RemoteTestEmbedder('test-remote-a', 64)
  const ids: Record<string, string> = {}

  const write = async (content: string, key: string, category = 'FACT') => {
    const r = await t.gql(CREATE, { input: { content, category } }, key)
    expect(r.errors).toBeUndefined()
    return r.data.createMemory as { outcome: string; memory: { id: string; content: string } }
  }

  beforeAll(async () => {
    // The graph's jobs (issue 15) would share the queue these tests count: this file is about vectors.
    t = await createTestApp({
      embedder: providerA,
      env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off', ENGRAM_GRAPH: 'off' },
    })
    keyOne = await createAgentKey(t, 'agent-e1')
    keyTwo = await createAgentKey(t, 'agent-e2')
  })
  afterAll(() => t.close())

  it('treats a provider without embedOne as remote', () => {
    expect(t.app.services.embeddings.isLocal).toBe(false)
    expect(t.app.services.embeddings.model).toBe('test-remote-a')
  })

  it("stores each vector with its model id and dimensions, and caches it by the text's hash", async () => {
    const written = await write(BEES, keyOne)
    expect(written.outcome).toBe('STORED')
    ids.bees = written.memory.id
    const rows = await t.db.embedding.findMany({ where: { agentId: 'agent-e1' } })
    expect(rows.map(({ vector: _vector, createdAt: _createdAt, ...row }) => row)).toEqual([
      {
        kind: 'memory',
        ownerId: Number(ids.bees),
        agentId: 'agent-e1',
        model: 'test-remote-a',
        dimensions: 64,
        contentHash: contentHash(BEES),
      },
    ])
    expect(rows[0]?.vector.byteLength).toBe(64 * 4)
    expect([...bytesToVector(rows[0]?.vector as Uint8Array)]).toEqual([...providerA.vectorOf(BEES)])
    expect(rows[0]?.createdAt.toISOString()).toBe(t.clock.now().toISOString())
    const cached = await t.db.embeddingCache.findMany({ where: { contentHash: contentHash(BEES) } })
    expect(cached.map((c) => [c.model, c.dimensions])).toEqual([['test-remote-a', 64]])
  })

  it('embeds a text once per agent: agents do not share cached vectors', async () => {
    // A shared cache would tell an agent, by how fast its write returns, that another agent wrote
    // the same text, and would keep vectors of an agent's texts after the agent is deleted.
    expect(providerA.timesAsked(BEES)).toBe(1)
    const written = await write(BEES, keyTwo)
    expect(written.outcome).toBe('STORED')
    ids.beesTwo = written.memory.id
    expect(providerA.timesAsked(BEES)).toBe(2)
    const rows = await t.db.embedding.findMany({
      where: { contentHash: contentHash(BEES) },
      orderBy: { agentId: 'asc' },
    })
    expect(rows.map((r) => [r.agentId, r.ownerId])).toEqual([
      ['agent-e1', Number(ids.bees)],
      ['agent-e2', Number(ids.beesTwo)],
    ])
    expect(Buffer.from(rows[0]?.vector as Uint8Array)).toEqual(Buffer.from(rows[1]?.vector as Uint8Array))
    const cached = await t.db.embeddingCache.findMany({
      where: { contentHash: contentHash(BEES) },
      orderBy: { agentId: 'asc' },
    })
    expect(cached.map((c) => c.agentId)).toEqual(['agent-e1', 'agent-e2'])
  })

  it('stores a memory whose embedding fails, without a vector', async () => {
    providerA.failing = true
    const written = await write(HIVE, keyOne)
    expect(written.outcome).toBe('STORED')
    ids.hive = written.memory.id
    expect(providerA.timesAsked(HIVE)).toBe(1)
    // The write queued an embed job; the worker's run fails too while the provider is down, and
    // the job waits for its retry.
    expect(await t.app.services.jobs.drain()).toBe(1)
    expect(providerA.timesAsked(HIVE)).toBe(2)
    const [job] = await t.db.job.findMany({ where: { agentId: 'agent-e1', kind: 'embed' } })
    expect(job).toMatchObject({ state: 'pending', attempts: 1, lastError: 'test-remote-a is unavailable' })
    expect(await t.db.memoryItem.count({ where: { id: Number(ids.hive) } })).toBe(1)
    expect(await t.db.embedding.count({ where: { kind: 'memory', ownerId: Number(ids.hive) } })).toBe(0)
    expect(await t.db.embeddingCache.count({ where: { contentHash: contentHash(HIVE) } })).toBe(0)
    const stats = await t.gql(STATS, {}, keyOne)
    expect(stats.data.memoryStats).toMatchObject({ embedded: 1, embeddingCoverage: 0.5 })
  })

  it('searches by keywords while the vectors are missing', async () => {
    const r = await t.gql(SEARCH, { q: 'hive Sunday' }, keyOne)
    expect(r.data.search.hits).toHaveLength(1)
    const [hit] = r.data.search.hits
    expect(hit).toMatchObject({ id: ids.hive, text: HIVE, components: { vector: 0 } })
    expect(hit.components.bm25).toBeGreaterThan(0)
  })

  it('gives the memory its vector once the provider works again', async () => {
    providerA.failing = false
    expect(await t.app.services.embeddings.fill('agent-e1', 'memory')).toBe(1)
    await t.app.services.embeddings.settled()
    const row = await t.db.embedding.findFirst({ where: { kind: 'memory', ownerId: Number(ids.hive) } })
    expect(row).toMatchObject({ model: 'test-remote-a', dimensions: 64, agentId: 'agent-e1' })
    expect([...bytesToVector(row?.vector as Uint8Array)]).toEqual([...providerA.vectorOf(HIVE)])
    const stats = await t.gql(STATS, {}, keyOne)
    expect(stats.data.memoryStats).toMatchObject({ embedded: 2, embeddingCoverage: 1 })
    // The same search now has the vector side too.
    const [hit] = (await t.gql(SEARCH, { q: HIVE }, keyOne)).data.search.hits
    expect(hit.id).toBe(ids.hive)
    expect(hit.components.bm25).toBeGreaterThan(0)
    expect(hit.components.vector).toBeGreaterThan(0)
  })

  it('fills what a write could not embed through the job queue, once the provider is back', async () => {
    providerA.failing = true
    const written = await write('Swarming season starts in May', keyTwo)
    expect(written.outcome).toBe('STORED')
    const where = { ownerId: Number(written.memory.id), kind: 'memory' }
    await t.app.services.jobs.drain()
    expect(await t.db.embedding.count({ where })).toBe(0)
    providerA.failing = false
    // A search runs the agent's due embed jobs first; this one waits for its retry (backoff)...
    const asked = providerA.timesAsked('Swarming season starts in May')
    await t.gql(SEARCH, { q: 'swarming' }, keyTwo)
    expect(providerA.timesAsked('Swarming season starts in May')).toBe(asked)
    expect(await t.db.embedding.count({ where })).toBe(0)
    // ...and is embedded by the first search after it.
    t.clock.advance(t.app.services.jobs.policy('embed')?.backoffBaseMs as number)
    const [hit] = (await t.gql(SEARCH, { q: 'swarming' }, keyTwo)).data.search.hits
    expect(await t.db.embedding.count({ where })).toBe(1)
    expect(hit.components.vector).toBeGreaterThan(0)
    expect(await t.db.job.count({ where: { agentId: 'agent-e2', kind: 'embed' } })).toBe(0)
  })

  describe('after the provider changes', () => {
    let t2: TestApp
    const providerB = new RemoteTestEmbedder('test-remote-b', 32)
    const texts: string[] = []
    /** Agent and text of every owner: each agent's texts are embedded for it. */
    const owned = new Set<string>()

    beforeAll(async () => {
      // Other kinds too: messages and knowledge are embedded again like memories.
      await t.gql(
        `mutation { addMessage(input: { conversationId: "c1", role: USER, content: "Do bees sleep at night?" }) { __typename } }`,
        {},
        keyOne,
      )
      await t.gql(
        `mutation { storeKnowledge(input: { category: DOMAIN, key: "apiary", value: "a place where bees are kept" }) { __typename } }`,
        {},
        keyTwo,
      )
      // A conversation summary (issue 13 §3): summaries are embedded, and re-embedded, like the rest.
      expect(await t.app.services.summaries.summarize('agent-e1', 'c1')).not.toBeNull()
      await t.app.services.embeddings.fill('agent-e1', 'summary')
      expect(await t.db.embedding.count({ where: { kind: 'summary', model: 'test-remote-a' } })).toBe(1)
      await t.app.services.embeddings.settled()
      const owners = [
        ...(await t.db.memoryItem.findMany()).map((m) => [m.agentId, m.content]),
        ...(await t.db.message.findMany()).map((m) => [m.agentId, m.content]),
        ...(await t.db.knowledge.findMany()).map((k) => [k.agentId, `${k.key}: ${k.value}`]),
        ...(await t.db.summary.findMany()).map((s) => [s.agentId, s.content]),
      ]
      texts.push(...owners.map(([, text]) => text as string))
      for (const [agentId, text] of owners) owned.add(`${agentId}\u0000${text}`)
      // A second server on the same database, configured with another provider.
      t2 = await createTestApp({
        sameStoreAs: t,
        embedder: providerB,
        clock: t.clock,
        env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off', ENGRAM_GRAPH: 'off' },
      })
    })
    afterAll(() => t2.close())

    it('starts with no vectors of the new model: search falls back to keywords', async () => {
      expect(await t2.db.embedding.count({ where: { model: 'test-remote-b' } })).toBe(0)
      const stats = await t2.gql(STATS, { a: 'agent-e1' })
      expect(stats.data.memoryStats).toMatchObject({ embeddingModel: 'test-remote-b', embedded: 0 })
    })

    it('re-embeds everything in the background, reporting progress, and drops the old vectors', async () => {
      const events: EmbeddingProgressEvent[] = []
      const iterator = t2.app.services.pubsub.subscribe('embedding:progress')[Symbol.asyncIterator]()
      const collecting = (async () => {
        for (;;) {
          const next = await iterator.next()
          if (next.done) return
          events.push(next.value)
          if (next.value.state === 'done' || next.value.state === 'failed') return
        }
      })()

      const started = await t2.gql(
        `mutation { reembed { __typename ... on EmbeddingProgress { ${PROGRESS_FIELDS} } } }`,
      )
      expect(started.errors).toBeUndefined()
      expect(started.data.reembed).toMatchObject({
        __typename: 'EmbeddingProgress',
        model: 'test-remote-b',
        state: 'RUNNING',
      })
      await t2.app.services.embeddings.settled()
      await collecting
      await iterator.return?.()

      const total = texts.length
      expect(total).toBe(7)
      const last = events.at(-1)
      expect(last).toMatchObject({
        model: 'test-remote-b',
        state: 'done',
        total,
        done: total,
        failed: 0,
        error: null,
      })
      expect(events[0]?.state).toBe('running')
      expect(events.map((e) => e.done)).toEqual([...events.map((e) => e.done)].sort((a, b) => a - b))
      const status = await t2.gql(`{ embeddingStatus { ${PROGRESS_FIELDS} } }`)
      expect(status.data.embeddingStatus).toEqual({
        model: 'test-remote-b',
        state: 'DONE',
        total,
        done: total,
        failed: 0,
        error: null,
      })

      // Only the new model's vectors remain, one per owner, with its dimensions.
      const rows = await t2.db.embedding.findMany()
      expect(rows).toHaveLength(total)
      expect(rows.filter((r) => r.kind === 'summary')).toHaveLength(1)
      expect(new Set(rows.map((r) => `${r.model}/${r.dimensions}`))).toEqual(new Set(['test-remote-b/32']))
      // Each agent's distinct texts were asked for once (agents do not share cached vectors).
      expect([...providerB.texts].sort()).toEqual([...owned].map((o) => o.split('\u0000')[1]).sort())
      for (const agentId of ['agent-e1', 'agent-e2']) {
        const stats = await t2.gql(STATS, { a: agentId })
        expect(stats.data.memoryStats.embeddingModel).toBe('test-remote-b')
        expect(stats.data.memoryStats.embeddingCoverage).toBe(1)
        for (const c of stats.data.memoryStats.coverage) expect(c.embedded).toBe(c.total)
      }
    })

    it('pushes progress to embeddingProgress subscribers (admin), refuses agent keys', async () => {
      const subscribe = (key: string) =>
        t2.app.yoga.fetch('http://yoga/graphql', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            authorization: `Bearer ${key}`,
          },
          body: JSON.stringify({ query: `subscription { embeddingProgress { ${PROGRESS_FIELDS} } }` }),
        })
      const refused = await (await subscribe(keyOne)).text()
      const refusal = refused.split('\n').find((line) => line.startsWith('data: {'))
      expect(JSON.parse(refusal?.slice(5) ?? 'null')).toEqual({
        errors: [
          {
            message: 'embedding progress is for operators',
            path: ['embeddingProgress'],
            extensions: { code: 'FORBIDDEN' },
          },
        ],
      })

      const response = await subscribe(ADMIN_KEY)
      const reader = (response.body as ReadableStream<Uint8Array>).getReader()
      const received: any[] = []
      let buffer = ''
      const reading = (async () => {
        for (;;) {
          const chunk = await reader.read()
          if (chunk.done) return
          buffer += new TextDecoder().decode(chunk.value)
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const data = buffer
              .slice(0, end)
              .split('\n')
              .find((line) => line.startsWith('data:'))
            buffer = buffer.slice(end + 2)
            if (data) received.push(JSON.parse(data.slice(5)).data?.embeddingProgress)
          }
        }
      })()
      // A subscription is registered a moment after it is asked for: repeat a run until one reports.
      for (let attempt = 0; attempt < 100 && !received.some((p) => p?.state === 'DONE'); attempt++) {
        t2.app.services.embeddings.reembed()
        await t2.app.services.embeddings.settled()
        for (let i = 0; i < 10 && !received.some((p) => p?.state === 'DONE'); i++)
          await new Promise((r) => setTimeout(r, 10))
      }
      await reader.cancel()
      await reading.catch(() => {})
      // Nothing was left to embed: the run is done at once.
      expect(received.filter((p) => p?.state === 'DONE').at(-1)).toEqual({
        model: 'test-remote-b',
        state: 'DONE',
        total: 0,
        done: 0,
        failed: 0,
        error: null,
      })
    })
  })

  describe('a re-embedding with many failures', () => {
    let t3: TestApp
    const providerC = new RemoteTestEmbedder('test-remote-c', 8)

    beforeAll(async () => {
      t3 = await createTestApp({
        embedder: providerC,
        env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off', ENGRAM_GRAPH: 'off' },
      })
      await createAgentKey(t3, 'agent-good')
      await createAgentKey(t3, 'agent-bad')
      const now = t3.clock.now()
      const rows = (agentId: string, prefix: string, count: number) =>
        Array.from({ length: count }, (_, i) => {
          const content = `${prefix} ${i}`
          return {
            agentId,
            content,
            category: 'fact',
            contentHash: contentHash(content),
            tokenCount: 3,
            validFrom: now,
            createdAt: now,
            updatedAt: now,
          }
        })
      // Good rows before and after more failing rows than one page of the run holds (1024).
      await t3.db.memoryItem.createMany({ data: rows('agent-good', 'early note', 10) })
      await t3.db.memoryItem.createMany({ data: rows('agent-bad', 'unembeddable note', 1030) })
      await t3.db.memoryItem.createMany({ data: rows('agent-good', 'late note', 10) })
    })
    afterAll(() => t3.close())

    it('still reaches the rows after the failures, and reports the failures', async () => {
      t3.app.services.embeddings.reembed()
      await t3.app.services.embeddings.settled()
      expect(t3.app.services.embeddings.progress).toMatchObject({
        state: 'failed',
        total: 1050,
        done: 20,
        failed: 1030,
        error: '1030 texts could not be embedded; they will be retried',
      })
      const stats = await t3.gql(STATS, { a: 'agent-good' })
      expect(stats.data.memoryStats).toMatchObject({ embedded: 20, embeddingCoverage: 1 })
      expect(await t3.db.embedding.count({ where: { agentId: 'agent-bad' } })).toBe(0)
    })
  })
})
