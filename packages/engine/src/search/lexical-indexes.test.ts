import { ManualTimerClock } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import { InMemoryFullTextIndex } from '../testing/in-memory-full-text.ts'
import { AgentLexicalIndexes } from './lexical-indexes.ts'

/** A full-text store whose change version another "process" can move (SQLite's data_version). */
class SharedStore extends InMemoryFullTextIndex {
  external = 0
  /** How often the indexes looked at the store's version (once per catch-up or search check). */
  looks = 0
  override async changeVersion(): Promise<string | null> {
    this.looks++
    return String(this.external)
  }
}

function setup(config = {}) {
  const store = new SharedStore()
  const writes = new AgentWrites()
  // The catch-up delay runs on a manual clock: it passes only when a test moves it.
  const time = new ManualTimerClock()
  const indexes = new AgentLexicalIndexes(store, writes, config, time)
  const [garden] = store.terms('garden')
  return { store, writes, indexes, time, garden: garden as string }
}

/** A few turns of the event loop: a catch-up its timer started has run by then (in-memory store). */
async function turns(n = 5) {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe("the engine's in-process lexical indexes", () => {
  it('builds an agent index from the store on first use, then serves it without reading again', async () => {
    const { store, indexes, garden } = setup()
    store.index('messages', [
      { id: '1', agentId: 'a', text: 'the garden in spring', sessionId: 's' },
      { id: '2', agentId: 'b', text: 'another garden' },
    ])
    const index = await indexes.index('messages', 'a')
    expect(index.size).toBe(1)
    expect(index.documentFrequency(garden, 'all')).toBe(1)
    // Written behind the write version's back: not seen (nothing moved), the same index is served.
    store.index('messages', [{ id: '3', agentId: 'a', text: 'garden gate' }])
    expect(await indexes.index('messages', 'a')).toBe(index)
    expect(index.size).toBe(1)
  })

  it("catches up right after this process's writes, and on another process's commit", async () => {
    const { store, writes, indexes, time, garden } = setup()
    store.index('memories', [{ id: '1', agentId: 'a', text: 'garden shed' }])
    const index = await indexes.index('memories', 'a')
    store.index('memories', [{ id: '2', agentId: 'a', text: 'garden hose' }])
    writes.touch('a')
    time.advance(100)
    await indexes.settled()
    expect(index.documentFrequency(garden, 'all')).toBe(2)
    // Another process wrote (the store's change version moved, no write of ours): the next search sees it.
    store.index('memories', [{ id: '3', agentId: 'a', text: 'garden chair' }])
    store.external++
    expect((await indexes.index('memories', 'a')).documentFrequency(garden, 'all')).toBe(3)
  })

  it('drops documents deleted behind the process (by count and ids), and an edited one is re-read', async () => {
    const { store, indexes, garden } = setup()
    store.index('knowledge', [
      { id: '1', agentId: 'a', text: 'garden one' },
      { id: '2', agentId: 'a', text: 'garden two' },
      { id: '3', agentId: 'a', text: 'kitchen' },
    ])
    const index = await indexes.index('knowledge', 'a')
    store.remove('knowledge', 'a', ['1'])
    store.index('knowledge', [{ id: '3', agentId: 'a', text: 'kitchen garden' }])
    store.external++
    await indexes.index('knowledge', 'a')
    expect(index.has('1')).toBe(false)
    expect(index.size).toBe(2)
    expect(index.documentFrequency(garden, 'all')).toBe(2)
  })

  it('forgets an agent at once when it ends or its rows are reset, and everything on a restore', async () => {
    const { store, writes, indexes } = setup()
    store.index('messages', [
      { id: '1', agentId: 'a', text: 'garden' },
      { id: '2', agentId: 'b', text: 'garden' },
    ])
    await indexes.index('messages', 'a')
    await indexes.index('messages', 'b')
    writes.ended('a')
    expect(indexes.held('a')).toBe(0)
    expect(indexes.held('b')).toBe(1)
    writes.touch('b', 'settings')
    expect(indexes.held('b')).toBe(1)
    writes.touch('b', 'reset')
    expect(indexes.peek('messages', 'b')).toBeNull()
    await indexes.index('messages', 'b')
    writes.touchAll()
    expect(indexes.stats().indexes).toBe(0)
  })

  it('holds at most maxIndexes, least recently searched out first', async () => {
    const { store, indexes } = setup({ maxIndexes: 2 })
    for (const agent of ['a', 'b', 'c'])
      store.index('messages', [{ id: agent, agentId: agent, text: 'garden' }])
    await indexes.index('messages', 'a')
    await indexes.index('messages', 'b')
    await indexes.index('messages', 'a')
    await indexes.index('messages', 'c')
    expect([indexes.held('a'), indexes.held('b'), indexes.held('c')]).toEqual([1, 0, 1])
    expect(indexes.stats().bytes).toBeGreaterThan(0)
  })

  it('catches up only once the refresh delay has passed on the clock, one catch-up for the writes within it', async () => {
    const { store, writes, indexes, time, garden } = setup({ refreshDelayMs: 100 })
    store.index('messages', [{ id: '1', agentId: 'a', text: 'garden shed' }])
    const index = await indexes.index('messages', 'a')
    const looksAfterBuild = store.looks
    for (const id of ['2', '3', '4']) {
      store.index('messages', [{ id, agentId: 'a', text: `garden ${id}` }])
      writes.touch('a')
      time.advance(30)
      await turns()
    }
    // 90 ms after the first write: nothing read yet, and one catch-up waits for all three.
    expect(index.documentFrequency(garden, 'all')).toBe(1)
    expect(store.looks).toBe(looksAfterBuild)
    expect(time.pendingDelays()).toEqual([100])
    time.advance(10)
    await indexes.settled()
    expect(index.documentFrequency(garden, 'all')).toBe(4)
    expect(store.looks).toBe(looksAfterBuild + 1)
    expect(time.pendingDelays()).toEqual([])
  })

  it('does not build again an index forgotten while its catch-up waited (a deletion right after a write)', async () => {
    const { store, writes, indexes, time } = setup({ refreshDelayMs: 100 })
    store.index('messages', [{ id: '1', agentId: 'a', text: 'garden' }])
    await indexes.index('messages', 'a')
    writes.touch('a')
    writes.ended('a')
    time.advance(100)
    await indexes.settled()
    expect(indexes.held('a')).toBe(0)
  })
})
