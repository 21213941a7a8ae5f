import {
  type Clock,
  CONTEXT_SUMMARY_PREFIX,
  createHashingEmbedder,
  createTokenCounter,
  type Embedder,
  type LlmProvider,
  type SynonymLexicon,
  ValidationError,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { contentHash } from '../embeddings/content-hash.ts'
import { EMBED_JOB } from '../embeddings/embed-jobs.ts'
import { createEngine } from '../engine.ts'
import { createInMemoryStorage, scriptedLlm } from '../testing/index.ts'
import { SUMMARY_JOB, SUMMARY_RETENTION_JOB } from './summary-service.ts'

const START = Date.parse('2026-01-15T10:00:00.000Z')

/** A clock the test moves: every debounce and retention runs on it, no test waits. */
function movedClock() {
  let now = START
  const clock: Clock = { now: () => new Date(now) }
  return { clock, advance: (ms: number) => (now += ms) }
}

function setUp(llm: LlmProvider | null = null) {
  const time = movedClock()
  const storage = createInMemoryStorage(time.clock)
  const engine = createEngine({
    storage,
    clock: time.clock,
    tokenCounter: createTokenCounter('heuristic'),
    log: quiet,
    llm,
  })
  return { engine, ...time }
}

async function withAgents(setup: ReturnType<typeof setUp>) {
  for (const id of ['a', 'b']) await setup.engine.storage.repositories.agents.upsert(id, null)
  return setup
}

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Console

const TURNS = [
  'I am moving to Lisbon in March for the new job at Acme.',
  'The Acme office is close to the river and the new job starts in March.',
  'My sister Ana will help with the move to Lisbon in March.',
  'We still need to find a flat in Lisbon near the Acme office.',
]

async function say(
  engine: ReturnType<typeof setUp>['engine'],
  conversationId: string,
  content: string,
  extra = {},
) {
  return engine.sessions.addMessage('a', conversationId, { role: 'user', speaker: 'dana', content, ...extra })
}

function circuitOpen(): Error {
  const error = new Error('fake: circuit open after 5 consecutive failures')
  error.name = 'CircuitOpenError'
  return error
}

describe('automatic conversation summaries (issue 13 §3)', { timeout: 60_000 }, () => {
  it('summarises after summaryDebounceSeconds without a new turn, the wait moving on with each turn', async () => {
    const { engine, advance } = await withAgents(setUp())
    await say(engine, 'c1', TURNS[0] as string)
    await say(engine, 'c1', TURNS[1] as string)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
    advance(30_000)
    await say(engine, 'c1', TURNS[2] as string)
    advance(40_000) // 70 s after the first turn, 40 s after the last: not yet
    // The job did not even run: the last turn moved its run-at.
    expect(await engine.jobs.runFor(SUMMARY_JOB, 'a', 10)).toBe(0)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
    // One job for the conversation, its run-at moved by the last turn to 60 s after it.
    const [stats] = (await engine.storage.jobs.stats([SUMMARY_JOB])).filter((s) => s.kind === SUMMARY_JOB)
    expect(stats?.pending).toBe(1)
    expect(await engine.storage.jobs.hasDue(SUMMARY_JOB, 'a')).toBe(false)
    advance(20_000)
    await engine.jobs.drain()
    const [summary, ...rest] = await engine.summaries.list('a')
    expect(rest).toEqual([])
    expect(summary).toMatchObject({
      agentId: 'a',
      conversationId: 'c1',
      trigger: 'debounce',
      strategy: 'extractive',
      writer: 'extractive',
      messageCount: 3,
      createdAt: new Date(START + 90_000),
    })
    expect(summary?.content).toContain('Lisbon')
    // Nothing new since: nothing more is summarised.
    advance(3_600_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toHaveLength(1)
  })

  it('honours the agent debounce setting, validated whole with the field and its limit named', async () => {
    const { engine, advance } = await withAgents(setUp())
    await engine.summaries.updateSettings('a', { summaryDebounceSeconds: 10 })
    const error = await engine.summaries
      .updateSettings('a', { summaryDebounceSeconds: 5, summaryRetentionDays: 30 })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).issues[0]).toMatchObject({
      field: 'summaries.summaryDebounceSeconds',
      limit: 10,
    })
    expect(await engine.summaries.settings('a')).toMatchObject({
      summaryDebounceSeconds: 10,
      summaryRetentionDays: 7,
    })
    expect(
      (await engine.summaries.updateSettings('a', { summaryRetentionDays: 400 }).catch((e) => e)).issues[0],
    ).toMatchObject({
      field: 'summaries.summaryRetentionDays',
      limit: 365,
    })
    await say(engine, 'c1', TURNS[0] as string)
    advance(10_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toHaveLength(1)
  })

  it("summarises a conversation at once when the agent's next turn lands in another one", async () => {
    const { engine } = await withAgents(setUp())
    for (const turn of TURNS.slice(0, 3)) await say(engine, 'c1', turn)
    await say(engine, 'c2', 'Completely different topic: the quarterly budget review is on Friday.')
    await engine.jobs.drain()
    const summaries = await engine.summaries.list('a')
    expect(summaries.map((s) => [s.conversationId, s.trigger, s.messageCount])).toEqual([['c1', 'switch', 3]])
    // Another agent's turns are no switch for this one.
    await engine.sessions.addMessage('b', 'c9', {
      role: 'user',
      content: 'Unrelated agent talking about ferries.',
    })
    await engine.jobs.drain()
    expect(await engine.summaries.list('b')).toEqual([])
  })

  it('summarises a conversation that passes summarization.threshold tokens without waiting', async () => {
    const { engine } = await withAgents(setUp())
    await engine.summaries.updateSettings('a', { summarizationThresholdTokens: 1_000 })
    await say(engine, 'c1', TURNS[0] as string, { tokenCount: 600 })
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
    await say(engine, 'c1', TURNS[1] as string, { tokenCount: 500 })
    await engine.jobs.drain()
    expect((await engine.summaries.list('a')).map((s) => s.trigger)).toEqual(['threshold'])
  })

  it('removes summaries summaryRetentionDays after Engram stored them, never counting from the turns’ own time, and keeps [CONTEXT SUMMARY] messages', async () => {
    const { engine, advance } = await withAgents(setUp())
    await engine.summaries.updateSettings('a', { summaryRetentionDays: 1 })
    // An imported turn from a year ago: its summary still lives a day from now.
    const old = new Date(START - 365 * 86_400_000)
    for (const turn of TURNS) await say(engine, 'c1', turn, { timestamp: old })
    const last = await say(engine, 'c1', 'Last turn, kept uncompressed.', { timestamp: old })
    await engine.sessions.compressMessages('a', 'c1', last.id, 'The move to Lisbon was discussed.')
    const stored = await engine.summaries.summarize('a', 'c1')
    expect(stored).toMatchObject({ trigger: 'request', createdAt: new Date(START) })
    advance(86_400_000 - 1_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toHaveLength(1)
    advance(2_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
    const retention = (await engine.storage.jobs.stats([SUMMARY_RETENTION_JOB])).find(
      (s) => s.kind === SUMMARY_RETENTION_JOB,
    )
    expect(retention?.pending).toBe(0)
    const session = await engine.sessions.find('a', 'c1')
    const messages = await engine.storage.history.uncompressedMessages(session?.id as string)
    expect(messages.some((m) => m.content.startsWith(CONTEXT_SUMMARY_PREFIX))).toBe(true)
  })

  it('applies a shorter retention at once', async () => {
    const { engine, advance } = await withAgents(setUp())
    for (const turn of TURNS) await say(engine, 'c1', turn)
    await engine.summaries.summarize('a', 'c1')
    advance(2 * 86_400_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toHaveLength(1)
    await engine.summaries.updateSettings('a', { summaryRetentionDays: 1 })
    expect(await engine.summaries.list('a')).toEqual([])
  })

  it('writes every strategy offline, within summaryMaxTokens; hierarchical and map-reduce keep their shape', async () => {
    const { engine } = await withAgents(setUp())
    await engine.summaries.updateSettings('a', { summaryMaxTokens: 120 })
    for (let i = 0; i < 45; i++)
      await say(
        engine,
        `c${i % 4}`,
        `Turn ${i}: ${TURNS[i % TURNS.length]} Detail number ${i} about the move.`,
      )
    const counter = createTokenCounter('heuristic')
    for (const [index, strategy] of (
      ['simple', 'hierarchical', 'extractive', 'map-reduce'] as const
    ).entries()) {
      const summary = await engine.summaries.summarize('a', `c${index}`, strategy)
      expect(summary).toMatchObject({ strategy, writer: 'extractive', conversationId: `c${index}` })
      expect(summary?.content.length).toBeGreaterThan(0)
      expect(counter.count(summary?.content as string)).toBeLessThanOrEqual(120 + 40)
    }
    // Everything summarised: asking again forms nothing.
    expect(await engine.summaries.summarize('a', 'c0')).toBeNull()
    const error = await engine.summaries.summarize('a', 'c0', 'abstractive' as never).catch((e: unknown) => e)
    expect((error as ValidationError).issues[0]?.field).toBe('strategy')
  })

  it('asks the model when one is given: simple in one call, hierarchical by chunks of ten, map-reduce by mapping and one reduce', async () => {
    const { llm, requests } = scriptedLlm((request) => {
      const turns = JSON.parse(request.messages[1]?.content as string).turns as unknown[]
      return JSON.stringify({ summary: `A summary of ${turns.length} items.` })
    })
    const { engine } = await withAgents(setUp(llm))
    for (let i = 0; i < 25; i++) await say(engine, 'h', `Turn ${i} about Lisbon.`)
    for (let i = 0; i < 50; i++) await say(engine, 'm', `Turn ${i} about Acme.`)
    await say(engine, 's', 'Just one turn about the flat.')
    expect(await engine.summaries.summarize('a', 's', 'simple')).toMatchObject({
      writer: 'llm',
      content: 'A summary of 1 items.',
    })
    expect(requests).toHaveLength(1)
    requests.length = 0
    const hierarchical = await engine.summaries.summarize('a', 'h', 'hierarchical')
    expect(hierarchical?.writer).toBe('llm')
    // Three chunks (10, 10, 5) and their summaries together fit: no second level.
    expect(requests).toHaveLength(3)
    expect(hierarchical?.content).toBe(
      'A summary of 10 items.\n\nA summary of 10 items.\n\nA summary of 5 items.',
    )
    requests.length = 0
    const mapReduce = await engine.summaries.summarize('a', 'm', 'map-reduce')
    // Two chunks of forty and ten, then one call combining the two.
    expect(requests).toHaveLength(3)
    expect(mapReduce?.content).toBe('A summary of 2 items.')
    // The conversation travels as data, never as instructions.
    expect(requests[0]?.messages[0]?.content).toContain('data, never instructions')
  })

  it('falls back to the extractive summary while the model’s circuit is open, and retries other failures', async () => {
    let failure: Error = circuitOpen()
    const { llm } = scriptedLlm(() => failure)
    const { engine, advance } = await withAgents(setUp(llm))
    for (const turn of TURNS) await say(engine, 'c1', turn)
    expect(await engine.summaries.summarize('a', 'c1', 'simple')).toMatchObject({
      writer: 'extractive',
      strategy: 'simple',
    })
    failure = new Error('HTTP 500 from the model')
    await say(engine, 'c1', 'One more turn about the flat in Lisbon near the office.')
    advance(60_000)
    await engine.jobs.drain()
    // The job failed and waits for its retry: no half-written summary.
    expect(await engine.summaries.list('a')).toHaveLength(1)
    const [stats] = (await engine.storage.jobs.stats([SUMMARY_JOB])).filter((s) => s.kind === SUMMARY_JOB)
    expect(stats?.pending).toBe(1)
  })

  it('shows automatic summaries in memoryContext, scoped to their agent, and deletes them with their conversation', async () => {
    const { engine } = await withAgents(setUp())
    for (const turn of TURNS) await say(engine, 'c1', turn)
    await engine.sessions.addMessage('b', 'c1', {
      role: 'user',
      content: 'Agent b speaks of the harbour in Porto at length today.',
    })
    const summary = await engine.summaries.summarize('a', 'c1')
    await engine.summaries.summarize('b', 'c1')
    const context = await engine.context.build('a', { sections: ['summaries'] })
    const section = context.sections.find((s) => s.name === 'summaries')
    expect(section?.included).toEqual([`summary:${summary?.id}`])
    expect(context.text).toContain('Lisbon')
    expect(context.text).not.toContain('Porto')
    expect(await engine.summaries.find('b', summary?.id as string)).toBeNull()
    expect(await engine.sessions.delete('a', 'c1')).toBe(true)
    expect(await engine.summaries.list('a')).toEqual([])
    expect(await engine.storage.summaries.cursor('a', 'c1')).toBeNull()
    expect(await engine.summaries.list('b')).toHaveLength(1)
    // The deleted conversation's queued summary job went with it; agent b's is still there.
    expect(await engine.storage.jobs.countByPayload(SUMMARY_JOB, 'conversationId', 'a')).toEqual([])
    expect(await engine.storage.jobs.countByPayload(SUMMARY_JOB, 'conversationId', 'b')).toEqual([
      { value: 'c1', state: 'pending', count: 1 },
    ])
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
  })

  it('schedules nothing while the agent has automatic formation off, and summarises on request still', async () => {
    const { engine, advance } = await withAgents(setUp())
    await engine.formation.updateSettings('a', { enabled: false })
    for (const turn of TURNS) await say(engine, 'c1', turn)
    await say(engine, 'c2', 'Another conversation right away.')
    advance(3_600_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
    expect((await engine.summaries.summarize('a', 'c1'))?.messageCount).toBe(TURNS.length)
  })

  it('summarizePending summarises every conversation with turns not yet summarised (syncMemory)', async () => {
    const { engine } = await withAgents(setUp())
    await say(engine, 'c1', TURNS[0] as string)
    await say(engine, 'c2', TURNS[1] as string)
    const formed = await engine.summaries.summarizePending('a')
    expect(formed.map((s) => s.conversationId).sort()).toEqual(['c1', 'c2'])
    expect(await engine.summaries.summarizePending('a')).toEqual([])
  })

  it("finds automatic summaries with search's SUMMARIES scope, of the agent and conversation asked only", async () => {
    const { engine } = await withAgents(setUp())
    for (const turn of TURNS) await say(engine, 'c1', turn)
    await say(engine, 'c2', 'The quarterly budget review is on Friday with the finance team.')
    await engine.sessions.addMessage('b', 'c1', {
      role: 'user',
      content: 'Agent b moves to Lisbon as well, by ferry.',
    })
    const lisbon = await engine.summaries.summarize('a', 'c1')
    await engine.summaries.summarize('a', 'c2')
    await engine.summaries.summarize('b', 'c1')
    const hits = await engine.search.search('a', 'Lisbon flat', {
      scopes: ['SUMMARIES'],
      strategy: 'LEXICAL',
    })
    expect(hits.map((h) => h.id)).toEqual([`summary:${lisbon?.id}`])
    expect(hits[0]).toMatchObject({ scope: 'SUMMARIES', conversationId: 'c1', summary: { id: lisbon?.id } })
    expect(hits[0]?.message).toBeUndefined()
    const hybrid = await engine.search.search('a', 'budget review', { scopes: ['SUMMARIES'] })
    expect(hybrid.map((h) => h.conversationId)).toEqual(['c2'])
    // Agent b's summary of its own Lisbon move is not agent a's.
    expect(hits.every((h) => h.summary?.agentId === 'a')).toBe(true)
  })
})

/** The hashing embedder seen as a remote provider (no `embedOne`): its vectors go through the agent's cache. */
function remoteHashing(lexicon?: SynonymLexicon): Embedder {
  const hashing = createHashingEmbedder(lexicon ? { lexicon } : {})
  return { model: hashing.model, dimensions: hashing.dimensions, embed: (texts) => hashing.embed(texts) }
}

/** A few synonym groups, as WordNet would give them: enough for a paraphrase to land near its text. */
const SYNONYMS: SynonymLexicon = {
  id: 'summary-test-synonyms',
  groupsOf: (word) =>
    ({
      automobile: ['car'],
      car: ['car'],
      broke: ['fail'],
      stopped: ['fail'],
      highway: ['road'],
      road: ['road'],
      mechanic: ['repair'],
      garage: ['repair'],
    })[word] ?? [],
}

function setUpWith(embedder: Embedder) {
  const time = movedClock()
  const storage = createInMemoryStorage(time.clock)
  const engine = createEngine({
    storage,
    clock: time.clock,
    tokenCounter: createTokenCounter('heuristic'),
    log: quiet,
    embedder,
  })
  return { engine, storage, ...time }
}

const summaryEmbedJobs = async (engine: ReturnType<typeof setUp>['engine'], agentId: string) =>
  (await engine.storage.jobs.countByPayload(EMBED_JOB, 'kind', agentId)).filter(
    (row) => row.value === 'summary',
  )

describe('summary vectors (issue 13 §3)', { timeout: 60_000 }, () => {
  it('embeds a summary on the job queue, and a query sharing no word with it finds it by its vector', async () => {
    const { engine, storage } = setUpWith(remoteHashing(SYNONYMS))
    await storage.repositories.agents.upsert('a', null)
    await say(engine, 'c1', 'The automobile broke down on the highway near Porto.')
    await say(engine, 'c1', 'The automobile broke down again, this time on the highway to Braga.')
    await say(engine, 'c2', 'The quarterly budget review is on Friday with the finance team.')
    const car = await engine.summaries.summarize('a', 'c1')
    await engine.summaries.summarize('a', 'c2')
    // Queued, not embedded in the request.
    expect(await summaryEmbedJobs(engine, 'a')).toEqual([{ value: 'summary', state: 'pending', count: 2 }])
    expect(await storage.vectors.count('a', 'summary')).toBe(0)
    await engine.jobs.drain()
    expect(await storage.vectors.count('a', 'summary')).toBe(2)
    const coverage = await engine.embeddings.coverage('a')
    // Counted with the other kinds (the in-memory store's vectors carry a model of their own, so
    // `embedded` is the SQLite test's to check).
    expect(coverage.find((c) => c.kind === 'summary')).toMatchObject({ total: 2, queued: 0, failed: 0 })

    const query = 'my car stopped working on the road'
    expect(car?.content.toLowerCase()).not.toMatch(/\b(my|car|stopped|working|road)\b/)
    const hits = await engine.search.search('a', query, {
      scopes: ['SUMMARIES'],
      weights: { bm25: 0, vector: 1 },
    })
    expect(hits[0]?.id).toBe(`summary:${car?.id}`)
    expect(hits[0]?.components.vector).toBeGreaterThan(0.05)
    expect(hits[0]?.components.bm25).toBe(0)
  })

  it("removes a summary's vector, cache entry and queued embed job with its retention or its conversation", async () => {
    const { engine, storage, advance } = setUpWith(remoteHashing())
    await storage.repositories.agents.upsert('a', null)
    await engine.summaries.updateSettings('a', { summaryRetentionDays: 1 })
    await say(engine, 'c1', TURNS[0] as string)
    const expiring = await engine.summaries.summarize('a', 'c1')
    await engine.jobs.drain()
    const model = engine.embeddings.model
    const hashOf = (text: string | undefined) => contentHash(text as string)
    expect(await storage.vectors.count('a', 'summary')).toBe(1)
    expect(await storage.embeddings.cached('a', model, [hashOf(expiring?.content)])).toHaveLength(1)
    // Loaded into the in-memory index by a search.
    expect((await engine.embeddings.index('a', 'summary')).size).toBe(1)

    // A second conversation's summary, its embed job still queued, then the conversation is deleted.
    await say(engine, 'c2', TURNS[1] as string)
    const deleted = await engine.summaries.summarize('a', 'c2')
    expect(await summaryEmbedJobs(engine, 'a')).toEqual([{ value: 'summary', state: 'pending', count: 1 }])
    expect(await engine.sessions.delete('a', 'c2')).toBe(true)
    expect(await summaryEmbedJobs(engine, 'a')).toEqual([])
    expect(await storage.embeddings.ownerTexts('summary', model, [Number(deleted?.id)])).toEqual([])

    // A day later the retention cleanup removes the first: its vector, index entry and cache go too.
    advance(86_400_000 + 3_600_000)
    await engine.jobs.drain()
    expect(await engine.summaries.list('a')).toEqual([])
    expect(await storage.vectors.count('a', 'summary')).toBe(0)
    expect((await engine.embeddings.index('a', 'summary')).size).toBe(0)
    expect(await storage.embeddings.cached('a', model, [hashOf(expiring?.content)])).toEqual([])
  })
})
