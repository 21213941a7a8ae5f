import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type Database, directSqlite } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { sqliteGraph } from './sqlite-graph.ts'

const BIG = 3_000
const T = '2026-01-01T00:00:00.000+00:00'

let dir: string
let db: Database
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-graph-'))
  const file = path.join(dir, 'graph.db')
  applyMigrations(file, migrationsDirectory())
  db = createDatabase(file)
  // One agent with thousands of entities (person n, working at company n % 50), another with one.
  await db.$executeRawUnsafe(`INSERT INTO "Agent" ("id", "name") VALUES ('big', 'big'), ('small', 'small')`)
  await db.$executeRawUnsafe(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${BIG})
    INSERT INTO "GraphEntity" ("agentId", "type", "name", "normalizedName", "origin", "mentionCount",
      "firstSeenAt", "lastSeenAt", "createdAt", "updatedAt")
    SELECT 'big', 'PERSON', 'Person ' || i, 'person ' || i, 'FORMED', i % 7, '${T}', '${T}', '${T}', '${T}' FROM n`)
  await db.$executeRawUnsafe(`INSERT INTO "GraphEntityTerm" ("entityId", "agentId", "kind", "term")
    SELECT "id", "agentId", 'NAME', "normalizedName" FROM "GraphEntity"
    UNION ALL SELECT "id", "agentId", 'TOKEN', 'person' FROM "GraphEntity"
    UNION ALL SELECT "id", "agentId", 'TOKEN', substr("normalizedName", 8) FROM "GraphEntity"`)
  await db.$executeRawUnsafe(`INSERT INTO "GraphRelationship" ("agentId", "sourceId", "relation", "targetId",
      "confidence", "learntAt", "origin", "createdAt", "updatedAt")
    SELECT 'big', e."id", 'works at', 1 + (e."id" % 50), 0.5, '${T}', 'FORMED', '${T}', '${T}' FROM "GraphEntity" e`)
  await db.$executeRawUnsafe('ANALYZE')
}, 60_000)
afterAll(async () => {
  await db?.$disconnect()
  fs.rmSync(dir, { recursive: true, force: true })
})

const plan = async (sql: string, ...params: unknown[]) => {
  const direct = directSqlite(db)
  if (!direct) throw new Error('no direct connection')
  return (await direct.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, ...params))
    .map((row) => row.detail)
    .join('; ')
}

describe('the graph on SQLite at size', () => {
  it('finds entities by name and by token among thousands, most mentioned first', async () => {
    const graph = sqliteGraph(db)
    expect((await graph.entitiesByName('big', 'person 1234')).map((e) => e.name)).toEqual(['Person 1234'])
    expect(await graph.entitiesByName('small', 'person 1234')).toEqual([])
    expect((await graph.entitiesByTokens('big', ['17', '18'], 10)).map((e) => e.name)).toEqual([
      // 17 % 7 = 3 mentions, 18 % 7 = 4: most mentioned first.
      'Person 18',
      'Person 17',
    ])
    const common = await graph.entitiesByTokens('big', ['person'], 5)
    expect(common.map((e) => e.mentionCount)).toEqual([6, 6, 6, 6, 6])
    // Its own edge, and one from every 50th entity.
    expect(await graph.countEdgesOf('big', '1')).toBe(1 + BIG / 50)
  })

  it('reads terms, entities and edges through their indexes, not by scanning the agent', async () => {
    // The statements Prisma writes for the lookups (a term seek, then entities by key; edges by end).
    expect(
      await plan(
        `SELECT "entityId" FROM "GraphEntityTerm" WHERE "agentId" = ? AND "kind" = ? AND "term" IN (?, ?)`,
        'big',
        'TOKEN',
        '17',
        '18',
      ),
    ).toMatch(/USING (COVERING )?INDEX GraphEntityTerm_agentId_kind_term_idx/)
    expect(
      await plan(`SELECT * FROM "GraphEntity" WHERE "agentId" = ? AND "id" IN (?, ?)`, 'big', 17, 18),
    ).toMatch(/INTEGER PRIMARY KEY/)
    for (const end of ['sourceId', 'targetId'])
      expect(
        await plan(
          `SELECT * FROM "GraphRelationship" WHERE "agentId" = ? AND "${end}" IN (?, ?)`,
          'big',
          1,
          2,
        ),
      ).toMatch(new RegExp(`USING INDEX GraphRelationship_agentId_${end}_idx`))
    expect(
      await plan(
        `SELECT * FROM "GraphRelationship" WHERE "agentId" = ? AND "relation" = ?`,
        'big',
        'works at',
      ),
    ).toMatch(/USING INDEX GraphRelationship_agentId_relation_idx/)
    expect(
      await plan(
        `SELECT * FROM "GraphEvidence" WHERE "agentId" = ? AND "memoryId" IN (?, ?)`,
        'big',
        '1',
        '2',
      ),
    ).toMatch(/USING INDEX GraphEvidence_agentId_memoryId_idx/)
    expect(
      await plan(
        `SELECT * FROM "GraphEvidence" WHERE "agentId" = ? AND "messageId" IN (?, ?)`,
        'big',
        '1',
        '2',
      ),
    ).toMatch(/USING INDEX GraphEvidence_agentId_messageId_idx/)
  })
})
