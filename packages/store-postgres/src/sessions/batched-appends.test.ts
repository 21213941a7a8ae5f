import { type MessageToStore, type NewJob, type Session, ValidationError } from '@engram/core'
import { createDatabase } from '@engram/test-servers'
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it, vi } from 'vitest'
import { createPostgresDatabase, type PostgresDatabase } from '../db/client.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresStorage, type PostgresStorage } from '../storage.ts'
import { appendBatchSize, MAX_APPEND_BATCH_MESSAGES } from './batched-appends.ts'

const at = new Date('2026-01-15T10:00:00.000Z')
const clock = { now: () => at }
const message = (content: string): MessageToStore => ({
  role: 'user',
  speaker: null,
  content,
  tokenCount: 1,
  timestamp: at,
  metadata: {},
  isCompressed: false,
  initialRelevance: 0.5,
})

let db: PostgresDatabase
let storage: PostgresStorage
/** Each batched transaction's appends, as writeAppends saw them. */
let batches: number[][]
beforeAll(async () => {
  const url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
  db = createPostgresDatabase(url, { poolSize: 4 })
  storage = createPostgresStorage({
    db,
    clock,
    // Like the engine's: an embed job per message, and a debounced job per conversation whose
    // start each later message moves (formation's extraction).
    messageJobs: (agentId, ids) => ids.map((id) => ({ kind: 'embed', agentId, key: `message:${id}` })),
    appendBatch: { maxMessages: 50 },
  })
  let tick = 0
  storage.sessions.addMessageJobs((agentId, _ids, session): NewJob[] => [
    {
      kind: 'extract',
      agentId,
      key: `extract:${session.conversationId}`,
      runAfter: new Date(at.getTime() + 1_000 * ++tick),
      postpone: true,
    },
  ])
  const write = storage.sessions.writeAppends.bind(storage.sessions)
  vi.spyOn(storage.sessions, 'writeAppends').mockImplementation((tx, appends) => {
    batches.push(appends.map((a) => a.messages.length))
    return write(tx, appends)
  })
})
afterAll(async () => {
  await storage?.close()
})
beforeEach(async () => {
  batches = []
  // TRUNCATE … CASCADE locks every table that references Agent (the graph's four since issue 15);
  // a fresh-clone CI run once saw Postgres pick it as a deadlock victim (40P01), whose documented
  // remedy is to run the statement again.
  for (let attempt = 1; ; attempt++) {
    try {
      await db.$executeRawUnsafe(`TRUNCATE "Agent", "Session", "Message", "Job" RESTART IDENTITY CASCADE`)
      break
    } catch (error) {
      if (attempt >= 3 || !String((error as Error).message).includes('40P01')) throw error
    }
  }
  await db.agent.create({ data: { id: 'agent-a', name: 'a' } })
})

async function sessions(count: number): Promise<Session[]> {
  const out: Session[] = []
  for (let c = 0; c < count; c++) out.push(await storage.sessions.createSession('agent-a', `c${c}`, at))
  return out
}

