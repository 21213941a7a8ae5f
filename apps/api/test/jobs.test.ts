import { createHash } from 'node:crypto'
import fs from 'node:fs'
import type { Embedder, Job } from '@engram/core'
import { EMBED_JOB } from '@engram/engine'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, ManualClock, type TestApp } from './helpers.ts'

/**
 * A remote-style provider (no embedOne): the service embeds through the job queue. It counts its
 * calls and fails while told to.
 */
class CountingEmbedder implements Embedder {
  readonly model = 'test-jobs-remote'
  readonly dimensions = 32
  readonly calls: string[][] = []
  failing = false

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls.push([...texts])
    if (this.failing) throw new Error('provider is down')
    return texts.map((text) => {
      const vector = new Float32Array(this.dimensions)
      for (let i = 0; i < this.dimensions; i++)
        vector[i] = (createHash('sha256').update(`${i}/${text}`).digest()[0] as number) / 127.5 - 1
      return vector
    })
  }

  asked(text: string): number {
    return this.calls.flat().filter((t) => t === text).length
  }
}

const ADD = `mutation($c: String!, $conv: String!) {
  addMessage(input: { conversationId: $conv, role: USER, content: $c }) {
    __typename ... on Message { id } ... on Error { message }
  }
}`
const ADD_MANY = `mutation($m: [MessageInput!]!) {
  addMessages(input: { conversationId: "batch", messages: $m }) { __typename ... on Error { message } }
}`
const SEARCH_MESSAGES = `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES] }) {
  ... on SearchResult { hits { id text components { bm25 vector } } }
} }`
const STATS = `{ jobQueueStats { kind pending running failed oldestPendingAgeMs } }`
const COVERAGE = `query($a: ID) { memoryStats(agentId: $a) { ... on MemoryStats { coverage { kind total embedded queued failed } } } }`

async function addMessage(t: TestApp, key: string, content: string, conv = 'c1'): Promise<number> {
  const r = await t.gql(ADD, { c: content, conv }, key)
  expect(r.data.addMessage.__typename).toBe('Message')
  return Number(r.data.addMessage.id)
}

const messageVectors = (t: TestApp, ownerId: number) =>
  t.db.embedding.count({ where: { kind: 'message', ownerId } })

