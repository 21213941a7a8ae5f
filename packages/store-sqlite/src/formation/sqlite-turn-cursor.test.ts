import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Clock, createTokenCounter } from '@engram/core'
import { createEngine, SUMMARY_JOB } from '@engram/engine'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createDatabase, directSqlite } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { createSqliteStorage } from '../storage.ts'

// Issue 18: a turn's summary cursor is written in the transaction that stores its messages (one
// group-committed write per addMessage, not the messages' and then the cursor's), with spec 003's
// triggers (debounce, switch, threshold) unchanged.

const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const directories: string[] = []
const START = new Date('2026-01-15T10:00:00.000Z').getTime()

afterEach(() => {
  vi.restoreAllMocks()
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function open(options: { automaticSummaries?: boolean } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-turn-cursor-'))
  directories.push(dir)
  const file = path.join(dir, 'engram.db')
  applyMigrations(file, migrationsDirectory())
  let at = START
  const clock = { now: () => new Date(at) } as Clock
  const storage = createSqliteStorage({ db: createDatabase(file), clock, log: quiet })
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    log: quiet,
    ...(options.automaticSummaries === false ? { automaticSummaries: false } : {}),
  })
  const say = (conversationId: string, content: string) =>
    engine.sessions.addMessage('a', conversationId, { role: 'user', speaker: 'john', content })
  const cursors = async () =>
    (await storage.db.summaryCursor.findMany({ orderBy: { conversationId: 'asc' } })).map((c) => [
      c.conversationId,
      c.pendingTokens,
      c.lastTurnAt.getTime() - START,
    ])
  const summaryJobs = async () =>
    (
      await storage.db.job.findMany({
        where: { kind: SUMMARY_JOB, state: 'pending' },
        orderBy: { id: 'asc' },
      })
    ).map((job) => [job.key, JSON.parse(job.payload).trigger, job.runAfter.getTime() - START])
  return { storage, engine, say, cursors, summaryJobs, advance: (ms: number) => (at += ms) }
}

describe("a turn's summary cursor rides on its messages' transaction (SQLite)", () => {
  it('stores a turn in one write: messages, cursor and summary jobs together', async () => {
    const { storage, say, cursors, summaryJobs, advance } = open()
    await storage.repositories.agents.upsert('a', null)
    await say('c1', 'I live in Berlin.')
    const direct = directSqlite(storage.db)
    if (!direct) throw new Error('no direct connection')
    const writes = vi.spyOn(direct, 'write')
    advance(1_000)
    await say('c1', 'With my sister Lena.')
    // One group-committed write for the turn (before: the messages', then the cursor's).
    expect(writes).toHaveBeenCalledTimes(1)
    const tokens = await storage.db.message.aggregate({ _sum: { tokenCount: true } })
    expect(await cursors()).toEqual([['c1', tokens._sum.tokenCount, 1_000]])
    // The debounce moved to 60 s (the default) after the last turn.
    expect(await summaryJobs()).toEqual([['summarize:c1', 'debounce', 61_000]])
    await storage.close()
  })

  it('keeps the switch and threshold triggers: another conversation, then one past the threshold', async () => {
    const { storage, engine, say, cursors, summaryJobs, advance } = open()
    await storage.repositories.agents.upsert('a', null)
    await engine.summaries.updateSettings('a', { summarizationThresholdTokens: 1_000 })
    await say('c1', 'I live in Berlin.')
    advance(10)
    await say('c2', 'I prefer tea.')
    // c2's turn switched away from c1, whose turn was not summarised: c1's summary is due now.
    expect(await summaryJobs()).toEqual([
      ['summarize:c1', 'debounce', 60_000],
      ['summarize:c2', 'debounce', 60_010],
      ['summarize-now:c1', 'switch', 10],
    ])
    advance(10)
    await say('c2', 'word '.repeat(1_100))
    const [, [, pending]] = (await cursors()) as [unknown, [string, number, number]]
    expect(pending).toBeGreaterThanOrEqual(1_000)
    expect((await summaryJobs()).filter(([, trigger]) => trigger === 'threshold')).toEqual([
      ['summarize-now:c2', 'threshold', 20],
    ])
    await storage.close()
  })

  it('a cursor write that fails fails its turn: the messages do not commit without it', async () => {
    const { storage, say, cursors } = open()
    await storage.repositories.agents.upsert('a', null)
    await say('c1', 'I live in Berlin.')
    await storage.db.$executeRawUnsafe(
      `CREATE TRIGGER "refuse_cursor" BEFORE UPDATE ON "SummaryCursor" BEGIN SELECT RAISE(ABORT, 'cursor refused'); END`,
    )
    await expect(say('c1', 'With my sister Lena.')).rejects.toThrow(/cursor refused/)
    expect(await storage.db.message.count()).toBe(1)
    expect(await storage.db.memoryEntry.count()).toBe(1)
    expect(await cursors()).toHaveLength(1)
    await storage.close()
  })

  it('writes no cursor when automatic summaries are off, and none when formation is off for the agent', async () => {
    const off = open({ automaticSummaries: false })
    await off.storage.repositories.agents.upsert('a', null)
    await off.say('c1', 'I live in Berlin.')
    expect(await off.cursors()).toEqual([])
    await off.storage.close()
    const disabled = open()
    await disabled.storage.repositories.agents.upsert('a', null)
    await disabled.engine.formation.updateSettings('a', { enabled: false })
    await disabled.say('c1', 'I live in Berlin.')
    expect(await disabled.cursors()).toEqual([])
    expect(await disabled.summaryJobs()).toEqual([])
    await disabled.storage.close()
  })
})
