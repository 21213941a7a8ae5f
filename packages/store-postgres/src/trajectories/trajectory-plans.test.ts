import { goalWords } from '@engram/core'
import { trajectoriesIn } from '@engram/store-sqlite'
import { createDatabase } from '@engram/test-servers'
import { PrismaPg } from '@prisma/adapter-pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type PostgresDatabase, sharedView } from '../db/client.ts'
import { PrismaClient } from '../generated/prisma/client.ts'
import { applyPostgresMigrations } from '../migrate.ts'

/** Spec 004's scale: 10,000 trajectories of one (agent, scope, domain). */
const TRAJECTORIES = 10_000
const VERBS = ['search', 'open', 'buy', 'compare', 'filter', 'review', 'book', 'cancel', 'track', 'return']
const THINGS = 200
const goalOf = (i: number) =>
  `${VERBS[i % VERBS.length]} item${i % THINGS} item${(i * 7) % THINGS} item${(i * 13 + 5) % THINGS}`

let client: PrismaClient
const queries: { query: string; params: string }[] = []

beforeAll(async () => {
  const url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
  // A client that reports its statements, so the plan read below is of the statement Prisma sends.
  client = new PrismaClient({
    adapter: new PrismaPg({ connectionString: url, max: 2 }),
    log: [{ emit: 'event', level: 'query' }],
  })
  // The client's type leaves out the events its options turn on.
  const events = client as unknown as {
    $on(event: 'query', listener: (e: { query: string; params: string }) => void): void
  }
  events.$on('query', (e) => queries.push({ query: e.query, params: e.params }))
  await client.$executeRawUnsafe(
    `INSERT INTO "Agent" ("id", "name") VALUES ('big', 'big'), ('small', 'small')`,
  )
  // goalOf's goals and their distinct words, in two statements, then what autovacuum would do.
  await client.$executeRawUnsafe(`INSERT INTO "Trajectory" ("agentId", "id", "scope", "domain", "origin", "goal", "words", "steps",
      "stepCount", "verifiedCount", "success", "turns", "durationMs", "recordedAt")
    SELECT 'big', 't' || i, 'default', 'shop.example', 'https://shop.example', g.verb || ' ' || g.a || ' ' || g.b || ' ' || g.c,
      json_build_array(g.verb, g.a, g.b, g.c)::text, '[]', 1, 1, i % 10 <> 0, 3, 1000 + i,
      timestamptz '2026-01-01 00:00:00+00' + i * interval '1 minute'
      FROM generate_series(0, ${TRAJECTORIES - 1}) i,
      LATERAL (SELECT (ARRAY['${VERBS.join("','")}'])[i % ${VERBS.length} + 1] AS verb, 'item' || (i % ${THINGS}) AS a,
                      'item' || ((i * 7) % ${THINGS}) AS b, 'item' || ((i * 13 + 5) % ${THINGS}) AS c) g`)
  await client.$executeRawUnsafe(`INSERT INTO "TrajectoryWord" ("agentId", "trajectoryId", "scope", "domain", "word", "success", "recordedAt")
    SELECT DISTINCT t."agentId", t."id", t."scope", t."domain", w, t."success", t."recordedAt"
      FROM "Trajectory" t, json_array_elements_text(t."words"::json) w`)
  await client.$executeRawUnsafe('VACUUM ANALYZE')
}, 120_000)
afterAll(async () => {
  await client?.$disconnect()
})

describe('trajectory candidates at 10,000 trajectories in one domain (Postgres)', () => {
  it('are read by index seeks on the goal-word index, never a sequential scan', async () => {
    const repository = trajectoriesIn(sharedView(client as unknown as PostgresDatabase))
    const words = goalWords(goalOf(1234))
    const query = {
      scope: 'default',
      domain: 'shop.example',
      words,
      minShared: 2,
      since: new Date('2026-01-01T00:00:00Z'),
    }
    // The first call opens the connection; the second is timed.
    await repository.trajectoryCandidates('big', query, 10)
    queries.length = 0
    const started = performance.now()
    const found = await repository.trajectoryCandidates('big', query, 10)
    const elapsed = performance.now() - started
    const expected = Array.from({ length: TRAJECTORIES }, (_, i) => ({ i, words: goalWords(goalOf(i)) }))
      .filter(({ i }) => i % 10 !== 0)
      .map(({ i, words: w }) => ({ i, shared: w.filter((x) => words.includes(x)).length }))
      .filter(({ shared }) => shared >= 2)
      .sort((a, b) => b.shared - a.shared || b.i - a.i)
      .slice(0, 10)
      .map(({ i }) => `t${i}`)
    expect(found.map((c) => c.id)).toEqual(expected)
    // Goals repeat every 200 trajectories: the newest copy of the asked goal comes first.
    expect(found[0]?.goal).toBe(goalOf(1234))

    const grouped = queries.find((q) => q.query.includes('TrajectoryWord'))
    expect(grouped).toBeDefined()
    const params = JSON.parse(grouped?.params ?? '[]') as unknown[]
    const rows = await client.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `EXPLAIN ${grouped?.query}`,
      ...params,
    )
    const plan = rows.map((row) => row['QUERY PLAN'])
    console.info(
      `trajectoryCandidates at ${TRAJECTORIES} trajectories: ${elapsed.toFixed(1)} ms\n${grouped?.query}\nEXPLAIN:\n  ${plan.join('\n  ')}`,
    )
    // A seek on the goal-word index (index-only once vacuumed; a bitmap scan of it before).
    expect(plan.join('\n')).toMatch(
      /(Index Only Scan|Index Scan|Bitmap Index Scan) (using|on) "TrajectoryWord_agentId_scope_domain_word_success_recordedAt_idx"/,
    )
    expect(plan.join('\n')).not.toMatch(/Seq Scan/)
  })
})
