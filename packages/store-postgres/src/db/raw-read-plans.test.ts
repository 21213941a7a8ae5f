import { CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import {
  hotReaderOf,
  PrismaSessionRepository,
  SqliteFormation,
  SqliteRecallSources,
  sqliteApiKeys,
  sqliteDialect,
} from '@engram/store-sqlite'
import { createDatabase } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresDatabase, type PostgresDatabase, sharedView } from './client.ts'
import { postgresDialect } from './dialect.ts'

/** A plan node of EXPLAIN (FORMAT JSON), as far as these checks read it. */
interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  Plans?: PlanNode[]
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)]
}

const AGENTS = 50
const CONVERSATIONS = 4
const TURNS = 100 // per conversation: 20,000 messages in all

let db: PostgresDatabase
let shared: ReturnType<typeof sharedView>
beforeAll(async () => {
  const url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
  db = createPostgresDatabase(url, { poolSize: 2 })
  shared = sharedView(db)
  // A realistic table written in one statement each: every agent's conversations interleaved in id
  // order (turns arrive from all agents at once), one summary in 50 turns, tokens as the client
  // writes them (the trigger fills searchVector), then statistics as autovacuum would gather them.
  await db.$executeRawUnsafe(
    `INSERT INTO "Agent"("id", "name") SELECT 'agent-' || a, 'agent-' || a FROM generate_series(1, ${AGENTS}) a`,
  )
  await db.$executeRawUnsafe(`INSERT INTO "Session"("id", "agentId", "conversationId", "updatedAt")
    SELECT 's-' || a || '-' || s, 'agent-' || a, 'c' || s, now()
      FROM generate_series(1, ${AGENTS}) a, generate_series(1, ${CONVERSATIONS}) s`)
  await db.$executeRawUnsafe(`INSERT INTO "Message"("sessionId", "agentId", "role", "speaker", "content", "tokenCount", "timestamp", "searchTokens")
    SELECT 's-' || a || '-' || s, 'agent-' || a, 'user', 'speaker ' || (t % 3), x.content, 5,
           timestamp '2026-01-01' + t * interval '1 minute', CAST(to_tsvector('english', x.content) AS text)
      FROM generate_series(1, ${AGENTS}) a, generate_series(1, ${CONVERSATIONS}) s, generate_series(1, ${TURNS}) t,
           LATERAL (SELECT CASE WHEN t % 50 = 0 THEN '${CONTEXT_SUMMARY_PREFIX}turn ' || t
                                ELSE 'we talked about hiking, turn ' || t END AS content) x
     ORDER BY t, a, s`)
  await db.$executeRawUnsafe(`INSERT INTO "MemoryItem"("agentId", "userId", "content", "category", "validFrom", "contentHash", "tokenCount", "createdAt", "updatedAt")
    SELECT 'agent-' || a, 'user ' || (i % 4), 'fact ' || i, 'fact', now(), 'h' || i, 1, now(), now()
      FROM generate_series(1, ${AGENTS}) a, generate_series(1, 200) i`)
  // A new agent whose one conversation began after every other agent's turns (the end of the ids).
  await db.$executeRawUnsafe(`INSERT INTO "Agent"("id", "name") VALUES ('agent-new', 'agent-new')`)
  await db.$executeRawUnsafe(
    `INSERT INTO "Session"("id", "agentId", "conversationId", "updatedAt") VALUES ('s-new', 'agent-new', 'c1', now())`,
  )
  await db.$executeRawUnsafe(`INSERT INTO "Message"("sessionId", "agentId", "role", "content", "tokenCount", "timestamp")
    SELECT 's-new', 'agent-new', 'user', 'hello ' || t, 1, now() FROM generate_series(1, ${TURNS}) t`)
  await db.$executeRawUnsafe('ANALYZE')
}, 120_000)
afterAll(async () => {
  await db?.$disconnect()
})

/**
 * The shared view with every raw read replaced by its EXPLAIN (FORMAT JSON): the repositories build
 * their statements as they do in production, and the plans come back instead of rows.
 */
function explaining(): { view: typeof shared; plans: { sql: string; plan: PlanNode }[] } {
  const plans: { sql: string; plan: PlanNode }[] = []
  const view = new Proxy(shared, {
    get(target, key, receiver) {
      if (key !== '$queryRawUnsafe') return Reflect.get(target, key, receiver)
      return async (sql: string, ...params: unknown[]) => {
        const rows = await target.$queryRawUnsafe<{ 'QUERY PLAN': { Plan: PlanNode }[] }[]>(
          `EXPLAIN (FORMAT JSON) ${sql}`,
          ...params,
        )
        plans.push({ sql, plan: rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode })
        return []
      }
    },
  })
  return { view, plans }
}