describe("a replica's concurrent appends on Postgres share transactions", () => {
  it('writes a burst in few transactions of at most maxMessages, with tokens, counts and jobs', async () => {
    const conversations = await sessions(10)
    const calls = Array.from({ length: 200 }, (_, i) => conversations[i % 10] as Session)
    const results = await Promise.all(
      calls.map((session, i) => storage.sessions.appendMessages(session, [message(`lake trip ${i}`)])),
    )
    expect(results.map((r) => r.messages[0]?.content)).toEqual(calls.map((_, i) => `lake trip ${i}`))
    // Batched: far fewer transactions than appends, none past the limit.
    expect(batches.length).toBeLessThan(40)
    expect(Math.max(...batches.map((b) => b.reduce((x, y) => x + y, 0)))).toBeLessThanOrEqual(50)
    expect(batches.flat()).toHaveLength(200)
    // Each row carries its full-text tokens (the client extension saw the multi-row insert).
    const [untokenised] = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "Message" WHERE "searchVector" IS NULL OR "searchLength" IS NULL`,
    )
    expect(untokenised?.n).toBe(0)
    expect(await db.memoryEntry.count()).toBe(200)
    for (const session of conversations)
      expect((await db.session.findUnique({ where: { id: session.id } }))?.messageCount).toBe(20)
    // One embed job per message; one extraction job per conversation, started after its last
    // message's debounce (as the jobs queued one by one would leave it).
    expect(await db.job.count({ where: { kind: 'embed' } })).toBe(200)
    // On the engine's clock, as the queue's own inserts are (not the wall clock).
    expect((await db.job.findFirst({ where: { kind: 'embed' } }))?.runAfter).toEqual(at)
    expect((await db.job.findFirst({ where: { kind: 'embed' } }))?.createdAt).toEqual(at)
    // Conversation c's last append is call 190 + c, the (191 + c)th job produced.
    const extract = await db.job.findMany({ where: { kind: 'extract' } })
    expect(
      Object.fromEntries(extract.map((job) => [job.key, job.runAfter.getTime() - at.getTime()])),
    ).toEqual(Object.fromEntries(conversations.map((_, c) => [`extract:c${c}`, 1_000 * (191 + c)])))
  })

  it('fails only the guilty append: a deleted session, and text Postgres cannot hold', async () => {
    const [kept, gone] = await sessions(2)
    if (!kept || !gone) throw new Error('no sessions')
    await storage.sessions.deleteSession('agent-a', gone.conversationId)
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 20 }, (_, i) => storage.sessions.appendMessages(kept, [message(`kept ${i}`)])),
      storage.sessions.appendMessages(gone, [message('into a deleted session')]),
      storage.sessions.appendMessages(kept, [message('nul \u0000 here')]),
      ...Array.from({ length: 20 }, (_, i) => storage.sessions.appendMessages(kept, [message(`after ${i}`)])),
    ])
    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []))
    expect(failed).toEqual([20, 21])
    // The deleted session's append was in a batch with others (which failed whole), then each of
    // that batch was written alone.
    expect(batches[0]?.length).toBeGreaterThan(1)
    expect(batches.slice(1, (batches[0]?.length ?? 0) + 1).every((b) => b.length === 1)).toBe(true)
    expect((outcomes[21] as PromiseRejectedResult).reason).toBeInstanceOf(ValidationError)
    // The others are stored, in the order asked, counted once each.
    const stored = await db.message.findMany({ where: { sessionId: kept.id }, orderBy: { id: 'asc' } })
    expect(stored.map((m) => m.content)).toEqual([
      ...Array.from({ length: 20 }, (_, i) => `kept ${i}`),
      ...Array.from({ length: 20 }, (_, i) => `after ${i}`),
    ])
    expect((await db.session.findUnique({ where: { id: kept.id } }))?.messageCount).toBe(40)
    expect(await db.message.count({ where: { sessionId: gone.id } })).toBe(0)
    expect(await db.job.count({ where: { kind: 'embed' } })).toBe(40)
  })

  it("records each append's summary cursor in the batch's transaction, in arrival order", async () => {
    const [c0, c1] = await sessions(2)
    if (!c0 || !c1) throw new Error('no sessions')
    // Only this test's appends are recorded (the recorder stays on the shared storage).
    // Each turn a millisecond after the previous (the newest cursor is the agent's previous conversation).
    const ours = new WeakMap<readonly MessageToStore[], Date>()
    const seen: [string, string | null, number][] = []
    storage.sessions.addTurnRecorder((session, messages) =>
      ours.has(messages)
        ? {
            at: ours.get(messages) as Date,
            tokens: messages.length,
            jobsFor: ({ cursor, previous }) => {
              seen.push([cursor.conversationId, previous?.conversationId ?? null, cursor.pendingTokens])
              return [{ kind: 'summarize', agentId: session.scope, key: `turn:${seen.length}` }]
            },
          }
        : null,
    )
    const appends = [c0, c1, c0].map((session, i) => {
      const messages = [message(`turn ${i}`)]
      ours.set(messages, new Date(at.getTime() + i))
      return storage.sessions.appendMessages(session, messages)
    })
    await Promise.all(appends)
    // Each append sees the cursors the earlier ones of its batch left: c1 switched away from c0, then back.
    expect(seen).toEqual([
      ['c0', null, 1],
      ['c1', 'c0', 1],
      ['c0', 'c1', 2],
    ])
    const cursors = await db.summaryCursor.findMany({ orderBy: { conversationId: 'asc' } })
    expect(cursors.map((c) => [c.conversationId, c.pendingTokens, c.lastTurnAt])).toEqual([
      ['c0', 2, new Date(at.getTime() + 2)],
      ['c1', 1, new Date(at.getTime() + 1)],
    ])
    expect(await db.job.count({ where: { kind: 'summarize' } })).toBe(3)
  })

  it('refuses a batch size outside 1..MAX_APPEND_BATCH_MESSAGES, naming the setting', () => {
    expect(appendBatchSize(undefined)).toBe(256)
    expect(() => appendBatchSize(0)).toThrow(/appendBatch.maxMessages/)
    expect(() => appendBatchSize(MAX_APPEND_BATCH_MESSAGES + 1)).toThrow(ValidationError)
  })
})
