import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database3 from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { type Database, registerHotReader } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { type MemoryRowReads, SqliteRecallSources } from './sqlite-recall-sources.ts'

// Search reads its ~100 candidate memories' rows by id. Written after the connection gathered its
// planner statistics (at open, then hourly), an agent's rows have none, and SQLite then walked the
// agent's whole (agentId, …) index for `"id" IN (...) AND "agentId" = ?`: 4.3 ms per search at 10K
// memories, growing with the agent (issue 18, memsearch18). The rows must come by their key, and be
// the same rows as before.

const T0 = '2026-01-01T00:00:00.000+00:00'
const LATER = '2026-06-01T00:00:00.000+00:00'
const AS_OF = new Date('2026-03-01T00:00:00.000Z')
const MEMORIES = 2_000

const dirs: string[] = []
const connections: Database3.Database[] = []
afterEach(() => {
  for (const connection of connections.splice(0)) connection.close()
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A migrated file with one large agent and a small one, no planner statistics, and its reader. */
function seeded() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-recall-'))
  dirs.push(dir)
  const file = path.join(dir, 'test.db')
  applyMigrations(file, migrationsDirectory())
  const connection = new Database3(file)
  connections.push(connection)
  const agent = connection.prepare(`INSERT INTO "Agent" ("id", "name", "createdAt") VALUES (?, ?, '${T0}')`)
  const memory = connection.prepare(
    `INSERT INTO "MemoryItem" ("agentId", "content", "category", "contentHash", "tokenCount", "createdAt",
       "updatedAt", "validFrom", "validUntil", "tags", "metadata")
     VALUES (?, ?, 'fact', ?, 3, ?, ?, ?, ?, '["t"]', '{"k":1}')`,
  )
  connection.transaction(() => {
    agent.run('big', 'big')
    agent.run('small', 'small')
    for (let i = 1; i <= MEMORIES; i++)
      // Every 10th has ended before AS_OF (superseded); every 25th begins after it.
      memory.run('big', `fact ${i}`, `h${i}`, T0, T0, i % 25 === 0 ? LATER : T0, i % 10 === 0 ? T0 : null)
    for (let i = 1; i <= 5; i++) memory.run('small', `other ${i}`, `o${i}`, T0, T0, T0, null)
  })()
  // The statements as the recall sources run them, on this connection (the app's connection would
  // run them alike): recorded, so their plans can be read.
  const statements: string[] = []
  const db = {} as Database
  registerHotReader(db, async (sql, params) => {
    statements.push(sql)
    return connection.prepare(sql).all(...(params as unknown[]))
  })
  const plan = (sql: string, params: unknown[]) =>
    (connection.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
      .map((row) => row.detail)
      .join('; ')
  return { recall: new SqliteRecallSources(db), statements, plan }
}

describe('SqliteRecallSources.memoryItems', () => {
  // Ids of the large agent's memories spread over its rows, one of the small agent's, one unknown.
  const ids = [...Array.from({ length: 100 }, (_, i) => String(1 + i * 19)), String(MEMORIES + 2), '999999']

  it('reads search candidates by primary key, with or without statistics', async () => {
    const { recall, statements, plan } = seeded()
    const read = async (way: MemoryRowReads) => {
      recall.memoryRowReads = way
      statements.length = 0
      const rows = await recall.memoryItems('big', ids, { asOf: AS_OF })
      const sql = statements[0] as string
      return { rows, plan: plan(sql, [JSON.stringify(ids.map(Number)), 'big']) }
    }
    const before = await read('planner')
    // The setting this guards against: without statistics the planner walks the agent's index.
    expect(before.plan).toMatch(/USING INDEX MemoryItem_agentId/)
    const after = await read('primary-key')
    expect(after.plan).toMatch(/INTEGER PRIMARY KEY/)
    expect(after.plan).not.toMatch(/MemoryItem_agentId/)
    const byId = (rows: { id: string }[]) => [...rows].sort((a, b) => Number(a.id) - Number(b.id))
    expect(byId(after.rows)).toEqual(byId(before.rows))
  })

  it('keeps to the agent and to the memories valid at asOf', async () => {
    const { recall } = seeded()
    const rows = await recall.memoryItems('big', ids, { asOf: AS_OF })
    const found = rows.map((row) => Number(row.id))
    const expected = ids
      .map(Number)
      .filter((id) => id <= MEMORIES && id % 10 !== 0 && id % 25 !== 0)
      .sort((a, b) => a - b)
    expect([...found].sort((a, b) => a - b)).toEqual(expected)
    expect(rows.every((row) => row.agentId === 'big')).toBe(true)
    // The whole row, as search hands it on (tags and metadata parsed, times as dates).
    expect(rows.find((row) => row.id === '1')).toMatchObject({
      content: 'fact 1',
      tags: ['t'],
      metadata: { k: 1 },
      validFrom: new Date(T0),
      validUntil: null,
    })
    // Superseded rows come back when asked for (relationship sources read them so).
    const all = await recall.memoryItems('big', ids, { asOf: AS_OF, includeSuperseded: true })
    expect(all.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual(
      ids
        .map(Number)
        .filter((id) => id <= MEMORIES)
        .sort((a, b) => a - b),
    )
    expect(await recall.memoryItems('small', ids, { asOf: AS_OF })).toEqual([
      expect.objectContaining({ id: String(MEMORIES + 2), agentId: 'small' }),
    ])
  })
})
