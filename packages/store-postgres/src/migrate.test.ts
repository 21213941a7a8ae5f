import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createDatabase } from '@engram/test-servers'
import pg from 'pg'
import { afterEach, describe, expect, inject, it } from 'vitest'
import { Prisma } from './generated/prisma/client.ts'
import { applyPostgresMigrations, MigrationError, postgresMigrationsDirectory } from './migrate.ts'

// Every model of the Postgres schema is a table.
const MODELS = Object.values(Prisma.ModelName)

const clients: pg.Client[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end()))
})

async function freshDatabase(): Promise<{ url: string; db: pg.Client }> {
  const url = await createDatabase(inject('postgresUrl'))
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  clients.push(db)
  return { url, db }
}

async function indexes(db: pg.Client): Promise<Map<string, string>> {
  const rows = await db.query<{ indexname: string; indexdef: string }>(
    "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'",
  )
  return new Map(rows.rows.map((r) => [r.indexname, r.indexdef]))
}

describe('the Postgres migrations (prisma/postgres/migrations) on postgresql-15', () => {
  it('create every table with the Postgres types, and record themselves as Prisma does', async () => {
    const { url, db } = await freshDatabase()
    const { applied } = await applyPostgresMigrations(url)
    const committed = fs
      .readdirSync(postgresMigrationsDirectory(), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort()
    expect(applied).toEqual(committed)
    expect(applied.length).toBeGreaterThan(0)

    const tables = await db.query<{ tablename: string }>(
      "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    )
    expect(tables.rows.map((r) => r.tablename).sort()).toEqual([...MODELS, '_prisma_migrations'].sort())

    const types = await db.query<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = 'public' AND (table_name, column_name) IN
         (('Message', 'timestamp'), ('Message', 'metadata'), ('Embedding', 'vector'), ('MemoryItem', 'importance'))
       ORDER BY table_name, column_name`,
    )
    expect(types.rows).toEqual([
      { table_name: 'Embedding', column_name: 'vector', data_type: 'bytea' },
      { table_name: 'MemoryItem', column_name: 'importance', data_type: 'double precision' },
      { table_name: 'Message', column_name: 'metadata', data_type: 'text' },
      { table_name: 'Message', column_name: 'timestamp', data_type: 'timestamp with time zone' },
    ])

    const recorded = await db.query<{ migration_name: string; finished: boolean }>(
      'SELECT migration_name, finished_at IS NOT NULL AS finished FROM "_prisma_migrations" ORDER BY migration_name',
    )
    expect(recorded.rows).toEqual(committed.map((name) => ({ migration_name: name, finished: true })))
  })

  it("have spec 002's indexes: agent + thread, agent + time, the partial important-memory index, BRIN on creation time", async () => {
    const { url, db } = await freshDatabase()
    await applyPostgresMigrations(url)
    const byName = await indexes(db)
    for (const table of ['Message', 'MemoryEntry']) {
      expect(byName.get(`${table}_agentId_sessionId_idx`)).toMatch(/\("agentId", "sessionId"\)/)
      expect(byName.get(`${table}_agentId_timestamp_idx`)).toMatch(/\("agentId", "timestamp" DESC\)/)
    }
    expect(byName.get('MemoryItem_agentId_importance_idx')).toMatch(/\("agentId", importance DESC\)/)
    expect(byName.get('MemoryItem_recent_important_idx')).toMatch(
      /\("agentId", "createdAt" DESC\) WHERE \(importance > \(0\.7\)::double precision\)/,
    )
    for (const table of ['Message', 'MemoryEntry', 'MemoryItem', 'Embedding']) {
      expect(byName.get(`${table}_createdAt_idx`)).toMatch(/USING brin \("createdAt"\)/)
    }
    // Postgres plans the partial index for the query it was made for.
    await db.query('SET enable_seqscan = off')
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT id FROM "MemoryItem" WHERE "agentId" = 'a' AND importance > 0.7 ORDER BY "createdAt" DESC LIMIT 10`,
    )
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/MemoryItem_recent_important_idx/)
  })

  it('delete the vectors of a deleted memory, knowledge entry, message or summary, as on SQLite', async () => {
    const { url, db } = await freshDatabase()
    await applyPostgresMigrations(url)
    const triggers = await db.query<{ tgname: string }>(
      "SELECT tgname FROM pg_trigger WHERE tgname LIKE '%_embedding_delete' ORDER BY tgname",
    )
    expect(triggers.rows.map((r) => r.tgname)).toEqual([
      'Knowledge_embedding_delete',
      'MemoryItem_embedding_delete',
      'Message_embedding_delete',
      'Summary_embedding_delete',
    ])
    const now = new Date('2026-11-26T00:00:00Z')
    await db.query(`INSERT INTO "Agent" (id, name) VALUES ('a', 'A'), ('b', 'B')`)
    const memory = await db.query<{ id: number }>(
      `INSERT INTO "MemoryItem" ("agentId", content, category, "validFrom", "contentHash", "tokenCount", "createdAt", "updatedAt")
       VALUES ('a', 'likes tea', 'preference', $1, 'h', 2, $1, $1) RETURNING id`,
      [now],
    )
    const memoryId = memory.rows[0]?.id
    if (memoryId === undefined) throw new Error('no memory id returned')
    const vector = Buffer.from(new Float32Array([0.6, 0.8]).buffer)
    for (const [kind, agent] of [
      ['memory', 'a'],
      ['message', 'a'],
      ['memory', 'b'],
    ] as const) {
      await db.query(
        `INSERT INTO "Embedding" (kind, "ownerId", "agentId", model, dimensions, vector, "contentHash", "createdAt")
         VALUES ($1, $2, $3, 'm', 2, $4, 'h', $5)`,
        [kind, kind === 'memory' && agent === 'b' ? memoryId + 1000 : memoryId, agent, vector, now],
      )
    }
    await db.query('DELETE FROM "MemoryItem" WHERE id = $1', [memoryId])
    const left = await db.query<{ kind: string; agentId: string }>(
      'SELECT kind, "agentId" FROM "Embedding" ORDER BY kind, "agentId"',
    )
    // The message's vector with the same owner id and the other agent's memory vector stay.
    expect(left.rows).toEqual([
      { kind: 'memory', agentId: 'b' },
      { kind: 'message', agentId: 'a' },
    ])
  })

  it('apply nothing the second time, and once when replicas start together', async () => {
    const { url, db } = await freshDatabase()
    const runs = await Promise.all([applyPostgresMigrations(url), applyPostgresMigrations(url)])
    const committed = runs[0].applied.length + runs[1].applied.length
    expect(Math.min(runs[0].applied.length, runs[1].applied.length)).toBe(0)
    expect(committed).toBeGreaterThan(0)
    expect((await applyPostgresMigrations(url)).applied).toEqual([])
    const recorded = await db.query('SELECT 1 FROM "_prisma_migrations"')
    expect(recorded.rowCount).toBe(committed)
  })

  it('refuse a migration edited after it was applied, and roll back one that fails', async () => {
    const { url, db } = await freshDatabase()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-pg-migrations-'))
    try {
      fs.mkdirSync(path.join(dir, '1_first'))
      fs.writeFileSync(path.join(dir, '1_first', 'migration.sql'), 'CREATE TABLE "T" (id int);')
      await applyPostgresMigrations(url, dir)
      fs.writeFileSync(path.join(dir, '1_first', 'migration.sql'), 'CREATE TABLE "T" (id bigint);')
      await expect(applyPostgresMigrations(url, dir)).rejects.toThrow(/1_first was modified/)

      fs.writeFileSync(path.join(dir, '1_first', 'migration.sql'), 'CREATE TABLE "T" (id int);')
      fs.mkdirSync(path.join(dir, '2_broken'))
      fs.writeFileSync(
        path.join(dir, '2_broken', 'migration.sql'),
        'CREATE TABLE "U" (id int);\nALTER TABLE "Missing" ADD COLUMN x int;',
      )
      const failure = applyPostgresMigrations(url, dir)
      await expect(failure).rejects.toBeInstanceOf(MigrationError)
      await expect(failure).rejects.toThrow(/2_broken failed: relation "Missing" does not exist/)
      const u = await db.query(`SELECT 1 FROM pg_tables WHERE tablename = 'U'`)
      expect(u.rowCount).toBe(0)
      const recorded = await db.query<{ migration_name: string }>(
        'SELECT migration_name FROM "_prisma_migrations"',
      )
      expect(recorded.rows).toEqual([{ migration_name: '1_first' }])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
