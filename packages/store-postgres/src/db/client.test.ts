import { UnavailableError } from '@engram/core'
import { createDatabase } from '@engram/test-servers'
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest'
import { PostgresFullTextIndex } from '../full-text/postgres-full-text-index.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import {
  createPostgresDatabase,
  type PostgresDatabase,
  poolActivity,
  sharedView,
  unavailable,
} from './client.ts'
import { searchTokens } from './search-tokens.ts'

let db: PostgresDatabase
beforeAll(async () => {
  const url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
  db = createPostgresDatabase(url, { poolSize: 2 })
})
afterAll(async () => {
  await db?.$disconnect()
})
beforeEach(async () => {
  await db.$executeRawUnsafe(
    `TRUNCATE "Agent", "Session", "Message", "MemoryItem", "Knowledge" RESTART IDENTITY CASCADE`,
  )
  await db.agent.create({ data: { id: 'agent-a', name: 'a' } })
  await db.session.create({ data: { id: 's1', agentId: 'agent-a', conversationId: 'c1' } })
})

type Table = 'Message' | 'MemoryItem' | 'Knowledge'

/** What the row holds for search: its vector (as Postgres prints it), length, and pending tokens. */
async function indexed(table: Table, id: number) {
  const [row] = await db.$queryRawUnsafe<
    { vector: string | null; length: number | null; pending: string | null }[]
  >(
    `SELECT CAST("searchVector" AS text) AS vector, "searchLength" AS length, "searchTokens" AS pending
       FROM "${table}" WHERE "id" = $1`,
    id,
  )
  return row
}

/** The row's expected state: FTS5's tokens of its columns, the literal as Postgres prints it. */
async function expectedFor(columns: string[]) {
  const tokens = searchTokens(columns)
  const [row] = await db.$queryRawUnsafe<{ vector: string }[]>(
    `SELECT CAST(CAST($1 AS tsvector) AS text) AS vector`,
    tokens.searchTokens,
  )
  return { vector: row?.vector ?? null, length: tokens.searchLength, pending: null }
}

const message = (content: string) => ({
  sessionId: 's1',
  agentId: 'agent-a',
  role: 'user',
  content,
  tokenCount: 1,
  timestamp: new Date('2026-01-15T10:00:00Z'),
})
const memory = (content: string, tags = '[]') => ({
  agentId: 'agent-a',
  content,
  category: 'fact',
  tags,
  validFrom: new Date('2026-01-15T10:00:00Z'),
  contentHash: content,
  tokenCount: 1,
  createdAt: new Date('2026-01-15T10:00:00Z'),
  updatedAt: new Date('2026-01-15T10:00:00Z'),
})

