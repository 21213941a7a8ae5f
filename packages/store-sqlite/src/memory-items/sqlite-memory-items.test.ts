import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Clock } from '@engram/core'
import type { NewMemoryItem } from '@engram/engine'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { createSqliteStorage } from '../storage.ts'

const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const directories: string[] = []
const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

afterEach(() => {
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

function open() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-memory-items-'))
  directories.push(dir)
  const file = path.join(dir, 'engram.db')
  applyMigrations(file, migrationsDirectory())
  return createSqliteStorage({ db: createDatabase(file), clock, log: quiet })
}

function item(content: string, changes: Partial<NewMemoryItem> = {}): NewMemoryItem {
  return {
    userId: 'u1',
    content,
    category: 'fact',
    tags: ['home', 'city'],
    importance: 0.7,
    confidence: 1,
    pinned: true,
    sourceConversationId: 'c1',
    sourceMessageId: '12',
    validFrom: new Date('2026-01-01T00:00:00.000Z'),
    validUntil: new Date('2026-06-01T00:00:00.000Z'),
    metadata: { memoryType: 'fact', sourceMessageIds: ['12'] },
    contentHash: 'hash',
    tokenCount: 6,
    createdAt: clock.now(),
    ...changes,
  }
}

// A verified write's row goes in on a prepared statement inside the transaction: these check it is
// the same row Prisma writes and reads, and that it is part of the transaction.
describe('the memory-item repository on SQLite: prepared writes inside a transaction', () => {
  it('stores the same row as Prisma outside one, read back alike, and counted and verified alike', async () => {
    const { memoryItems, repositories } = open()
    await repositories.agents.upsert('a', null)
    const prepared = await memoryItems.transaction((items) => items.create('a', item('Lives in Lisbon')))
    const viaPrisma = await memoryItems.create('a', item('Lives in Porto'))
    const { id: _a, content: _c, ...rest } = prepared
    const { id: _b, content: _d, ...same } = viaPrisma
    expect(rest).toEqual(same)
    expect(await memoryItems.find('a', prepared.id)).toEqual(prepared)
    expect(prepared).toMatchObject({
      pinned: true,
      tags: ['home', 'city'],
      supersededById: null,
      accessCount: 0,
    })

    // Valid from January to June: current in March, not in July, by the prepared reads as by Prisma's.
    const march = new Date('2026-03-01T00:00:00.000Z')
    const july = new Date('2026-07-01T00:00:00.000Z')
    expect(await memoryItems.countCurrent('a', march)).toBe(2)
    expect(await memoryItems.countCurrent('a', july)).toBe(0)
    expect(await memoryItems.count('a', { validAt: march })).toBe(2)
    expect((await memoryItems.currentAmong('a', 'u1', march, [prepared.id])).map((c) => c.id)).toEqual([
      prepared.id,
    ])
    expect(await memoryItems.currentAmong('a', 'u1', july, [prepared.id])).toEqual([])
    expect(await memoryItems.currentAmong('a', 'u2', march, [prepared.id])).toEqual([])
    expect(await memoryItems.sharingWords('a', 'Lisbon', 10)).toEqual([prepared.id])
    expect(await memoryItems.sharingWords('b', 'Lisbon', 10)).toEqual([])
  })

  it('rolls the prepared row back with the transaction it was written in', async () => {
    const { memoryItems, repositories } = open()
    await repositories.agents.upsert('a', null)
    await expect(
      memoryItems.transaction(async (items) => {
        const created = await items.create('a', item('Lives in Lisbon'))
        // The transaction's own reads see it before the commit.
        expect(await items.sharingWords('a', 'Lisbon', 10)).toEqual([created.id])
        throw new Error('disk full')
      }),
    ).rejects.toThrow('disk full')
    expect(await memoryItems.count('a', { validAt: null })).toBe(0)
    expect(await memoryItems.sharingWords('a', 'Lisbon', 10)).toEqual([])
  })
})

// Search's access flush writes on one prepared statement by primary key (the planner walked the
// agent's whole index through Prisma's updateMany and findMany): the rows it returns are those
// Prisma reads back, in the order asked, and only the agent's are counted.
describe('the memory-item repository on SQLite: access writes', () => {
  it('counts the memories of the agent named, returning the rows as Prisma reads them', async () => {
    const { memoryItems, repositories } = open()
    await repositories.agents.upsert('a', null)
    await repositories.agents.upsert('b', null)
    const mine = [
      await memoryItems.create('a', item('Lives in Lisbon', { validUntil: null })),
      await memoryItems.create('a', item('Works in Porto', { validUntil: null, metadata: { k: 1 } })),
    ]
    const theirs = await memoryItems.create('b', item('Lives in Faro', { validUntil: null }))
    const at = new Date('2026-01-20T08:00:00.000Z')
    const ids = [mine[1]?.id, theirs.id, mine[0]?.id, 'not-an-id'] as string[]
    const first = await memoryItems.recordAccess('a', ids, at)
    expect(first.map((m) => m.id)).toEqual([mine[1]?.id, mine[0]?.id])
    expect(first.map((m) => [m.accessCount, m.lastAccessedAt])).toEqual([
      [1, at],
      [1, at],
    ])
    // Inside a transaction too (one connection): one access further on.
    const later = new Date('2026-01-21T08:00:00.000Z')
    const second = await memoryItems.transaction((items) => items.recordAccess('a', ids, later))
    expect(second).toEqual(first.map((m) => ({ ...m, accessCount: 2, lastAccessedAt: later })))
    // Prisma's read of the rows (find) is what the write returned.
    expect(await memoryItems.find('a', mine[0]?.id as string)).toEqual(second[1])
    expect(await memoryItems.find('a', mine[1]?.id as string)).toEqual(second[0])
    // The other agent's memory was named both times and never counted.
    expect((await memoryItems.find('b', theirs.id))?.accessCount).toBe(0)
  })
})
