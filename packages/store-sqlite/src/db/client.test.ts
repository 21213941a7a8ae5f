import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database3 from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import {
  createDatabase,
  type Database,
  directSqlite,
  type GroupCommitSavepoints,
  sqliteDate,
} from './client.ts'
import { applyMigrations, migrationsDirectory } from './migrate.ts'

const opened: { db: Database; dir: string }[] = []
afterEach(async () => {
  for (const { db, dir } of opened.splice(0)) {
    await db.$disconnect()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

function database(groupCommitSavepoints?: GroupCommitSavepoints) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-direct-'))
  const file = path.join(dir, 'test.db')
  applyMigrations(file, migrationsDirectory())
  const db = createDatabase(file, groupCommitSavepoints ? { groupCommitSavepoints } : {})
  opened.push({ db, dir })
  const direct = directSqlite(db)
  if (!direct) throw new Error('no direct connection')
  return { db, direct, file }
}

const INSERT_AGENT = `INSERT INTO "Agent" ("id", "name", "createdAt") VALUES (?, ?, '2026-01-01T00:00:00.000+00:00')`
const agentIds = (db: Database) =>
  db.agent.findMany({ orderBy: { id: 'asc' } }).then((rows) => rows.map((r) => r.id))

describe('direct writes on the Prisma connection', () => {
  it('sets the connection pragmas when the connection opens', async () => {
    const { direct } = database()
    expect(await direct.get('PRAGMA journal_mode')).toEqual({ journal_mode: 'wal' })
    expect(await direct.get('PRAGMA synchronous')).toEqual({ synchronous: 1 })
    expect(await direct.get('PRAGMA busy_timeout')).toEqual({ timeout: 5_000 })
    expect(await direct.get('PRAGMA foreign_keys')).toEqual({ foreign_keys: 1 })
  })

  it("waits for another process's write lock without holding up the event loop, then commits with what joined meanwhile", async () => {
    const { db, direct, file } = database()
    await direct.get('SELECT 1')
    // Another process's writer (here: another connection) holds the write lock.
    const other = new Database3(file)
    other.prepare('BEGIN IMMEDIATE').run()
    let committed = 0
    const first = direct.write((sql) => sql.run(INSERT_AGENT, 'first', 'x')).then(() => committed++)
    // Timers keep firing while the write waits: the loop was not blocked for the lock's duration.
    let ticks = 0
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2))
      ticks++
    }
    expect(ticks).toBe(20)
    expect(committed).toBe(0)
    const second = direct.write((sql) => sql.run(INSERT_AGENT, 'second', 'x')).then(() => committed++)
    other.prepare('COMMIT').run()
    other.close()
    await Promise.all([first, second])
    expect(committed).toBe(2)
    expect(await agentIds(db)).toEqual(['first', 'second'])
    // The connection's own wait for locks is back to its setting.
    expect(await direct.get('PRAGMA busy_timeout')).toEqual({ timeout: 5_000 })
  })

  // `order` is every run of a write's callback: with savepoints only on failure, the batch ran
  // whole first and, when b threw, was rolled back there and run again with a savepoint per write.
  it.each([
    ['on-failure', ['a', 'b', 'a', 'b', 'c']],
    ['each', ['a', 'b', 'c']],
  ] as const)(
    'group commit (savepoints %s): writes asked for together commit together, in order, each all or nothing',
    async (savepoints, runs) => {
      const { db, direct } = database(savepoints)
      const order: string[] = []
      const write = (id: string, fail = false) =>
        direct.write((sql) => {
          order.push(id)
          sql.run(INSERT_AGENT, `${id}-1`, id)
          sql.run(INSERT_AGENT, `${id}-2`, id)
          if (fail) throw new Error(`${id} refused`)
          return sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM "Agent"`)?.n
        })
      const results = await Promise.allSettled([write('a'), write('b', true), write('c')])
      expect(order).toEqual(runs)
      // a saw its own two rows; c saw a's and its own: b's were rolled back before c ran.
      expect(results).toEqual([
        { status: 'fulfilled', value: 2 },
        { status: 'rejected', reason: new Error('b refused') },
        { status: 'fulfilled', value: 4 },
      ])
      expect(await agentIds(db)).toEqual(['a-1', 'a-2', 'c-1', 'c-2'])
    },
  )

  it('runs a batch without failures once, and a lone failing write once, leaving nothing of it', async () => {
    const { db, direct } = database()
    const order: string[] = []
    const write = (id: string, fail = false) =>
      direct.write((sql) => {
        order.push(id)
        sql.run(INSERT_AGENT, id, id)
        if (fail) throw new Error(`${id} refused`)
        return id
      })
    expect(await Promise.all([write('a'), write('b'), write('c')])).toEqual(['a', 'b', 'c'])
    expect(order).toEqual(['a', 'b', 'c'])
    await expect(write('d', true)).rejects.toThrow('d refused')
    expect(order).toEqual(['a', 'b', 'c', 'd'])
    expect(await agentIds(db)).toEqual(['a', 'b', 'c'])
    // The connection is out of the failed transaction: the next write commits.
    expect(await write('e')).toBe('e')
    expect(await agentIds(db)).toEqual(['a', 'b', 'c', 'e'])
  })

  it.each(['on-failure', 'each'] as const)(
    'a failed statement rolls back only its own write (savepoints %s)',
    async (savepoints) => {
      const { db, direct } = database(savepoints)
      const [first, duplicate] = await Promise.allSettled([
        direct.write((sql) => sql.run(INSERT_AGENT, 'x', 'x')),
        direct.write((sql) => {
          sql.run(INSERT_AGENT, 'y', 'y')
          sql.run(INSERT_AGENT, 'x', 'again') // primary key taken
        }),
      ])
      expect(first.status).toBe('fulfilled')
      expect(duplicate.status).toBe('rejected')
      expect(await agentIds(db)).toEqual(['x'])
    },
  )

  it('waits for an open Prisma transaction instead of joining it, so its rollback keeps the write', async () => {
    const { db, direct } = database()
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let entered = () => {}
    const inside = new Promise<void>((resolve) => {
      entered = resolve
    })
    const transaction = db.$transaction(async (tx) => {
      await tx.agent.create({ data: { id: 'in-tx', name: 'rolled back' } })
      entered()
      await held
      throw new Error('roll back')
    })
    await inside
    let written = false
    const write = direct.write((sql) => {
      written = true
      return sql.run(INSERT_AGENT, 'direct', 'kept')
    })
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(written).toBe(false)
    release()
    await expect(transaction).rejects.toThrow('roll back')
    await write
    expect(await agentIds(db)).toEqual(['direct'])
  })

  it('reads what another connection committed', async () => {
    const { direct, file } = database()
    const other = new Database3(file)
    other.prepare(INSERT_AGENT).run('elsewhere', 'e')
    other.close()
    expect(await direct.get(`SELECT "id" FROM "Agent"`)).toEqual({ id: 'elsewhere' })
  })
})

describe('query planner statistics', () => {
  it('are gathered when a connection opens, so an id lookup within a large agent uses the key', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-stats-'))
    const file = path.join(dir, 'test.db')
    applyMigrations(file, migrationsDirectory())
    // Written by another connection: one agent with many memories, no statistics yet.
    const seed = new Database3(file)
    seed.prepare(INSERT_AGENT).run('big', 'big')
    const insert = seed.prepare(
      `INSERT INTO "MemoryItem" ("agentId", "content", "category", "contentHash", "tokenCount", "createdAt", "updatedAt", "validFrom") VALUES ('big', ?, 'FACT', ?, 3, '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00')`,
    )
    seed.transaction(() => {
      for (let i = 0; i < 2_000; i++) insert.run(`fact ${i}`, `hash${i}`)
    })()
    const lookup = `SELECT * FROM "MemoryItem" WHERE "agentId" = ? AND "id" IN (5, 6, 7, 8, 9, 10, 11, 12, 13, 14)`
    const plan = (connection: { prepare(sql: string): { all(...params: unknown[]): unknown[] } }) =>
      (connection.prepare(`EXPLAIN QUERY PLAN ${lookup}`).all('big') as { detail: string }[])
        .map((row) => row.detail)
        .join('; ')
    // Without statistics SQLite walks the agent's index.
    expect(plan(seed)).toMatch(/USING INDEX "?MemoryItem_agentId/)
    seed.close()
    const db = createDatabase(file)
    opened.push({ db, dir })
    const direct = directSqlite(db)
    if (!direct) throw new Error('no direct connection')
    const rows = await direct.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${lookup}`, 'big')
    expect(rows.map((row) => row.detail).join('; ')).toMatch(/INTEGER PRIMARY KEY/)
    expect(await direct.get<{ n: number }>(`SELECT count(*) AS n FROM sqlite_stat1`)).not.toEqual({ n: 0 })
  })
})

describe('sqliteDate', () => {
  it('formats each instant as its own, whatever it formatted last', () => {
    const a = new Date('2026-01-15T10:00:00.000Z')
    const b = new Date('2026-01-15T10:00:00.001Z')
    expect(sqliteDate(a)).toBe('2026-01-15T10:00:00.000+00:00')
    expect(sqliteDate(new Date(a.getTime()))).toBe('2026-01-15T10:00:00.000+00:00')
    expect(sqliteDate(b)).toBe('2026-01-15T10:00:00.001+00:00')
    expect(sqliteDate(a)).toBe('2026-01-15T10:00:00.000+00:00')
    expect(() => sqliteDate(new Date(Number.NaN))).toThrow(RangeError)
  })
})