describe('the client extension: every text write carries its search tokens', () => {
  it('indexes a create with the tokens of its columns, the trigger keeping none pending', async () => {
    const row = await db.message.create({ data: message('The runners were running') })
    expect(await indexed('Message', row.id)).toEqual(await expectedFor(['The runners were running']))
    const item = await db.memoryItem.create({ data: memory('green tea', '["morning"]') })
    expect(await indexed('MemoryItem', item.id)).toEqual(await expectedFor(['green tea', '["morning"]']))
    const fact = await db.knowledge.create({
      data: { agentId: 'agent-a', category: 'preference', key: 'drink', value: 'green tea', confidence: 1 },
    })
    expect(await indexed('Knowledge', fact.id)).toEqual(await expectedFor(['drink', 'green tea']))
  })

  it('re-indexes an update of the content', async () => {
    const row = await db.message.create({ data: message('green tea') })
    await db.message.update({ where: { id: row.id }, data: { content: 'black coffee at noon' } })
    expect(await indexed('Message', row.id)).toEqual(await expectedFor(['black coffee at noon']))
    await db.message.updateMany({ where: { id: row.id }, data: { content: 'oolong' } })
    expect(await indexed('Message', row.id)).toEqual(await expectedFor(['oolong']))
  })

  it('leaves an update that touches no indexed column indexed as it was', async () => {
    const item = await db.memoryItem.create({ data: memory('green tea') })
    const before = await indexed('MemoryItem', item.id)
    await db.memoryItem.update({ where: { id: item.id }, data: { importance: 0.9 } })
    expect(await indexed('MemoryItem', item.id)).toEqual(before)
  })

  it('marks a row unindexed on an update of its tags only, and search tokenises it before reading', async () => {
    const item = await db.memoryItem.create({ data: memory('green tea', '["morning"]') })
    await db.memoryItem.update({ where: { id: item.id }, data: { tags: '["evening"]' } })
    // The client cannot tokenise the row without its content: the trigger marks it unindexed.
    expect(await indexed('MemoryItem', item.id)).toEqual({ vector: null, length: null, pending: null })
    const postings = await new PostgresFullTextIndex(db).postings('memories', 'agent-a', 'all', 'even')
    expect([...postings.keys()]).toEqual([String(item.id)])
    expect(postings.get(String(item.id))).toMatchObject({ frequency: 1, length: 3 })
    expect(await indexed('MemoryItem', item.id)).toEqual(await expectedFor(['green tea', '["evening"]']))
  })

  it('indexes a word longer than a Postgres lexeme, and search finds it by that word', async () => {
    const long = 'y'.repeat(10_000)
    const item = await db.memoryItem.create({ data: memory(`${long} tea`) })
    expect((await indexed('MemoryItem', item.id))?.length).toBe(2)
    const index = new PostgresFullTextIndex(db)
    const [term] = index.terms(long)
    const postings = await index.postings('memories', 'agent-a', 'all', term as string)
    expect([...postings.keys()]).toEqual([String(item.id)])
    expect(await index.documentFrequencies('memories', 'agent-a', 'all', [term as string, 'tea'])).toEqual(
      new Map([
        [term, 1],
        ['tea', 1],
      ]),
    )
  })

  it('indexes every row of a createMany and of a createManyAndReturn', async () => {
    await db.message.createMany({ data: [message('first light'), message('second wind')] })
    const returned = await db.message.createManyAndReturn({ data: [message('third eye')] })
    expect(await indexed('Message', 1)).toEqual(await expectedFor(['first light']))
    expect(await indexed('Message', 2)).toEqual(await expectedFor(['second wind']))
    expect(await indexed('Message', returned[0]?.id as number)).toEqual(await expectedFor(['third eye']))
  })

  it('indexes both branches of an upsert', async () => {
    const where = { agentId_category_key: { agentId: 'agent-a', category: 'preference', key: 'drink' } }
    const created = await db.knowledge.upsert({
      where,
      create: { agentId: 'agent-a', category: 'preference', key: 'drink', value: 'green tea', confidence: 1 },
      update: { key: 'drink', value: 'never used' },
    })
    expect(await indexed('Knowledge', created.id)).toEqual(await expectedFor(['drink', 'green tea']))
    await db.knowledge.upsert({
      where,
      create: {
        agentId: 'agent-a',
        category: 'preference',
        key: 'drink',
        value: 'never used',
        confidence: 1,
      },
      update: { key: 'drink', value: 'black coffee' },
    })
    expect(await indexed('Knowledge', created.id)).toEqual(await expectedFor(['drink', 'black coffee']))
  })
})