describe('embed on write, through the durable job queue', () => {
  let t: TestApp
  let key: string
  let other: string
  const provider = new CountingEmbedder()

  beforeAll(async () => {
    // These count embed jobs one by one: memory formation's extract jobs, automatic summaries and
    // profile rebuilds (tested in formation.test.ts, summaries-profile.test.ts and with deletion
    // below) stay out of their way.
    t = await createTestApp({
      embedder: provider,
      env: { ENGRAM_EXTRACTION: 'off', ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off' },
    })
    key = await createAgentKey(t, 'agent-jobs')
    other = await createAgentKey(t, 'agent-jobs-other')
  })
  afterAll(() => t.close())
  afterEach(() => {
    provider.failing = false
  })

  it('queues an embed job with the message and embeds it once the worker runs, not in the request', async () => {
    const id = await addMessage(t, key, 'The staging cluster runs on port 8443')
    // The request stored the message and its job; the provider was not called.
    expect(provider.asked('The staging cluster runs on port 8443')).toBe(0)
    expect(await messageVectors(t, id)).toBe(0)
    expect(await t.db.job.findMany({ where: { agentId: 'agent-jobs' } })).toMatchObject([
      { kind: EMBED_JOB, key: `message:${id}`, state: 'pending', attempts: 0 },
    ])
    // The coverage the dashboard shows says where the missing vector is: queued.
    const messageCoverage = async () =>
      (await t.gql(COVERAGE, { a: 'agent-jobs' })).data.memoryStats.coverage.find(
        (c: { kind: string }) => c.kind === 'message',
      )
    expect(await messageCoverage()).toEqual({ kind: 'message', total: 1, embedded: 0, queued: 1, failed: 0 })
    // Depth and lag, on the engine's clock.
    t.clock.advance(1_500)
    expect((await t.gql(STATS)).data.jobQueueStats).toEqual([
      { kind: 'embed', pending: 1, running: 0, failed: 0, oldestPendingAgeMs: 1_500 },
      // Every registered kind is listed, with nothing queued (formation is off here).
      { kind: 'extract', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'graph', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'profile', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'summarize', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'summary-retention', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
    ])
    expect(await t.app.services.jobs.drain()).toBe(1)
    expect(await messageVectors(t, id)).toBe(1)
    expect(provider.asked('The staging cluster runs on port 8443')).toBe(1)
    expect((await t.gql(STATS)).data.jobQueueStats).toEqual([
      { kind: 'embed', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      // Every registered kind is listed, with nothing queued (formation is off here).
      { kind: 'extract', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'graph', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'profile', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'summarize', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'summary-retention', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
    ])
    expect(await messageCoverage()).toEqual({ kind: 'message', total: 1, embedded: 1, queued: 0, failed: 0 })
  })

  it('embeds a batch of messages, of several agents, in one provider call', async () => {
    const texts = ['alpha deploy notes', 'beta rollback plan', 'gamma on-call rota', 'delta runbook']
    const r = await t.gql(ADD_MANY, { m: texts.map((content) => ({ role: 'USER', content })) }, key)
    expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
    await addMessage(t, other, 'epsilon belongs to another agent')
    const before = provider.calls.length
    expect(await t.app.services.jobs.drain()).toBe(5)
    expect(provider.calls.slice(before)).toEqual([[...texts, 'epsilon belongs to another agent']])
  })

  it('lets a search embed what its agent still has queued, and only that agent', async () => {
    const mine = await addMessage(t, key, 'The VPN gateway certificate expires in March')
    const theirs = await addMessage(t, other, 'Their VPN gateway is somewhere else')
    const hits = (await t.gql(SEARCH_MESSAGES, { q: 'VPN gateway certificate' }, key)).data.search.hits
    expect(hits[0]).toMatchObject({ id: String(mine) })
    expect(hits[0].components.vector).toBeGreaterThan(0)
    expect(await messageVectors(t, mine)).toBe(1)
    // The other agent's job is left to the worker.
    expect(await messageVectors(t, theirs)).toBe(0)
    expect(await t.db.job.count({ where: { agentId: 'agent-jobs-other' } })).toBe(1)
    await t.app.services.jobs.drain()
    expect(await messageVectors(t, theirs)).toBe(1)
  })

  it('takes back a job whose worker died once its lease expires', async () => {
    const id = await addMessage(t, key, 'The worker holding this one crashed')
    // Another worker takes the job and dies before finishing it.
    const policy = t.app.services.jobs.policy(EMBED_JOB)
    const [taken] = await t.app.services.jobs.queue.claim(EMBED_JOB, 'dead-worker', {
      limit: 10,
      leaseMs: policy?.leaseMs as number,
    })
    expect(taken).toMatchObject({ key: `message:${id}`, state: 'running', leaseOwner: 'dead-worker' })
    // While the lease holds, nobody else runs it.
    expect(await t.app.services.jobs.drain()).toBe(0)
    t.clock.advance((policy?.leaseMs as number) - 1)
    expect(await t.app.services.jobs.drain()).toBe(0)
    expect(await messageVectors(t, id)).toBe(0)
    t.clock.advance(1)
    expect(await t.app.services.jobs.drain()).toBe(1)
    expect(await messageVectors(t, id)).toBe(1)
    // The dead worker's late report changes nothing: the job is no longer its own.
    await t.app.services.jobs.queue.complete([taken?.id as number], 'dead-worker')
    await t.app.services.jobs.queue.fail(taken?.id as number, 'dead-worker', 'late', null)
    expect(await t.db.job.count({ where: { agentId: 'agent-jobs' } })).toBe(0)
  })

  it('retries a failing provider with exponential backoff, then dead-letters the job', async () => {
    const policy = t.app.services.jobs.policy(EMBED_JOB)
    if (!policy) throw new Error('no embed policy')
    provider.failing = true
    const text = 'The provider is down for this one'
    const id = await addMessage(t, key, text)
    const delays: number[] = []
    expect(await t.app.services.jobs.drain()).toBe(1)
    for (let attempt = 1; attempt < policy.maxAttempts; attempt++) {
      const job = await t.db.job.findFirstOrThrow({ where: { key: `message:${id}` } })
      expect(job).toMatchObject({ state: 'pending', attempts: attempt, lastError: 'provider is down' })
      const delay = job.runAfter.getTime() - t.clock.now().getTime()
      delays.push(delay)
      // Not a moment before its time.
      t.clock.advance(delay - 1)
      expect(await t.app.services.jobs.drain()).toBe(0)
      t.clock.advance(1)
      expect(await t.app.services.jobs.drain()).toBe(1)
    }
    expect(delays).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000])
    expect(provider.asked(text)).toBe(policy.maxAttempts)
    const dead = await t.db.job.findFirstOrThrow({ where: { key: `message:${id}` } })
    expect(dead).toMatchObject({
      state: 'failed',
      attempts: policy.maxAttempts,
      lastError: 'provider is down',
    })
    t.clock.advance(policy.backoffMaxMs * 10)
    expect(await t.app.services.jobs.drain()).toBe(0)
    expect(provider.asked(text)).toBe(policy.maxAttempts)
    expect((await t.gql(STATS)).data.jobQueueStats).toEqual([
      { kind: 'embed', pending: 0, running: 0, failed: 1, oldestPendingAgeMs: 0 },
      // Every registered kind is listed, with nothing queued (formation is off here).
      { kind: 'extract', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'graph', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'profile', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'summarize', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
      { kind: 'summary-retention', pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0 },
    ])
    const failed = await t.gql(`{ failedJobs(kind: "embed") { kind agentId key attempts lastError } }`)
    expect(failed.data.failedJobs).toEqual([
      {
        kind: 'embed',
        agentId: 'agent-jobs',
        key: `message:${id}`,
        attempts: 8,
        lastError: 'provider is down',
      },
    ])
    const coverage = (await t.gql(COVERAGE, { a: 'agent-jobs' })).data.memoryStats.coverage
    expect(coverage.find((c: { kind: string }) => c.kind === 'message')).toMatchObject({
      queued: 0,
      failed: 1,
    })
    // Search still finds it, by keywords, while it has no vector.
    const hits = (await t.gql(SEARCH_MESSAGES, { q: 'provider down' }, key)).data.search.hits
    expect(hits[0]).toMatchObject({ id: String(id), components: { vector: 0 } })
    // An operator retries the dead letters once the provider is back.
    provider.failing = false
    const retried = await t.gql(
      `mutation { retryFailedJobs(kind: "embed") { __typename ... on RetryFailedJobsPayload { retried } } }`,
    )
    expect(retried.data.retryFailedJobs.retried).toBe(1)
    expect(await t.app.services.jobs.drain()).toBe(1)
    expect(await messageVectors(t, id)).toBe(1)
  })

  it('embeds knowledge and changed memories through the queue too', async () => {
    const stored = await t.gql(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "etl-subnet", value: "10.20.14.0/24" }) { __typename ... on Knowledge { id } } }`,
      {},
      key,
    )
    const knowledgeId = Number(stored.data.storeKnowledge.id)
    expect(await t.db.embedding.count({ where: { kind: 'knowledge', ownerId: knowledgeId } })).toBe(0)
    await t.app.services.jobs.drain()
    expect(await t.db.embedding.count({ where: { kind: 'knowledge', ownerId: knowledgeId } })).toBe(1)
    expect(provider.asked('etl-subnet: 10.20.14.0/24')).toBe(1)
  })
})

describe('the job queue across restarts and workers', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Stops an app as a crash would leave it: nothing drained, the database file kept. */
  async function stopKeepingFile(t: TestApp) {
    await t.app.close()
    await t.db.$disconnect()
    dirs.push(t.dir)
  }

  it('recovers pending jobs and jobs of a dead worker on a new app over the same database', async () => {
    const clock = new ManualClock()
    const provider = new CountingEmbedder()
    const first = await createTestApp({
      embedder: provider,
      clock,
      env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off' },
    })
    const key = await createAgentKey(first, 'agent-restart')
    const pending = await addMessage(first, key, 'Written just before the crash')
    const held = await addMessage(first, key, 'Being embedded during the crash', 'c2')
    // The first process's worker had taken one job when it died.
    const policy = first.app.services.jobs.policy(EMBED_JOB)
    const taken = await first.app.services.jobs.queue.claim(EMBED_JOB, first.app.services.jobs.id, {
      limit: 1,
      leaseMs: policy?.leaseMs as number,
    })
    expect(taken.map((job) => job.key)).toEqual([`message:${pending}`])
    await stopKeepingFile(first)

    const second = await createTestApp({
      sameStoreAs: first,
      embedder: provider,
      clock,
      env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off' },
    })
    try {
      // Started: the pending job runs at once; the one the dead worker held waits for its lease.
      second.app.services.jobs.start()
      await second.app.services.jobs.drain()
      expect(await messageVectors(second, held)).toBe(1)
      expect(await messageVectors(second, pending)).toBe(0)
      clock.advance(policy?.leaseMs as number)
      await second.app.services.jobs.drain()
      expect(await messageVectors(second, pending)).toBe(1)
      expect(await second.db.job.count()).toBe(0)
    } finally {
      await second.app.services.jobs.stop()
      await stopKeepingFile(second)
    }
  })

  it('never lets two workers run jobs of the same key at once', async () => {
    const clock = new ManualClock()
    const one = await createTestApp({ clock, env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off' } })
    // A second server process on the same database file: its own connection and worker.
    const two = await createTestApp({
      sameStoreAs: one,
      clock,
      env: { ENGRAM_SUMMARIES: 'off', ENGRAM_PROFILE: 'off' },
    })
    let open: () => void = () => {}
    try {
      await createAgentKey(one, 'agent-lease')
      const running = new Map<string, number>()
      const ran: string[] = []
      let overlaps = 0
      let gate: Promise<void> = Promise.resolve()
      const handler = (worker: string) => async (jobs: Job[]) => {
        for (const job of jobs) running.set(job.key, (running.get(job.key) ?? 0) + 1)
        for (const job of jobs) if ((running.get(job.key) ?? 0) > 1) overlaps++
        await gate
        // Give the other worker every chance to interleave.
        for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
        for (const job of jobs) {
          running.set(job.key, (running.get(job.key) ?? 1) - 1)
          ran.push(`${worker}:${job.payload.n}`)
        }
        return undefined
      }
      one.app.services.jobs.register('probe', handler('one'), { batchSize: 4 })
      two.app.services.jobs.register('probe', handler('two'), { batchSize: 4 })
      const queue = one.app.services.jobs.queue

      // Worker one holds key k0; worker two finds nothing it may run.
      gate = new Promise((resolve) => {
        open = resolve
      })
      await queue.enqueue([{ kind: 'probe', agentId: 'agent-lease', key: 'k0', payload: { n: 0 } }])
      const first = one.app.services.jobs.drain()
      while (running.get('k0') !== 1) await new Promise((resolve) => setImmediate(resolve))
      // A second job of k0 is queued while the first runs: it must wait for it.
      await queue.enqueue([{ kind: 'probe', agentId: 'agent-lease', key: 'k0', payload: { n: 1 } }])
      // Had it taken job 1 it would be stuck at the gate: bounded, so a broken lease fails here.
      const second = await Promise.race([
        two.app.services.jobs.drain(),
        new Promise((resolve) => setTimeout(() => resolve('stuck behind the gate'), 500)),
      ])
      expect(second).toBe(0)
      open()
      expect(await first).toBeGreaterThanOrEqual(1)
      await Promise.all([one.app.services.jobs.drain(), two.app.services.jobs.drain()])
      expect(ran.map((r) => r.split(':')[1])).toEqual(['0', '1'])

      // Many jobs over few keys, queued while both workers drain (a key's pending jobs fold into
      // one, so new ones are queued behind running ones, the case the lease is for).
      gate = Promise.resolve()
      ran.length = 0
      const drains: Promise<number>[] = []
      for (let n = 0; n < 120; n++) {
        await queue.enqueue([{ kind: 'probe', agentId: 'agent-lease', key: `k${n % 5}`, payload: { n } }])
        if (n % 3 === 0) drains.push(one.app.services.jobs.drain(), two.app.services.jobs.drain())
        await new Promise((resolve) => setImmediate(resolve))
      }
      await Promise.all(drains)
      await Promise.all([one.app.services.jobs.drain(), two.app.services.jobs.drain()])
      const byWorker = (name: string) => ran.filter((r) => r.startsWith(`${name}:`)).length
      expect(byWorker('one')).toBeGreaterThan(0)
      expect(byWorker('two')).toBeGreaterThan(0)
      expect(overlaps).toBe(0)
      expect(await one.db.job.count({ where: { kind: 'probe' } })).toBe(0)
      expect(new Set(ran.map((r) => r.split(':')[1])).size).toBe(ran.length)
    } finally {
      // A failed assertion must not leave a handler waiting at the gate (close() waits for it).
      open()
      await two.app.close()
      await two.db.$disconnect()
      await one.close()
    }
  })

  it('deletes an agent’s queued and dead-lettered jobs with the agent, and with clearAll', async () => {
    const provider = new CountingEmbedder()
    const t = await createTestApp({ embedder: provider })
    try {
      const doomed = await createAgentKey(t, 'agent-doomed')
      const kept = await createAgentKey(t, 'agent-kept')
      await addMessage(t, doomed, 'queued work of a doomed agent')
      await addMessage(t, kept, 'queued work of a kept agent')
      await t.db.job.updateMany({ where: { agentId: 'agent-doomed' }, data: { state: 'failed' } })
      await addMessage(t, doomed, 'more queued work of a doomed agent', 'c2')
      // Each message's embedding, its conversation's extraction (issue 13 §2) and summary (§3:
      // after the debounce, and at once for c when the agent moved on to c2). By state and kind:
      // a turn's jobs share one transaction, where SQLite inserts the plain ones (embed, the
      // switch's summary) together before the debounced ones, so ids do not follow kinds.
      const kinds = async (agentId: string) =>
        (await t.db.job.findMany({ where: { agentId }, orderBy: [{ state: 'asc' }, { kind: 'asc' }] })).map(
          (job) => [job.kind, job.state],
        )
      expect(await kinds('agent-doomed')).toEqual([
        ['embed', 'failed'],
        ['extract', 'failed'],
        ['summarize', 'failed'],
        ['embed', 'pending'],
        ['extract', 'pending'],
        ['summarize', 'pending'],
        ['summarize', 'pending'],
      ])
      const deleted = await t.gql(`mutation { deleteAgent(id: "agent-doomed") { __typename } }`)
      expect(deleted.errors).toBeUndefined()
      expect(await t.db.job.count({ where: { agentId: 'agent-doomed' } })).toBe(0)
      expect(await kinds('agent-kept')).toEqual([
        ['embed', 'pending'],
        ['extract', 'pending'],
        ['summarize', 'pending'],
      ])
      const cleared = await t.gql(
        `mutation { clearAll(agentId: "agent-kept", confirm: "CLEAR agent-kept") { __typename } }`,
      )
      expect(cleared.data.clearAll.__typename).toBe('ClearAllPayload')
      expect(await t.db.job.count()).toBe(0)
      // Nothing of theirs is embedded afterwards.
      await t.app.services.jobs.drain()
      expect(provider.calls).toEqual([])
    } finally {
      await t.close()
    }
  })
})
