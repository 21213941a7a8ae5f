import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Clock, createTokenCounter } from '@engram/core'
import { createEngine, EXTRACT_JOB } from '@engram/engine'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { createSqliteStorage } from '../storage.ts'

const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const directories: string[] = []

afterEach(() => {
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** An engine on a database file, as the server opens it at start (migrations, storage, engine). */
function open(file: string, clock: Clock) {
  applyMigrations(file, migrationsDirectory())
  const storage = createSqliteStorage({ db: createDatabase(file), clock, log: quiet })
  const engine = createEngine({ storage, clock, tokenCounter: createTokenCounter(), log: quiet })
  return { storage, engine }
}

describe('automatic extraction on SQLite', () => {
  it('queues the extraction with the messages, and a new engine on the same file runs what was pending', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-formation-'))
    directories.push(dir)
    const file = path.join(dir, 'engram.db')
    let at = new Date('2026-01-15T10:00:00.000Z').getTime()
    const clock: Clock = { now: () => new Date(at) }

    const first = open(file, clock)
    await first.storage.repositories.agents.upsert('a', null)
    const said = await first.engine.sessions.addMessages('a', 'c1', [
      { role: 'user', speaker: 'john', content: 'My name is John.' },
      { role: 'user', speaker: 'john', content: 'Remember that I am allergic to peanuts.' },
    ])
    at += 1_000
    await first.engine.sessions.addMessage('a', 'c1', {
      role: 'user',
      speaker: 'john',
      content: 'I work at Acme as a data engineer.',
    })
    // One debounced job for the conversation, committed with the messages, due 5 s after the last.
    const jobs = await first.storage.db.job.findMany({ where: { kind: EXTRACT_JOB } })
    expect(jobs.map((job) => [job.agentId, job.key, job.state, job.runAfter.getTime()])).toEqual([
      ['a', 'extract:c1', 'pending', at + 5_000],
    ])
    // The process ends before the job is due (a crash or a restart): nothing ran.
    await first.storage.close()

    at += 5_000
    const second = open(file, clock)
    expect(await second.engine.jobs.runDue()).toBeGreaterThan(0)
    const memories = await (await second.engine.memoryItems.list('a', {}, 'createdAt')).page(0, 50)
    const allergy = memories.find((m) => m.content.startsWith('John is allergic to peanuts'))
    expect(allergy).toMatchObject({
      sourceConversationId: 'c1',
      sourceMessageId: said[1]?.id,
      importance: 0.8,
    })
    expect(memories.some((m) => m.content.includes('Acme'))).toBe(true)
    expect(await second.storage.db.job.count({ where: { kind: EXTRACT_JOB } })).toBe(0)
    const session = await second.storage.db.session.findFirstOrThrow({ where: { agentId: 'a' } })
    expect(session.extractedThroughId).toBe(
      Math.max(...(await second.storage.db.message.findMany()).map((m) => m.id)),
    )
    // Nothing is extracted twice after another restart.
    await second.storage.close()
    const third = open(file, clock)
    expect(await third.engine.formation.syncMemory('a')).toMatchObject({ conversations: 0, stored: [] })
    expect(await third.storage.db.memoryItem.count()).toBe(memories.length)
    await third.storage.close()
  })
})

describe('summary vectors on SQLite', () => {
  it('a summary removed by any path takes its vectors of every model with it (the trigger)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-summary-vectors-'))
    directories.push(dir)
    const file = path.join(dir, 'engram.db')
    const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
    const { storage, engine } = open(file, clock)
    await storage.repositories.agents.upsert('a', null)
    for (const c of ['c1', 'c2'])
      await engine.sessions.addMessage('a', c, { role: 'user', content: `The garden shed of ${c} is blue.` })
    const [one, two] = [
      await engine.summaries.summarize('a', 'c1'),
      await engine.summaries.summarize('a', 'c2'),
    ]
    await engine.embeddings.fill('a', 'summary')
    // A vector of an older model too, as a provider change leaves until the re-embedding ends.
    await storage.db.$executeRawUnsafe(
      `INSERT INTO "Embedding" ("kind", "ownerId", "agentId", "model", "dimensions", "vector", "contentHash", "createdAt")
       SELECT "kind", "ownerId", "agentId", 'older-model', "dimensions", "vector", "contentHash", "createdAt" FROM "Embedding" WHERE "kind" = 'summary'`,
    )
    const vectorsOf = (id: string | undefined) =>
      storage.db.embedding.count({ where: { kind: 'summary', ownerId: Number(id) } })
    expect([await vectorsOf(one?.id), await vectorsOf(two?.id)]).toEqual([2, 2])
    // Removed behind the engine's back (a cascade from its session, a crash before the engine's cleanup).
    await storage.db.summary.delete({ where: { id: Number(one?.id) } })
    await storage.db.session.deleteMany({ where: { agentId: 'a', conversationId: 'c2' } })
    expect([await vectorsOf(one?.id), await vectorsOf(two?.id)]).toEqual([0, 0])
    await storage.close()
  })
})
