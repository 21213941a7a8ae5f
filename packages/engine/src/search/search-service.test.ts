import { DEFAULT_LIMITS, parseMemorySettings, type StoredMessage } from '@engram/core'
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
  const embeddings: SearchEmbeddings = {
    embedQuery: async () => null,
    index: async () => ({ dimensions: null, search: () => [] }),
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
  return { search, say }
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

  it('refuses an unknown conversation and a bad limit as the API does', async () => {
    const { search, say } = setUp()
    say('agent-a', 'c1', [['Alice', 'hello']])
    await expect(search.search('agent-a', 'hello', { conversationId: 'nope' })).rejects.toThrow(/nope/)
    await expect(search.search('agent-a', 'hello', { limit: 0 })).rejects.toThrow()
    expect(await search.newestMessageTime('agent-a')).toEqual(new Date('2026-03-01T09:00:00Z'))
  })
})
