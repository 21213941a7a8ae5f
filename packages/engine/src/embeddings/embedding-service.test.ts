import { type Clock, createHashingEmbedder, type Embedder } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import { InProcessEventBus } from '../events/in-process-event-bus.ts'
import { JobWorker } from '../jobs/job-worker.ts'
import type { EmbeddingProgressEvent } from '../ports/event-bus.ts'
import { SILENT_LOGGER } from '../ports/logger.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { contentHash } from './content-hash.ts'
import { embedJob, wireEmbedJobs } from './embed-jobs.ts'
import { EmbeddingService } from './embedding-service.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

/** A remote-like embedder (no embedOne): counts what it is asked, fails while `down`. */
function remoteEmbedder(model = 'vector-store') {
  const local = createHashingEmbedder({ dimensions: 32 })
  const state = { calls: 0, texts: 0, down: false }
  const embedder: Embedder = {
    model,
    dimensions: 32,
    async embed(texts) {
      state.calls++
      state.texts += texts.length
      if (state.down) throw new Error('provider unreachable')
      return texts.map((t) => local.embedOne(t))
    },
  }
  return { embedder, state }
}

function setUp(embedder: Embedder) {
  const storage = createInMemoryStorage(clock)
  const events = new InProcessEventBus()
  const writes = new AgentWrites()
  const worker = new JobWorker(storage.jobs, clock, SILENT_LOGGER)
  const embeddings = new EmbeddingService({
    vectors: storage.vectors,
    repository: storage.embeddings,
    embedder,
    clock,
    events,
    log: SILENT_LOGGER,
    writes,
  })
  wireEmbedJobs(embeddings, worker, storage.jobs, storage.embeddings)
  return { storage, events, worker, embeddings, writes }
}

describe('EmbeddingService on the in-memory storage', () => {
  it('embeds queued owners in one provider call, caches by the agent and text, and skips what is current', async () => {
    const { embedder, state } = remoteEmbedder()
    const { storage, worker, embeddings } = setUp(embedder)
    storage.embeddings.putOwners('memory', [
      { id: 1, agentId: 'a', text: 'likes green tea' },
      { id: 2, agentId: 'b', text: 'likes green tea' },
    ])
    storage.embeddings.putOwners('message', [{ id: 3, agentId: 'a', text: 'see you on sunday' }])
    await embeddings.enqueue('a', 'memory', [1])
    await storage.jobs.enqueue([embedJob('b', 'memory', 2), embedJob('a', 'message', 3)])
    expect(await worker.drain()).toBe(3)
    expect(state).toMatchObject({ calls: 1, texts: 3 })
    expect(await storage.vectors.count('a', 'memory')).toBe(1)
    expect(storage.vectors.contentHashOf('b', 'memory', '2')).toBe(contentHash('likes green tea'))
    // Each agent's cache is its own; a text it embedded before is not sent again.
    expect(
      await storage.embeddings.cached('a', embedder.model, [contentHash('likes green tea')]),
    ).toHaveLength(1)
    await embeddings.embedTexts('a', ['likes green tea'])
    expect(state.calls).toBe(1)
    // Already embedded from its current text: the job has nothing to do.
    await embeddings.enqueue('a', 'memory', [1])
    await worker.drain()
    expect(state.calls).toBe(1)
    const coverage = await embeddings.coverage('a')
    expect(coverage.find((c) => c.kind === 'memory')).toEqual({
      kind: 'memory',
      total: 1,
      embedded: 1,
      queued: 0,
      failed: 0,
    })
  })

  it('lets a search run its agent’s queued jobs first, and gives a failed job back for a retry', async () => {
    const { embedder, state } = remoteEmbedder()
    const { storage, embeddings } = setUp(embedder)
    storage.embeddings.putOwners('memory', [{ id: 1, agentId: 'a', text: 'owns a kayak' }])
    state.down = true
    await embeddings.enqueue('a', 'memory', [1])
    expect((await embeddings.index('a', 'memory')).size).toBe(0)
    expect((await embeddings.coverage('a')).find((c) => c.kind === 'memory')).toMatchObject({ embedded: 0 })
    state.down = false
    const failed = await embeddings.embedOwners([{ jobId: 7, agentId: 'a', kind: 'memory', ownerId: 1 }])
    expect(failed.size).toBe(0)
    const index = await embeddings.index('a', 'memory')
    expect((await index.search(createHashingEmbedder({ dimensions: 32 }).embedOne('kayak'), 1))[0]?.id).toBe(
      '1',
    )
    // An owner of another agent than its job names is not embedded for it.
    expect(
      (await embeddings.embedOwners([{ jobId: 8, agentId: 'b', kind: 'memory', ownerId: 1 }])).size,
    ).toBe(0)
  })

  it('fills what a local embedder has not embedded yet inside a search', async () => {
    const { storage, embeddings } = setUp(createHashingEmbedder({ dimensions: 32 }))
    storage.embeddings.putOwners('knowledge', [
      { id: 1, agentId: 'a', text: 'city: hamburg' },
      { id: 2, agentId: 'a', text: 'drink: green tea' },
    ])
    expect(embeddings.isLocal).toBe(true)
    expect((await embeddings.index('a', 'knowledge')).size).toBe(2)
    expect(await embeddings.fill('a', 'knowledge')).toBe(0)
  })

  it('re-embeds what has no vector of the model, publishing progress through the event bus', async () => {
    const { embedder } = remoteEmbedder()
    const { storage, events, embeddings } = setUp(embedder)
    storage.embeddings.putOwners(
      'memory',
      Array.from({ length: 5 }, (_, i) => ({ id: i + 1, agentId: i % 2 ? 'a' : 'b', text: `memory ${i}` })),
    )
    const seen: EmbeddingProgressEvent[] = []
    const subscription = events.subscribe('embedding:progress')
    const reading = (async () => {
      for await (const event of subscription) {
        seen.push(event)
        if (event.state !== 'running') break
      }
    })()
    expect(embeddings.reembed().state).toBe('running')
    await embeddings.settled()
    await reading
    expect(embeddings.progress).toMatchObject({ state: 'done', total: 5, done: 5, failed: 0 })
    expect(seen.at(-1)).toEqual(embeddings.progress)
    expect(seen[0]?.state).toBe('running')
    expect(await storage.embeddings.coverage(null, 'memory', embedder.model)).toEqual({
      total: 5,
      embedded: 5,
    })
  })
})