describe('search catching up on rows written without tokens', () => {
  it('finds a message inserted by raw SQL: the index tokenises it before reading', async () => {
    await db.message.create({ data: message('green tea in the morning') })
    await db.$executeRawUnsafe(
      `INSERT INTO "Message" ("sessionId", "agentId", "role", "content", "tokenCount", "timestamp")
       VALUES ('s1', 'agent-a', 'user', 'more green tea please', 1, now())`,
    )
    const [raw] = await db.$queryRawUnsafe<{ id: number }[]>(
      `SELECT "id" FROM "Message" WHERE "content" = 'more green tea please'`,
    )
    const rawId = raw?.id as number
    expect(await indexed('Message', rawId)).toEqual({ vector: null, length: null, pending: null })

    const index = new PostgresFullTextIndex(db)
    expect(await index.corpus('messages', 'agent-a', 'all')).toEqual({ documents: 2, averageLength: 4.5 })
    const postings = await index.postings('messages', 'agent-a', 'all', 'tea')
    expect(postings.get(String(rawId))).toEqual({ frequency: 1, length: 4, sessionId: 's1' })
    expect(postings.size).toBe(2)
    expect(await index.documentFrequencies('messages', 'agent-a', 'all', ['green', 'pleas'])).toEqual(
      new Map([
        ['green', 2],
        ['pleas', 1],
      ]),
    )
    expect(await indexed('Message', rawId)).toEqual(await expectedFor(['more green tea please']))
  })
})

describe('waiting past the pool: UNAVAILABLE', () => {
  // A pool of one whose connection a transaction holds: the next transaction cannot start within
  // its wait (Prisma's P2028 "Unable to start a transaction in the given time"), and a query
  // cannot get a connection either. Both are the server being busy beyond this replica's pool:
  // the engine's UnavailableError (HTTP 503, retry later), not an internal error.
  it('maps a transaction that could not start in time, and a query past the pool timeout', async () => {
    const url = await createDatabase(inject('postgresUrl'))
    await applyPostgresMigrations(url)
    const tight = createPostgresDatabase(url, { poolSize: 1, connectionTimeoutMs: 300 })
    // The pool's one connection is opened first: the holder below must not itself wait for it.
    await tight.agent.count()
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let holding = () => {}
    const started = new Promise<void>((resolve) => {
      holding = resolve
    })
    try {
      const holder = tight.$transaction(async (tx) => {
        await tx.$queryRawUnsafe('SELECT 1')
        holding()
        await held
      })
      // Should the holder fail (a loaded machine), the test fails with its error instead of waiting.
      await Promise.race([started, holder])
      const transaction = await tight
        .$transaction(async (tx) => tx.$queryRawUnsafe('SELECT 1'))
        .catch((e) => e)
      const transactionViaView = await sharedView(tight)
        .$transaction(async (tx) => tx.$queryRawUnsafe('SELECT 1'))
        .catch((e) => e)
      const query = await tight.agent.count().catch((e) => e)
      release()
      await holder
      expect(unavailable(transaction)).toBeInstanceOf(UnavailableError)
      expect(transactionViaView).toBeInstanceOf(UnavailableError)
      expect(query).toBeInstanceOf(UnavailableError)
      expect((query as UnavailableError).code).toBe('UNAVAILABLE')
      // Another P2028 (a transaction used after it ended) stays the caller's error.
      expect(unavailable({ code: 'P2028', message: 'Transaction already closed' })).toBeNull()
    } finally {
      release()
      await tight.$disconnect()
    }
  })
})

describe('poolActivity (spec 002 memory.postgres.pool.active)', () => {
  it('counts the connections running a query while they run, and none once they are back', async () => {
    // The pool of two: a transaction holds one connection until released.
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const transaction = db.$transaction(async (tx) => {
      await tx.$queryRawUnsafe('SELECT 1')
      await held
    })
    for (let i = 0; i < 100 && (poolActivity(db)?.active ?? 0) < 1; i++)
      await new Promise((r) => setTimeout(r, 5))
    expect(poolActivity(db)).toMatchObject({ active: 1 })
    release()
    await transaction
    expect(poolActivity(db)?.active).toBe(0)
    expect(poolActivity(db)?.open).toBeLessThanOrEqual(2)
    // A client not made here has no pool to read.
    expect(poolActivity({} as PostgresDatabase)).toBeNull()
  })
})
