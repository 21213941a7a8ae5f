import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { goalWords } from '@engram/core'
import type { TrajectoryRecord } from '@engram/engine'
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3'
import Database3 from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { PrismaClient } from '../generated/prisma/client.ts'
import { trajectoriesIn } from './sqlite-trajectories.ts'

/** Spec 004's scale: 10,000 trajectories of one (agent, scope, domain). */
const TRAJECTORIES = 10_000
const VERBS = ['search', 'open', 'buy', 'compare', 'filter', 'review', 'book', 'cancel', 'track', 'return']
const THINGS = Array.from({ length: 200 }, (_, i) => `item${i}`)
const T0 = Date.parse('2026-01-01T00:00:00.000Z')

/** A goal of a verb and three things, spread so each word is in a small share of the goals. */
const goalOf = (i: number) =>
  `${VERBS[i % VERBS.length]} ${THINGS[i % THINGS.length]} ${THINGS[(i * 7) % THINGS.length]} ${THINGS[(i * 13 + 5) % THINGS.length]}`

function trajectory(i: number): TrajectoryRecord {
  const goal = goalOf(i)
  return {
    id: `t${i}`,
    agentId: 'big',
    scope: 'default',
    domain: 'shop.example',
    origin: 'https://shop.example',
    goal,
    words: goalWords(goal),
    runId: null,
    steps: [
      {
        action: 'click',
        selector: '#go',
        value: null,
        url: null,
        verified: true,
        durationMs: 5,
        extra: null,
      },
    ],
    stepCount: 1,
    verifiedCount: 1,
    success: i % 10 !== 0,
    turns: 3,
    durationMs: 1_000 + i,
    outcome: null,
    model: null,
    recordedAt: new Date(T0 + i * 60_000),
    extra: null,
  }
}

let dir: string
let file: string
let db: PrismaClient
const queries: { query: string; params: string }[] = []

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-trajectories-'))
  file = path.join(dir, 'trajectories.db')
  applyMigrations(file, migrationsDirectory())
  // A client that reports its statements, so the plan read below is of the statement Prisma sends.
  db = new PrismaClient({
    adapter: new PrismaBetterSqlite3({ url: `file:${file}` }),
    log: [{ emit: 'event', level: 'query' }],
  })
  // The client's type leaves out the events its options turn on.
  const events = db as unknown as {
    $on(event: 'query', listener: (e: { query: string; params: string }) => void): void
  }
  events.$on('query', (e) => queries.push({ query: e.query, params: e.params }))
  await db.$executeRawUnsafe(`INSERT INTO "Agent" ("id", "name") VALUES ('big', 'big'), ('small', 'small')`)
  // Written in two statements (the repository's restore takes minutes here under load): goalOf's
  // goals and their distinct words, in the format Prisma writes dates and JSON.
  const verbs = `json('${JSON.stringify(VERBS)}')`
  await db.$executeRawUnsafe(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${TRAJECTORIES - 1}),
    g AS (SELECT i, json_extract(${verbs}, '$[' || (i % ${VERBS.length}) || ']') AS verb,
                 'item' || (i % ${THINGS.length}) AS a, 'item' || ((i * 7) % ${THINGS.length}) AS b,
                 'item' || ((i * 13 + 5) % ${THINGS.length}) AS c FROM n)
    INSERT INTO "Trajectory" ("agentId", "id", "scope", "domain", "origin", "goal", "words", "steps", "stepCount",
      "verifiedCount", "success", "turns", "durationMs", "recordedAt")
    SELECT 'big', 't' || i, 'default', 'shop.example', 'https://shop.example', verb || ' ' || a || ' ' || b || ' ' || c,
      json_array(verb, a, b, c), '[]', 1, 1, i % 10 != 0, 3, 1000 + i,
      strftime('%Y-%m-%dT%H:%M:%S.000+00:00', '2026-01-01', '+' || i || ' minutes') FROM g`)
  await db.$executeRawUnsafe(`INSERT OR IGNORE INTO "TrajectoryWord" ("agentId", "trajectoryId", "scope", "domain", "word", "success", "recordedAt")
    SELECT t."agentId", t."id", t."scope", t."domain", w.value, t."success", t."recordedAt" FROM "Trajectory" t, json_each(t."words") w`)
  await db.$executeRawUnsafe('ANALYZE')
}, 120_000)
afterAll(async () => {
  await db?.$disconnect()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('trajectory candidates at 10,000 trajectories in one domain (SQLite)', () => {
  it('are read by index seeks on the goal-word index, never a scan of the domain', async () => {
    const repository = trajectoriesIn(db)
    // The words of one stored goal: it shares all four, others share two or three.
    const words = goalWords(goalOf(1234))
    const query = { scope: 'default', domain: 'shop.example', words, minShared: 2, since: new Date(T0) }
    // The first call opens the connection; the second is timed.
    await repository.trajectoryCandidates('big', query, 10)
    queries.length = 0
    const started = performance.now()
    const found = await repository.trajectoryCandidates('big', query, 10)
    const elapsed = performance.now() - started
    // What they are: successful, sharing ≥ 2 words, most shared first then newest (checked against
    // the goals themselves).
    const expected = Array.from({ length: TRAJECTORIES }, (_, i) => trajectory(i))
      .filter((t) => t.success)
      .map((t) => ({ t, shared: t.words.filter((w) => words.includes(w)).length }))
      .filter(({ shared }) => shared >= 2)
      .sort((a, b) => b.shared - a.shared || b.t.recordedAt.getTime() - a.t.recordedAt.getTime())
      .slice(0, 10)
      .map(({ t }) => t.id)
    expect(found.map((c) => c.id)).toEqual(expected)
    expect(found.length).toBeGreaterThan(0)

    const grouped = queries.find((q) => q.query.includes('TrajectoryWord'))
    expect(grouped).toBeDefined()
    const params = JSON.parse(grouped?.params ?? '[]') as unknown[]
    const direct = new Database3(file, { readonly: true })
    const plan = (
      direct.prepare(`EXPLAIN QUERY PLAN ${grouped?.query}`).all(...params.map(bindable)) as {
        detail: string
      }[]
    ).map((row) => row.detail)
    direct.close()
    console.info(
      `trajectoryCandidates at ${TRAJECTORIES} trajectories: ${elapsed.toFixed(1)} ms\n${grouped?.query}\nEXPLAIN QUERY PLAN:\n  ${plan.join('\n  ')}`,
    )
    expect(plan.join('\n')).toMatch(
      /SEARCH .*TrajectoryWord USING COVERING INDEX TrajectoryWord_agentId_scope_domain_word_success_recordedAt_trajectoryId_idx \(agentId=\? AND scope=\? AND domain=\? AND word=\? AND success=\? AND recordedAt>\?\)/,
    )
    expect(plan.some((detail) => /^SCAN/.test(detail) && /Trajectory/.test(detail))).toBe(false)
    // The winners' rows by primary key.
    const rows = queries.find((q) => /FROM [`"]main[`"]\.[`"]Trajectory[`"] WHERE/.test(q.query))
    expect(rows).toBeDefined()
  })
})

/** Prisma's logged parameters as better-sqlite3 binds them (booleans as integers). */
function bindable(value: unknown): unknown {
  return typeof value === 'boolean' ? Number(value) : value
}
