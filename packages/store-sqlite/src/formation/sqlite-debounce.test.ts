import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Clock, createTokenCounter, type NewJob } from '@engram/core'
import { createEngine, EXTRACT_JOB, SUMMARY_JOB } from '@engram/engine'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createDatabase } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { createSqliteStorage } from '../storage.ts'

// Issue 18: a burst of turns writes its conversation's debounced jobs (extraction, summary) about
// once per granularity instead of once per turn, and the jobs stay durable and on time.

const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const directories: string[] = []
const START = new Date('2026-01-15T10:00:00.000Z').getTime()

afterEach(() => {
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function databaseFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-debounce-'))
  directories.push(dir)
  return path.join(dir, 'engram.db')
}

/** An engine on the file, with every debounced job its queue is asked to write counted by kind. */
function open(file: string, clock: Clock, debounceGranularityMs?: number) {
  applyMigrations(file, migrationsDirectory())
  const storage = createSqliteStorage({ db: createDatabase(file), clock, log: quiet })
  const written: NewJob[] = []
  const enqueueIn = storage.jobs.enqueueIn.bind(storage.jobs)
  vi.spyOn(storage.jobs, 'enqueueIn').mockImplementation((sql, jobs) => {
    written.push(...jobs.filter((job) => job.postpone))
    return enqueueIn(sql, jobs)
  })
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    log: quiet,
    formation: debounceGranularityMs === undefined ? {} : { debounceGranularityMs },
  })
  const writes = (kind: string) => written.filter((job) => job.kind === kind).length
  const say = (conversationId: string, content: string) =>
    engine.sessions.addMessage('a', conversationId, { role: 'user', speaker: 'john', content })
  const pending = async (kind: string) =>
    (await storage.db.job.findMany({ where: { kind, state: 'pending' }, orderBy: { key: 'asc' } })).map(
      (job) => [job.key, job.runAfter.getTime() - START],
    )
  return { storage, engine, writes, say, pending }
}

function movableClock() {
  let at = START
  return { clock: { now: () => new Date(at) } as Clock, advance: (ms: number) => (at += ms) }
}

describe('debounced jobs under a burst of turns (SQLite)', () => {
  it('writes a conversation’s jobs once for a burst within the granularity, and the extraction still runs on time', async () => {
    const { clock, advance } = movableClock()
    const { storage, engine, writes, say, pending } = open(databaseFile(), clock)
    await storage.repositories.agents.upsert('a', null)
    for (let i = 0; i < 10; i++) {
      await say('c1', `Turn ${i}: I work at Acme as a data engineer.`)
      advance(40)
    }
    // Ten turns in 400 ms: one extract job and one summary debounce job written, not ten of each.
    expect(writes(EXTRACT_JOB)).toBe(1)
    expect(writes(SUMMARY_JOB)).toBe(1)
    expect(await pending(EXTRACT_JOB)).toEqual([['extract:c1', 5_000]])
    // Not before its time (the first turn's debounce, within the granularity of the last's)...
    advance(5_000 - 400 - 1)
    await engine.jobs.runDue()
    expect(await pending(EXTRACT_JOB)).toEqual([['extract:c1', 5_000]])
    // ...and then every turn of the burst is read.
    advance(1)
    await engine.jobs.runDue()
    expect(await pending(EXTRACT_JOB)).toEqual([])
    const session = await storage.db.session.findFirstOrThrow({ where: { agentId: 'a' } })
    const last = await storage.db.message.aggregate({ _max: { id: true } })
    expect(session.extractedThroughId).toBe(last._max.id)
    await storage.close()
  })

  it('moves the job when a turn comes past the granularity, and keeps one job per conversation', async () => {
    const { clock, advance } = movableClock()
    const { storage, writes, say, pending } = open(databaseFile(), clock)
    await storage.repositories.agents.upsert('a', null)
    await say('c1', 'I live in Berlin.')
    await say('c2', 'I prefer tea.')
    advance(100)
    await say('c1', 'With my sister Lena.')
    await say('c2', 'In the morning.')
    expect(writes(EXTRACT_JOB)).toBe(2)
    advance(500)
    await say('c1', 'She is a doctor.')
    expect(writes(EXTRACT_JOB)).toBe(3)
    expect(await pending(EXTRACT_JOB)).toEqual([
      ['extract:c1', 5_600],
      ['extract:c2', 5_000],
    ])
    await storage.close()
  })

  it('a restarted process finds the job and writes its next turn’s job again', async () => {
    const { clock, advance } = movableClock()
    const file = databaseFile()
    const first = open(file, clock)
    await first.storage.repositories.agents.upsert('a', null)
    await first.say('c1', 'I work at Acme as a data engineer.')
    await first.storage.close()
    advance(100)
    const second = open(file, clock)
    expect(await second.pending(EXTRACT_JOB)).toEqual([['extract:c1', 5_000]])
    await second.say('c1', 'I live in Berlin.')
    // Its notes are not durable: the first turn after a restart writes the job (postponed).
    expect(second.writes(EXTRACT_JOB)).toBe(1)
    expect(await second.pending(EXTRACT_JOB)).toEqual([['extract:c1', 5_100]])
    advance(5_100)
    expect(await second.engine.jobs.runDue()).toBeGreaterThan(0)
    expect(await second.pending(EXTRACT_JOB)).toEqual([])
    await second.storage.close()
  })

  it('a conversation deleted and started again queues its job again', async () => {
    const { clock, advance } = movableClock()
    const { storage, engine, writes, say, pending } = open(databaseFile(), clock)
    await storage.repositories.agents.upsert('a', null)
    await say('c1', 'I work at Acme.')
    await engine.deleteConversation('a', 'c1')
    expect(await pending(EXTRACT_JOB)).toEqual([])
    expect(await pending(SUMMARY_JOB)).toEqual([])
    advance(10)
    await say('c1', 'I live in Berlin.')
    expect(writes(EXTRACT_JOB)).toBe(2)
    expect(await pending(EXTRACT_JOB)).toEqual([['extract:c1', 5_010]])
    expect((await pending(SUMMARY_JOB)).length).toBe(1)
    await storage.close()
  })

  it('a deleted agent leaves no note behind', async () => {
    const { clock } = movableClock()
    const { storage, engine, say } = open(databaseFile(), clock)
    await storage.repositories.agents.upsert('a', null)
    await say('c1', 'I work at Acme.')
    expect(engine.formation.scheduled.size).toBeGreaterThan(0)
    await engine.lifecycle.deleteAgent('a')
    expect(engine.formation.scheduled.size).toBe(0)
    await storage.close()
  })

  it('with granularity 0 every turn writes its jobs, as before', async () => {
    const { clock, advance } = movableClock()
    const { storage, writes, say, pending } = open(databaseFile(), clock, 0)
    await storage.repositories.agents.upsert('a', null)
    for (let i = 0; i < 5; i++) {
      await say('c1', `Turn ${i}.`)
      advance(40)
    }
    expect(writes(EXTRACT_JOB)).toBe(5)
    expect(writes(SUMMARY_JOB)).toBe(5)
    expect(await pending(EXTRACT_JOB)).toEqual([['extract:c1', 5_160]])
    await storage.close()
  })
})