async function candidateTurns(count: number): Promise<string[]> {
  const rows = await db.message.findMany({
    where: { agentId: 'agent-7' },
    orderBy: { id: 'asc' },
    select: { id: true },
  })
  // Spread over the agent's conversations and the table, as a search's candidates are.
  const step = Math.floor(rows.length / count)
  return Array.from({ length: count }, (_, i) => String(rows[i * step]?.id))
}

const scansOf = (plan: PlanNode, relation: string) =>
  nodesOf(plan).filter((node) => node['Relation Name'] === relation)

describe('the shared repositories’ raw reads on Postgres (20,000 messages over 50 agents)', () => {
  it('finds the turns beside candidates with index seeks, no sequential scan of Message', async () => {
    const { view, plans } = explaining()
    await new SqliteRecallSources(view, postgresDialect).turnsBeside(await candidateTurns(100), 2)
    expect(plans).toHaveLength(1)
    const scans = scansOf(plans[0]?.plan as PlanNode, 'Message')
    expect(scans.map((node) => node['Node Type'])).not.toContain('Seq Scan')
    // Each side: the candidates by primary key, their neighbours on (sessionId, timestamp, id).
    expect(scans.filter((node) => node['Index Name'] === 'Message_sessionId_timestamp_id_idx')).toHaveLength(
      2,
    )

    // What the check guards against: SQLite's correlated IN, run on Postgres, scans the whole table.
    const before = explaining()
    await new SqliteRecallSources(before.view, sqliteDialect).turnsBeside(await candidateTurns(100), 2)
    expect(scansOf(before.plans[0]?.plan as PlanNode, 'Message').map((node) => node['Node Type'])).toContain(
      'Seq Scan',
    )
  })

  it('reads search’s episode spans and its turns by id with index seeks, no sequential scan of Message (issue 18)', async () => {
    const turns = await candidateTurns(20)
    const rows = await db.message.findMany({
      where: { id: { in: turns.map(Number) } },
      select: { id: true, sessionId: true },
    })
    const { view, plans } = explaining()
    const recall = new SqliteRecallSources(view, postgresDialect)
    await recall.turnSpans(
      rows.map((r) => ({ sessionId: r.sessionId, fromTurnId: String(r.id), toTurnId: String(r.id) })),
      5_000,
    )
    await recall.messages('agent-7', turns, { set: 'messages', sessionId: null, since: null, until: null })
    expect(plans).toHaveLength(2)
    for (const { plan } of plans)
      expect(scansOf(plan, 'Message').map((node) => node['Node Type'])).not.toContain('Seq Scan')
    // The spans seek the (sessionId, timestamp, id) index (one seek run per span, by LATERAL).
    expect(scansOf(plans[0]?.plan as PlanNode, 'Message').map((node) => node['Index Name'])).toContain(
      'Message_sessionId_timestamp_id_idx',
    )
    // One statement text for any number of spans: Postgres plans it in a fraction of a ms, where
    // a compound SELECT of a term per span took 8-44 ms to plan on every search (issue 18).
    const one = explaining()
    await new SqliteRecallSources(one.view, postgresDialect).turnSpans(
      [
        {
          sessionId: rows[0]?.sessionId as string,
          fromTurnId: turns[0] as string,
          toTurnId: turns[0] as string,
        },
      ],
      5_000,
    )
    expect(one.plans[0]?.sql).toBe(plans[0]?.sql)
  })

  it('reads the same episode spans as the compound SELECT of a seek per span', async () => {
    const turns = await candidateTurns(12)
    const found = await db.message.findMany({
      where: { id: { in: turns.map(Number) } },
      select: { id: true, sessionId: true },
      orderBy: { id: 'asc' },
    })
    // Spans of several turns each (to the sixth turn after it in its conversation), one inverted.
    const spans = await Promise.all(
      found.map(async (r, i) => {
        const later = await db.message.findFirst({
          where: { sessionId: r.sessionId, id: { gt: r.id } },
          orderBy: { id: 'asc' },
          skip: 5,
          select: { id: true },
        })
        const to = String(later?.id ?? r.id)
        return {
          sessionId: r.sessionId,
          fromTurnId: i === 3 ? to : String(r.id),
          toTurnId: i === 3 ? String(r.id) : to,
        }
      }),
    )
    const single = await new SqliteRecallSources(shared, postgresDialect).turnSpans(spans, 4)
    const compound = await new SqliteRecallSources(shared, {
      ...postgresDialect,
      turnSpans: () => null,
    }).turnSpans(spans, 4)
    expect(single.length).toBeGreaterThan(spans.length)
    expect(single).toEqual(compound)
  })

  it('reads search’s rows on the pool’s prepared statements exactly as through Prisma', async () => {
    // `shared` has the pool's reader registered; a view of it that is not the registered object
    // reads through Prisma's raw queries, as every client did before.
    const throughPrisma = new Proxy(shared, {})
    expect(hotReaderOf(shared)).not.toBeNull()
    expect(hotReaderOf(throughPrisma)).toBeNull()
    const turns = await candidateTurns(30)
    const spans = (
      await db.message.findMany({
        where: { id: { in: turns.map(Number) } },
        select: { id: true, sessionId: true },
      })
    ).map((r) => ({ sessionId: r.sessionId, fromTurnId: String(r.id - 400), toTurnId: String(r.id + 400) }))
    const memories = (
      await db.memoryItem.findMany({ where: { agentId: 'agent-7' }, select: { id: true }, take: 40 })
    ).map((r) => String(r.id))
    const reads = async (recall: SqliteRecallSources) => ({
      beside: await recall.turnsBeside(turns, 2),
      spans: await recall.turnSpans(spans, 50),
      messages: await recall.messages('agent-7', turns, {
        set: 'messages',
        sessionId: null,
        since: null,
        until: null,
      }),
      memories: await recall.memoryItems('agent-7', memories, { asOf: new Date() }),
    })
    // Twice: the second call runs the statements the first prepared.
    for (let round = 0; round < 2; round++) {
      const [hot, prisma] = [
        await reads(new SqliteRecallSources(shared, postgresDialect)),
        await reads(new SqliteRecallSources(throughPrisma, postgresDialect)),
      ]
      expect(hot.beside.length).toBeGreaterThan(0)
      expect(hot.spans.length).toBeGreaterThan(0)
      expect(hot.messages.length).toBeGreaterThan(0)
      expect(hot.memories).toHaveLength(memories.length)
      expect(hot).toEqual(prisma)
    }
    // The API key every request looks up: the same record either way, revoked or not.
    await db.apiKey.create({
      data: { id: 'key-7', agentId: 'agent-7', role: 'AGENT', label: 'k', keyHash: 'hash-7', keyPrefix: 'p' },
    })
    for (const revoked of [false, true]) {
      if (revoked) await db.apiKey.update({ where: { id: 'key-7' }, data: { revokedAt: new Date() } })
      const hot = await sqliteApiKeys(shared).findByHash('hash-7')
      expect(hot?.revokedAt !== null).toBe(revoked)
      expect(hot).toEqual(await sqliteApiKeys(throughPrisma).findByHash('hash-7'))
    }
    expect(await sqliteApiKeys(shared).findByHash('no-such-hash')).toBeNull()
  })

  it('returns the same neighbours as SQLite’s statement on the large table', async () => {
    const candidates = await candidateTurns(8)
    const key = (b: { origin: string; side: string; id: string }) => `${b.origin}:${b.side}:${b.id}`
    const lateral = await new SqliteRecallSources(shared, postgresDialect).turnsBeside(candidates, 3)
    const correlated = await new SqliteRecallSources(shared, sqliteDialect).turnsBeside(candidates, 3)
    expect(lateral.length).toBeGreaterThan(0)
    expect(lateral.map(key).sort()).toEqual(correlated.map(key).sort())
  })

  it('reads speakers, memory users, texts, summaries and participants through indexes', async () => {
    const { view, plans } = explaining()
    const recall = new SqliteRecallSources(view, postgresDialect)
    const ids = await candidateTurns(10)
    await recall.speakersSince('agent-7', 0)
    await recall.memoryUsersSince('agent-7', 0)
    await recall.documentTexts('messages', ids)
    await recall.hasSummaries('agent-7', null)
    await recall.hasSummaries('agent-7', 's-7-2')
    await new PrismaSessionRepository(view).participants('agent-7')
    expect(plans).toHaveLength(6)
    for (const { sql, plan } of plans) {
      const scans = [...scansOf(plan, 'Message'), ...scansOf(plan, 'MemoryItem')]
      expect(scans.length, sql).toBeGreaterThan(0)
      expect(
        scans.map((node) => node['Node Type']),
        sql,
      ).not.toContain('Seq Scan')
    }
  })

  it('orders an agent’s pending conversations from their own turns, not a walk of the whole table', async () => {
    const pendingPlan = async (dialect: typeof postgresDialect) => {
      const { view, plans } = explaining()
      await new SqliteFormation(view, new PrismaSessionRepository(view), dialect).pendingConversations(
        'agent-new',
      )
      return scansOf(plans[0]?.plan as PlanNode, 'Message').map(
        (node) => node['Index Name'] ?? node['Node Type'],
      )
    }
    const scans = await pendingPlan(postgresDialect)
    expect(scans.length).toBeGreaterThan(0)
    expect(scans).not.toContain('Seq Scan')
    expect(scans).not.toContain('Message_pkey')
    // What the check guards against: a bare min(id) walks the primary key from the table's first
    // row, and this conversation's turns are the table's last.
    const bare = await pendingPlan({
      ...postgresDialect,
      sessionOrder: (alias) => `(SELECT min(m."id") FROM "Message" m WHERE m."sessionId" = ${alias}."id")`,
    })
    expect(bare).toContain('Message_pkey')
  })
})
