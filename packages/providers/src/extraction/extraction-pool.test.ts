import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type ConversationTurn,
  createTokenCounter,
  extractMemoriesOffline,
  SUMMARY_STRATEGIES,
  ValidationError,
  writeOfflineSummary,
} from '@engram/core'
import { afterEach, describe, expect, it } from 'vitest'
import { ExtractionBusyError, ExtractionPool, ExtractionWorkerError } from './extraction-pool.ts'

const CRASHING_WORKER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'testing',
  'crashing-extraction-worker.mjs',
)
const NOW = new Date('2026-03-10T12:00:00Z')
const TURNS: ConversationTurn[] = [
  { id: '1', speaker: 'dana', role: 'user', content: 'I work at Acme as a data engineer.', timestamp: NOW },
  {
    id: '2',
    speaker: 'dana',
    role: 'user',
    content: 'Remember that I am allergic to peanuts.',
    timestamp: NOW,
  },
  {
    id: '3',
    speaker: 'dana',
    role: 'user',
    content: 'My sister Maya lives in Lisbon since 2019.',
    timestamp: NOW,
  },
  {
    id: '4',
    speaker: 'dana',
    role: 'user',
    content: 'I prefer tea over coffee in the morning.',
    timestamp: NOW,
  },
]

const pools: ExtractionPool[] = []
function pool(options: ConstructorParameters<typeof ExtractionPool>[0] = {}) {
  const created = new ExtractionPool(options)
  pools.push(created)
  return created
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((created) => created.close()))
})

// Each thread starts by loading core and the wink model through tsx: seconds on a loaded machine.
describe('ExtractionPool', { timeout: 30_000 }, () => {
  it('extracts on a worker thread the same candidates as in process', async () => {
    const options = { now: NOW, settings: { minContentWords: 3 } }
    const expected = extractMemoriesOffline(TURNS, options)
    expect(expected.length).toBeGreaterThanOrEqual(3)
    const extracted = await pool().extract(TURNS, options)
    // Dates survive the trip (structured clone), so the candidates are equal field for field.
    expect(extracted).toEqual(expected)
  })

  it('writes summaries without a model on the same threads, equal to the in-process ones for every strategy', async () => {
    // Long enough for hierarchical (chunks of ten, then summaries of summaries) and map-reduce (forty).
    const topics = ['the garden shed', 'the Lisbon trip', 'the Acme migration', 'peanut allergies', 'tea']
    const turns = Array.from({ length: 90 }, (_, i) => ({
      speaker: i % 2 ? 'dana' : 'assistant',
      content: `Turn ${i}: we talked about ${topics[i % topics.length]} and decided to revisit it on day ${i}.`,
    }))
    const shared = pool()
    const counter = createTokenCounter('heuristic')
    for (const strategy of SUMMARY_STRATEGIES) {
      const options = { strategy, maxTokens: 120 }
      const expected = await writeOfflineSummary(turns, { ...options, countTokens: (t) => counter.count(t) })
      expect(expected.length).toBeGreaterThan(0)
      expect(await shared.summarize(turns, { ...options, tokenizer: 'heuristic' })).toBe(expected)
    }
    await shared.extract(TURNS, { now: NOW })
    // One pool, both kinds of work, counted apart.
    expect(shared.stats().completedByTask).toEqual({ extract: 1, summarize: SUMMARY_STRATEGIES.length })
  })

  it('fails the call of a thread that dies, replaces the thread, and serves the next call', async () => {
    const crashing = pool({ workerFile: CRASHING_WORKER })
    const crash = crashing.extract([{ ...TURNS[0], content: 'CRASH' } as ConversationTurn], { now: NOW })
    await expect(crash).rejects.toBeInstanceOf(ExtractionWorkerError)
    await expect(crash).rejects.toThrow(/exited \(code 3\)/)
    expect(crashing.stats().restarts).toBe(1)
    expect(await crashing.extract(TURNS, { now: NOW })).toEqual(extractMemoriesOffline(TURNS, { now: NOW }))
  })

  it('refuses a call beyond its backlog instead of queueing it, and serves again once it drains', async () => {
    const bounded = pool({ size: 1, maxQueue: 1 })
    // The thread is still loading: the first call waits, the second finds the backlog full.
    const first = bounded.extract(TURNS, { now: NOW })
    expect(bounded.stats()).toMatchObject({ waiting: 1, maxQueue: 1 })
    await expect(bounded.extract(TURNS, { now: NOW })).rejects.toBeInstanceOf(ExtractionBusyError)
    expect((await first).length).toBeGreaterThan(0)
    expect((await bounded.extract(TURNS, { now: NOW })).length).toBeGreaterThan(0)
  })

  it('refuses calls once closed, and rejects a bad size naming the field', async () => {
    const closing = pool()
    await closing.close()
    await expect(closing.extract(TURNS, { now: NOW })).rejects.toThrow(/closed/)
    expect(() => new ExtractionPool({ size: 0 })).toThrow(ValidationError)
    expect(() => new ExtractionPool({ size: 0 })).toThrow(/size/)
  })
})
