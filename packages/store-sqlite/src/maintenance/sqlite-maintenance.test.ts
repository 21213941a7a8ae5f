import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createDatabase } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { SqliteCompaction, sqliteMaintenance } from './sqlite-maintenance.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-compaction-'))
  dirs.push(dir)
  return path.join(dir, 'memory.db')
}
const autoVacuum = (file: string) => {
  const db = new Database(file, { readonly: true })
  const mode = db.pragma('auto_vacuum', { simple: true })
  db.close()
  return mode
}
const quiet = { info() {}, warn() {}, error() {}, debug() {} } as never

describe('SQLite compaction', () => {
  it('creates new files with incremental auto-vacuum', () => {
    const file = tempFile()
    applyMigrations(file, migrationsDirectory())
    expect(autoVacuum(file)).toBe(2)
  })

  it('converts an older file once (full VACUUM), then vacuums incrementally; a dry run changes nothing', async () => {
    const file = tempFile()
    // A file from before: tables created without auto-vacuum, then a large table dropped (free pages).
    const old = new Database(file)
    old.exec(
      `CREATE TABLE filler (t TEXT);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
       INSERT INTO filler SELECT hex(randomblob(2000)) FROM n`,
    )
    old.close()
    applyMigrations(file, migrationsDirectory())
    const raw = new Database(file)
    raw.exec('DROP TABLE filler')
    raw.close()
    expect(autoVacuum(file)).toBe(0)
    const db = createDatabase(file)
    try {
      const compaction = new SqliteCompaction(db, null, quiet)
      const dry = await compaction.compact({ dryRun: true, vectorRebuildDeletedShare: 0.2 })
      expect(dry.steps.map((s) => s.name)).toEqual(['vacuum'])
      expect(dry.steps[0]?.detail).toMatch(/^dry run: \d+ bytes of free pages/)
      expect(dry.bytesAfter).toBe(dry.bytesBefore)
      expect(autoVacuum(file)).toBe(0)

      const first = await compaction.compact({ dryRun: false, vectorRebuildDeletedShare: 0.2 })
      expect(first.steps.map((s) => s.name)).toEqual(['full-text merge', 'vacuum', 'WAL checkpoint'])
      expect(first.steps[1]?.detail).toMatch(/converted to incremental auto-vacuum/)
      expect(first.bytesBefore).not.toBeNull()
      // The dropped table's pages went back to the file system.
      expect(first.bytesAfter as number).toBeLessThan((first.bytesBefore as number) - 500_000)
      expect(autoVacuum(file)).toBe(2)

      const second = await compaction.compact({ dryRun: false, vectorRebuildDeletedShare: 0.2 })
      expect(second.steps[1]?.detail).toMatch(/^incremental vacuum of \d+ bytes/)
    } finally {
      await db.$disconnect()
    }
  })
})

describe('retention candidates', () => {
  it('leaves conversations a pinned memory keeps out of the query, so they never fill a run’s limit', async () => {
    const file = tempFile()
    applyMigrations(file, migrationsDirectory())
    const db = createDatabase(file)
    try {
      const old = new Date('2026-01-01T00:00:00.000Z')
      await db.agent.create({ data: { id: 'a', name: 'a' } })
      // The oldest conversations are kept by pinned memories; the newest expired one is not.
      for (const [i, conversationId] of ['kept-1', 'kept-2', 'free'].entries())
        await db.session.create({
          data: {
            id: `s${i}`,
            agentId: 'a',
            conversationId,
            createdAt: old,
            updatedAt: new Date(old.getTime() + i),
          },
        })
      for (const conversationId of ['kept-1', 'kept-2'])
        await db.memoryItem.create({
          data: {
            agentId: 'a',
            content: `pinned from ${conversationId}`,
            category: 'FACT',
            pinned: true,
            sourceConversationId: conversationId,
            validFrom: old,
            contentHash: conversationId,
            tokenCount: 4,
            createdAt: old,
            updatedAt: old,
          },
        })
      const expired = await sqliteMaintenance(db).expiredConversations(
        'a',
        new Date('2026-06-01T00:00:00.000Z'),
        1,
      )
      expect(expired).toEqual([{ conversationId: 'free', messages: 0 }])
    } finally {
      await db.$disconnect()
    }
  })
})
