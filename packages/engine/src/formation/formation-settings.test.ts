import { type Clock, createTokenCounter } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import type { StoredMemorySettings } from '../ports/memory-items.ts'
import { createInMemoryStorage } from '../testing/index.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

/**
 * The engine on the in-memory storage, its settings record behind a store that counts writes and
 * fails the ones `fail` picks (a disk full, a lost connection).
 */
async function setup(fail: (write: number) => boolean) {
  const storage = createInMemoryStorage(clock)
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {} },
    optimizer: { intervalMs: 0 },
  })
  await storage.repositories.agents.upsert('a', null)
  const store = storage.memoryItems
  const save = store.saveSettings.bind(store)
  const writes: StoredMemorySettings[] = []
  store.saveSettings = async (agentId, stored) => {
    writes.push(stored)
    if (fail(writes.length)) throw new Error(`write ${writes.length} failed`)
    await save(agentId, stored)
  }
  return { engine, writes }
}

const CHANGES = {
  enabled: false,
  extraction: { model: 'llama3.1:8b' },
  summaries: { summaryRetentionDays: 30, strategy: 'map-reduce' as const },
  profile: { profileMaxTokens: 800 },
}

describe('formation settings are saved in one write (issue 13 §5)', () => {
  it('every part changed is written at once: a store whose second write fails has them all', async () => {
    const { engine, writes } = await setup((write) => write >= 2)
    const saved = await engine.formationSettings.update('a', CHANGES)
    expect(writes).toHaveLength(1)
    expect(saved).toMatchObject({
      enabled: false,
      extraction: { extractor: 'offline', model: 'llama3.1:8b' },
      summaries: { summaryRetentionDays: 30, strategy: 'map-reduce' },
      profile: { profileMaxTokens: 800 },
    })
    expect(await engine.formationSettings.get('a')).toEqual(saved)
  })

  it('a write that fails leaves every part as it was', async () => {
    const { engine, writes } = await setup(() => true)
    const before = await engine.formationSettings.get('a')
    await expect(engine.formationSettings.update('a', CHANGES)).rejects.toThrow('write 1 failed')
    expect(writes).toHaveLength(1)
    expect(await engine.formationSettings.get('a')).toEqual(before)
  })

  it('keeps the memory settings of the same record, and writes nothing when nothing changes', async () => {
    const { engine, writes } = await setup(() => false)
    await engine.memoryItems.updateSettings('a', { settings: { recallTopK: 5 } })
    const memoryWrites = writes.length
    await engine.formationSettings.update('a', { summaries: { summaryRetentionDays: 30 } })
    await engine.formationSettings.update('a', { summaries: { summaryRetentionDays: null }, profile: null })
    expect(writes.length - memoryWrites).toBe(1)
    expect(writes.at(-1)).toMatchObject({
      settings: { recallTopK: 5 },
      summaries: { summaryRetentionDays: 30 },
    })
  })
})
