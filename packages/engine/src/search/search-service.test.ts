import {
  DEFAULT_LIMITS,
  EPISODE_GAP_MS,
  parseMemorySettings,
  type StoredMessage,
  seededRandom,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import type { SearchEmbeddings, SearchMemories } from './collaborators.ts'
import { SearchService } from './search-service.ts'

// Search on the ports alone: the in-memory store, no vectors, memory settings at their defaults.

const clock = { now: () => new Date('2026-03-01T12:00:00Z') }
const MINUTE = 60_000

function setUp() {
  const storage = createInMemoryStorage(clock)
  const writes = new AgentWrites()
  /** A second search on the same store with the in-process lexical indexes off (the store path). */
  const fromStore = () =>
    new SearchService({
      fullText: storage.fullText,
      recall: storage.recall,
      embeddings,
      memories,
      limits: DEFAULT_LIMITS,
      clock,
      writes,
      lexicalIndexes: null,
    })
  const embeddings: SearchEmbeddings = {
    embedQuery: async () => null,
    index: async () => ({ dimensions: null, size: 0, search: () => [] }),
  }
  const memories: SearchMemories = {
    settings: async () => ({ settings: parseMemorySettings({}) }),
    recordAccess: async () => [],
  }
  const search = new SearchService({
    fullText: storage.fullText,
    recall: storage.recall,
    embeddings,
    memories,
    limits: DEFAULT_LIMITS,
    clock,
    writes,
  })
  let nextId = 1
  const say = (agentId: string, conversationId: string, lines: [string | null, string][]) => {
    const start = new Date('2026-03-01T09:00:00Z').getTime()
    return lines.map(([speaker, content], i) => {
      const id = String(nextId++)
      const message: StoredMessage = {
        id,
        sessionId: `${agentId}/${conversationId}`,
        role: 'user',
        speaker,
        content,
        tokenCount: content.split(' ').length,
        isCompressed: false,
        timestamp: new Date(start + i * MINUTE),
        metadata: {},
      }
      storage.recall.addTurn(agentId, conversationId, message)
      storage.fullText.index('messages', [{ id, agentId, text: content, sessionId: message.sessionId }])
      writes.touch(agentId)
      return id
    })
  }
  /** A memory formed from a turn (its first source), indexed by its own words only. */
  const remember = (agentId: string, content: string, sourceMessageId: string | null) => {
    const id = String(nextId++)
    const at = new Date('2026-03-01T10:00:00Z')
    storage.recall.addMemoryItem({
      id,
      agentId,
      userId: null,
      content,
      category: 'fact',
      tags: [],
      importance: 0.5,
      confidence: 1,
      pinned: false,
      sourceConversationId: sourceMessageId ? 'c1' : null,
      sourceMessageId,
      accessCount: 0,
      lastAccessedAt: null,
      validFrom: at,
      validUntil: null,
      supersededById: null,
      metadata: {},
      tokenCount: content.split(' ').length,
      createdAt: at,
      updatedAt: at,
    })
    storage.fullText.index('memories', [{ id, agentId, text: content }])
    writes.touch(agentId)
    return id
  }
  return { search, say, remember, storage, fromStore }
}

describe('SearchService on the in-memory store', () => {
  it("ranks the agent's turns by BM25 and never returns another agent's", async () => {
    const { search, say } = setUp()
    const [walk, , garden] = say('agent-a', 'c1', [
      ['Alice', 'we walked past the garden'],
      ['Bob', 'the weather was fine'],
      ['Alice', 'the garden garden party was lovely'],
    ])
    say('agent-b', 'c1', [['Carol', 'garden garden garden']])
    const hits = await search.search('agent-a', 'garden', { strategy: 'LEXICAL', track: false })
    expect(hits.map((h) => h.id)).toEqual([garden, walk])
    expect(hits[0]).toMatchObject({ scope: 'MESSAGES', conversationId: 'c1', rank: 1 })
    expect(hits[0]?.components.bm25).toBeGreaterThan(hits[1]?.components.bm25 ?? 0)
  })

  it('brings in the reply beside a matching turn (dialogue context) and boosts the named speaker', async () => {
    const { search, say } = setUp()
    const [question, answer] = say('agent-a', 'c1', [
      ['Bob', 'what is your favourite film genre?'],
      ['Alice', "It's a mix of drama and romance!"],
    ])
    const hits = await search.search('agent-a', 'favourite film genre', { track: false })
    expect(hits.map((h) => h.id)).toEqual([question, answer])
    expect(hits[1]?.components.context).toBeGreaterThan(0)

    const named = await search.search('agent-a', 'what did Alice say about drama', { track: false })
    expect(named[0]).toMatchObject({ id: answer })
    expect(named[0]?.components.speaker).toBeGreaterThan(1)
  })

  it("reaches a memory through its source turn's words and the question that turn answers", async () => {
    const { search, say, remember } = setUp()
    const [, answer] = say('agent-a', 'c1', [
      ['Bob', 'which instrument did you pick up this winter?'],
      ['Alice', 'The cello, I practise every evening'],
    ])
    const [theirs] = say('agent-b', 'c1', [['Carol', 'which instrument did you pick up this winter?']])
    const cello = remember('agent-a', 'Alice plays the cello', answer as string)
    const unrelated = remember('agent-a', 'Alice likes tea', null)
    remember('agent-b', 'Carol plays the drums', theirs as string)

    const hits = await search.search('agent-a', 'which instrument this winter', {
      scopes: ['MEMORIES'],
      track: false,
    })
    // The memory says none of the question's words: its turn's reply to them brings it in.
    expect(hits.map((h) => h.id)).toEqual([cello])
    expect(hits[0]?.components).toMatchObject({ bm25: 0, vector: 0 })
    expect(hits[0]?.components.context).toBeGreaterThan(0)
    expect(hits.map((h) => h.id)).not.toContain(unrelated)

    // Its own words still count on top of the turn's.
    const own = await search.search('agent-a', 'cello', { scopes: ['MEMORIES'], track: false })
    expect(own[0]).toMatchObject({ id: cello })
    expect(own[0]?.components.bm25).toBeGreaterThan(0)
    expect(own[0]?.components.context).toBeGreaterThan(0)
  })

  it('ranks alike from the in-process index and from the store (ENGRAM_LEXICAL_INDEX=off), expansions included', async () => {
    const { search, say, fromStore } = setUp()
    // Turns that share a second word with the query's (pesto with basil, harvest with tomatoes),
    // some without the query's word, among filler: the expansions have something to find.
    const filler = ['river', 'train', 'novel', 'piano', 'winter', 'coffee', 'museum', 'bicycle']
    const lines: [string, string][] = []
    for (let i = 0; i < 6; i++) lines.push(['Alice', `fresh basil pesto with pasta number ${i}`])
    for (let i = 0; i < 4; i++) lines.push(['Bob', `pesto pasta recipe from the market ${i}`])
    for (let i = 0; i < 5; i++) lines.push(['Alice', `tomatoes ripen before the harvest ${i}`])
    for (let i = 0; i < 3; i++) lines.push(['Bob', `the harvest festival in the village ${i}`])
    for (let i = 0; i < 24; i++)
      lines.push([
        'Bob',
        `the ${filler[i % filler.length]} and the ${filler[(i * 3 + 1) % filler.length]} ${i}`,
      ])
    say('agent-a', 'c1', lines)
    say('agent-b', 'c1', [['Carol', 'basil pesto tomatoes harvest']])
    const store = fromStore()
    const weights = { feedback: 1, cooccurrence: 1 }
    for (const query of ['basil', 'tomatoes', 'basil tomatoes', 'river piano', 'nothing like it']) {
      for (const strategy of ['LEXICAL', 'HYBRID'] as const) {
        const asked = { strategy, weights, track: false, limit: 25 }
        const fromIndex = await search.search('agent-a', query, asked)
        const read = await store.search('agent-a', query, asked)
        expect(
          read.map((h) => [h.id, h.components]),
          `${strategy} "${query}"`,
        ).toEqual(fromIndex.map((h) => [h.id, h.components]))
      }
    }
    // The expansions found turns without the query's word, or the comparison would prove little.
    const expanded = await store.search('agent-a', 'basil', {
      strategy: 'HYBRID',
      weights,
      track: false,
      limit: 25,
    })
    const without = expanded.filter((h) => h.components.bm25 === 0)
    expect(without.some((h) => (h.components.feedback ?? 0) > 0.01)).toBe(true)
    expect(without.some((h) => (h.components.cooccurrence ?? 0) > 0.01)).toBe(true)
  })

  it('refuses an unknown conversation and a bad limit as the API does', async () => {
    const { search, say } = setUp()
    say('agent-a', 'c1', [['Alice', 'hello']])
    await expect(search.search('agent-a', 'hello', { conversationId: 'nope' })).rejects.toThrow(/nope/)
    await expect(search.search('agent-a', 'hello', { limit: 0 })).rejects.toThrow()
    expect(await search.newestMessageTime('agent-a')).toEqual(new Date('2026-03-01T09:00:00Z'))
  })

  it('ranks the same hits reading fewer turns for dialogue context as reading whole spans', async () => {
    const { search, storage } = setUp()
    const random = seededRandom(18)
    const words = 'garden film cello winter drama tea party river book train coffee storm'.split(' ')
    const speakers = ['Alice', 'Bob']
    let id = 1_000
    for (let c = 0; c < 30; c++) {
      let at = Date.parse('2026-02-01T09:00:00Z') + c * 86_400_000
      for (let t = 0; t < 40; t++) {
        // Minutes apart mostly, now and then a pause past the episode gap or none at all.
        const draw = random()
        at += draw < 0.1 ? 0 : draw < 0.85 ? Math.floor(random() * 30) * MINUTE : EPISODE_GAP_MS + 30 * MINUTE
        const content = Array.from(
          { length: 3 + Math.floor(random() * 6) },
          () => words[Math.floor(random() * words.length)],
        ).join(' ')
        const message: StoredMessage = {
          id: String(id++),
          sessionId: `agent-a/c${c}`,
          role: 'user',
          speaker: speakers[t % 2] as string,
          content,
          tokenCount: content.split(' ').length,
          isCompressed: false,
          timestamp: new Date(at),
          metadata: {},
        }
        storage.recall.addTurn('agent-a', `c${c}`, message)
        storage.fullText.index('messages', [
          { id: message.id, agentId: 'agent-a', text: content, sessionId: message.sessionId },
        ])
      }
    }
    let rowsRead = 0
    const messages = storage.recall.messages.bind(storage.recall)
    storage.recall.messages = async (agentId, ids, filter) => {
      rowsRead += ids.length
      return messages(agentId, ids, filter)
    }
    const read = { fewer: 0, all: 0 }
    for (const query of [
      'garden party',
      'cello winter',
      'what did Alice say about the storm',
      'tea',
      'river book train',
    ]) {
      for (const limit of [3, 10, 25]) {
        const ranked = {} as Record<'fewer' | 'all', unknown>
        for (const way of ['fewer', 'all'] as const) {
          search.dialogueReads = way
          rowsRead = 0
          const hits = await search.search('agent-a', query, { limit, track: false })
          read[way] += rowsRead
          ranked[way] = hits.map((h) => ({
            id: h.id,
            rank: h.rank,
            score: h.score,
            components: h.components,
          }))
        }
        expect(ranked.fewer).toEqual(ranked.all)
        expect((ranked.fewer as unknown[]).length).toBeGreaterThan(0)
      }
    }
    expect(read.fewer).toBeLessThan(read.all)
  })
})

describe('hybrid MESSAGES candidates ranked on the turn timeline (issue 18, hybridmsg18)', () => {
  /** 20 conversations of 30 turns, their times in the index's documents (what feeds the timeline), a few summaries. */
  function history(speakers = true) {
    const setup = setUp()
    const { storage } = setup
    const random = seededRandom(1_818)
    const words = 'garden film cello winter drama tea party river book train coffee storm'.split(' ')
    let id = 5_000
    for (let c = 0; c < 20; c++) {
      let at = Date.parse('2026-02-01T09:00:00Z') + c * 86_400_000
      for (let t = 0; t < 30; t++) {
        const draw = random()
        at += draw < 0.1 ? 0 : draw < 0.85 ? Math.floor(random() * 30) * MINUTE : EPISODE_GAP_MS + 30 * MINUTE
        const words_ = Array.from(
          { length: 3 + Math.floor(random() * 6) },
          () => words[Math.floor(random() * words.length)],
        ).join(' ')
        // Summaries (either letter case) share the messages' index but are not MESSAGES hits.
        const content =
          t === 7 ? `[CONTEXT SUMMARY] ${words_}` : t === 19 ? `[context summary] ${words_}` : words_
        const message: StoredMessage = {
          id: String(id++),
          sessionId: `agent-a/c${c}`,
          role: 'user',
          speaker: t % 2 === 0 ? 'Alice' : 'Bob',
          content,
          tokenCount: content.split(' ').length,
          isCompressed: false,
          timestamp: new Date(at),
          metadata: {},
        }
        storage.recall.addTurn('agent-a', `c${c}`, message)
        storage.fullText.index('messages', [
          {
            id: message.id,
            agentId: 'agent-a',
            text: content,
            sessionId: message.sessionId,
            time: at,
            // Streamed back with the document (as both stores do) unless this history leaves it out.
            ...(speakers ? { speaker: message.speaker } : {}),
          },
        ])
      }
    }
    let rowsRead = 0
    /** Ids the store no longer returns (a turn deleted after the index caught up). */
    const gone = new Set<string>()
    const messages = storage.recall.messages.bind(storage.recall)
    storage.recall.messages = async (agentId, ids, filter) => {
      rowsRead += ids.length
      return (await messages(agentId, ids, filter)).filter((row) => !gone.has(row.message.id))
    }
    return { ...setup, gone, rowsRead: () => rowsRead, resetRows: () => (rowsRead = 0) }
  }

  /** A search's whole answer, both ways: hits with their rows, scores and components. */
  async function bothWays(
    search: SearchService,
    resetRows: () => void,
    rowsRead: () => number,
    query: string,
    limit: number,
  ) {
    const out = {} as Record<'pool' | 'all', { hits: unknown; rows: number }>
    for (const way of ['pool', 'all'] as const) {
      search.candidateRows = way
      resetRows()
      const hits = await search.search('agent-a', query, { limit, track: false })
      out[way] = {
        hits: hits.map((h) => ({
          id: h.id,
          rank: h.rank,
          score: h.score,
          relevance: h.relevance,
          redundancy: h.redundancy,
          redundantWithRank: h.redundantWithRank,
          components: h.components,
          text: h.text,
          timestamp: h.timestamp,
          conversationId: h.conversationId,
          message: h.message,
        })),
        rows: rowsRead(),
      }
    }
    search.candidateRows = 'pool'
    return out
  }

  it('ranks the same hits reading only the rows of the turns that reach the pool', async () => {
    const { search, rowsRead, resetRows } = history()
    expect(search.candidateRows).toBe('pool')
    const read = { pool: 0, all: 0 }
    let compared = 0
    for (const query of ['garden party', 'cello winter', 'tea', 'river book train', 'summary of the storm']) {
      for (const limit of [3, 10, 25]) {
        const ways = await bothWays(search, resetRows, rowsRead, query, limit)
        expect(ways.pool.hits).toEqual(ways.all.hits)
        compared += (ways.pool.hits as unknown[]).length
        read.pool += ways.pool.rows
        read.all += ways.all.rows
      }
    }
    expect(compared).toBeGreaterThan(100)
    expect(search.candidateRowsRetries).toBe(0)
    // Every hit is an ordinary turn, never a summary of either letter case.
    for (const limit of [25]) {
      const hits = await search.search('agent-a', 'summary context storm', { limit, track: false })
      for (const h of hits) expect(h.text.toLowerCase().startsWith('[context summary]')).toBe(false)
    }
    // The pool's rows only: at most a third of every candidate's (made to fail by reading all: it does).
    expect(read.pool).toBeLessThan(read.all / 3)
  })

  it("ranks a query naming a participant on the timeline's speakers, or reads every row when it holds none", async () => {
    for (const speakers of [true, false]) {
      const { search, rowsRead, resetRows } = history(speakers)
      const ways = await bothWays(search, resetRows, rowsRead, 'what did Alice say about the storm', 10)
      expect(ways.pool.hits).toEqual(ways.all.hits)
      // The speaker factor applied (Alice's turns boosted): the query did name her.
      expect(
        (ways.pool.hits as { components: { speaker: number } }[]).some((h) => h.components.speaker > 1),
      ).toBe(true)
      if (speakers) expect(ways.pool.rows).toBeLessThan(ways.all.rows / 2)
      else expect(ways.pool.rows).toBe(ways.all.rows)
    }
  })

  it('searches again with every row when a pool turn is gone from the store (the same hits as reading all)', async () => {
    const { search, gone, rowsRead, resetRows } = history()
    const before = await search.search('agent-a', 'garden party', { limit: 10, track: false })
    // The best hit's row disappears without the index or the timeline hearing of it.
    gone.add(before[0]?.id as string)
    const ways = await bothWays(search, resetRows, rowsRead, 'garden party', 10)
    expect(ways.pool.hits).toEqual(ways.all.hits)
    expect((ways.pool.hits as { id: string }[]).map((h) => h.id)).not.toContain(before[0]?.id)
    // The pool's read, then every candidate's row again.
    expect(ways.pool.rows).toBeGreaterThan(ways.all.rows)
    expect(search.candidateRowsRetries).toBe(1)
  })
})
