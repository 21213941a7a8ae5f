import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Clock, NewJob } from '@engram/core'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase, type Database, directSqlite, type NewRowJobs } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { SqliteJobQueue } from './sqlite-job-queue.ts'

const opened: { db: Database; dir: string }[] = []
afterEach(async () => {
  for (const { db, dir } of opened.splice(0)) {
    await db.$disconnect()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

const AT = new Date('2026-01-15T10:00:00.000Z')

async function queue(newRowJobs?: NewRowJobs) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-jobs-'))
  const file = path.join(dir, 'engram.db')
  applyMigrations(file, migrationsDirectory())
  const db = createDatabase(file, newRowJobs ? { newRowJobs } : {})
  opened.push({ db, dir })
  await db.agent.create({ data: { id: 'a', name: 'a' } })
  const clock: Clock = { now: () => AT }
  const jobs = new SqliteJobQueue(db, clock)
  const direct = directSqlite(db)
  if (!direct) throw new Error('no direct connection')
  const enqueueIn = (batch: NewJob[]) => direct.write((sql) => jobs.enqueueIn(sql, batch))
  const rows = async () =>
    (await db.job.findMany({ orderBy: { id: 'asc' } })).map((job) => [
      job.kind,
      job.key,
      job.payload,
      job.runAfter.getTime() - AT.getTime(),
    ])
  return { enqueueIn, rows }
}

const embed = (key: string, payload: Record<string, unknown> = {}): NewJob => ({
  kind: 'embed',
  agentId: 'a',
  key,
  payload,
})

describe('SqliteJobQueue.enqueueIn (jobs written inside a group commit)', () => {
  it('queues a batch of jobs in one statement, passing over keys already pending', async () => {
    const { enqueueIn, rows } = await queue()
    expect(await enqueueIn([embed('m1')])).toBe(1)
    expect(await enqueueIn([embed('m1', { again: true }), embed('m2', { n: 2 }), embed('m3')])).toBe(2)
    expect(await rows()).toEqual([
      ['embed', 'm1', '{}', 0],
      ['embed', 'm2', '{"n":2}', 0],
      ['embed', 'm3', '{}', 0],
    ])
  })

  it('keeps one pending job per key when a batch names a key twice', async () => {
    const { enqueueIn, rows } = await queue()
    expect(await enqueueIn([embed('m1'), embed('m1'), embed('m2')])).toBe(2)
    expect((await rows()).map((row) => row[1])).toEqual(['m1', 'm2'])
  })

  it('postpones a debounced job beside a batch of plain ones', async () => {
    const { enqueueIn, rows } = await queue()
    const extract = (ms: number): NewJob => ({
      kind: 'extract',
      agentId: 'a',
      key: 'extract:c1',
      runAfter: new Date(AT.getTime() + ms),
      postpone: true,
    })
    expect(await enqueueIn([embed('m1'), embed('m2'), extract(5_000)])).toBe(3)
    expect(await enqueueIn([embed('m3'), embed('m4'), extract(6_000)])).toBe(2)
    expect(await rows()).toEqual([
      ['embed', 'm1', '{}', 0],
      ['embed', 'm2', '{}', 0],
      ['extract', 'extract:c1', '{}', 6_000],
      ['embed', 'm3', '{}', 0],
      ['embed', 'm4', '{}', 0],
    ])
  })

  // Issue 18: a new message's embed job names a row its transaction just created, so no job of its
  // key can be pending and the queue need not look. The proof that it does not look: a pending job
  // of the same key (which a real new row never has) is passed over by `checked`, not by `plain`.
  it('inserts the jobs of new rows without reading the queue (plain), or like any job (checked)', async () => {
    const fresh = (key: string): NewJob => ({ ...embed(key, { fresh: true }), ofNewRow: true })
    for (const [setting, expected] of [
      ['plain', 3],
      ['checked', 2],
    ] as const) {
      const { enqueueIn, rows } = await queue(setting)
      expect(await enqueueIn([embed('m1')])).toBe(1)
      expect(await enqueueIn([fresh('m1'), fresh('m2'), embed('s', { switch: true })])).toBe(expected)
      const keys = (await rows()).map(([, key]) => key)
      expect(keys.sort()).toEqual(setting === 'plain' ? ['m1', 'm1', 'm2', 's'] : ['m1', 'm2', 's'])
    }
  })
})
