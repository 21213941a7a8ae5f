import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Clock, MessageToStore, Session } from '@engram/core'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type AppendInserts, createDatabase, directSqlite } from '../db/client.ts'
import { applyMigrations, migrationsDirectory } from '../db/migrate.ts'
import { createSqliteStorage } from '../storage.ts'

// Issue 18: the appends of one group commit insert their messages in one statement, after the
// statements that open a statement journal, so FTS5 writes one segment per commit instead of one
// per message; answers and stored rows are those of the per-append path.

const directories: string[] = []
const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const AT = new Date('2026-01-15T10:00:00.000Z')

afterEach(() => {
  for (const dir of directories.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

async function open(appendInserts: AppendInserts, appendsPerGroup?: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-append-group-'))
  directories.push(dir)
  const file = path.join(dir, 'engram.db')
  applyMigrations(file, migrationsDirectory())
  const clock: Clock = { now: () => AT }
  const db = createDatabase(file, { appendInserts, ...(appendsPerGroup ? { appendsPerGroup } : {}) })
  const storage = createSqliteStorage({
    db,
    clock,
    log: quiet,
    messageJobs: (scope, ids) =>
      ids.map((id) => ({ kind: 'embed', agentId: scope, key: `message:${id}`, ofNewRow: true })),
  })
  await storage.repositories.agents.upsert('a', null)
  // Segments stay as written: no merging while the test counts them.
  await db.$executeRawUnsafe(`INSERT INTO "MessageSearch"("MessageSearch", "rank") VALUES ('automerge', 0)`)
  await db.$executeRawUnsafe(
    `INSERT INTO "MessageSearch"("MessageSearch", "rank") VALUES ('crisismerge', 1900)`,
  )
  const segmentRows = async () =>
    Number(
      ((await db.$queryRawUnsafe(`SELECT count(*) AS n FROM "MessageSearch_data"`)) as { n: bigint }[])[0]?.n,
    )
  return { storage, db, segmentRows }
}

const message = (content: string): MessageToStore => ({
  role: 'user',
  speaker: 'john',
  content,
  tokenCount: 3,
  timestamp: AT,
  metadata: {},
  isCompressed: false,
  initialRelevance: 1,
})

/** 16 appends asked for in one tick, over 4 conversations; the third asks for two messages. */
async function appendBurst(storage: Awaited<ReturnType<typeof open>>['storage']) {
  const sessions: Session[] = []
  for (let c = 0; c < 4; c++) sessions.push(await storage.sessions.createSession('a', `c${c}`, AT))
  const direct = directSqlite(storage.db)
  if (!direct) throw new Error('no direct connection')
  let commits = 0
  const write = direct.write.bind(direct)
  direct.write = (work) => {
    commits++
    return write(work)
  }
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      storage.sessions.appendMessages(
        sessions[i % 4] as Session,
        i === 2
          ? [message(`turn ${i} about Berlin`), message(`turn ${i} reply`)]
          : [message(`turn ${i} about Lena`)],
      ),
    ),
  )
  return { results, commits }
}

describe('appends of one group commit (SQLite, AppendInserts)', () => {
  it('writes one full-text segment per commit with per-commit, one per message with per-append', async () => {
    const segments: Record<AppendInserts, number> = { 'per-commit': 0, 'per-append': 0 }
    for (const setting of ['per-commit', 'per-append'] as const) {
      const { storage, segmentRows } = await open(setting)
      const before = await segmentRows()
      await appendBurst(storage)
      segments[setting] = (await segmentRows()) - before
      await storage.close()
    }
    // 17 messages in one group commit (small texts: a segment is one row of MessageSearch_data).
    expect(segments).toEqual({ 'per-commit': 1, 'per-append': 17 })
  })

  it('answers and stores the same under both settings: ids, counts, entries, jobs, search', async () => {
    const seen: unknown[] = []
    for (const setting of ['per-commit', 'per-append'] as const) {
      const { storage, db } = await open(setting)
      const { results, commits } = await appendBurst(storage)
      // per-commit: the 16 appends share one direct write.
      expect(commits).toBe(setting === 'per-commit' ? 1 : 16)
      const answers = results.map(({ session, messages }) => [
        session.conversationId,
        session.messageCount,
        messages.map((m) => [m.id, m.content]),
      ])
      const entries = (await db.memoryEntry.findMany({ orderBy: { id: 'asc' } })).map((e) => [
        e.messageId,
        e.sessionId === results.find((r) => r.messages.some((m) => Number(m.id) === e.messageId))?.session.id,
        e.content,
      ])
      const jobs = (await db.job.findMany({ where: { kind: 'embed' } })).map((j) => j.key).sort()
      const counts = (await db.session.findMany({ orderBy: { conversationId: 'asc' } })).map(
        (s) => s.messageCount,
      )
      const hits = (
        (await db.$queryRawUnsafe(
          `SELECT rowid AS id FROM "MessageSearch" WHERE "MessageSearch" MATCH 'berlin' ORDER BY rowid`,
        )) as { id: bigint }[]
      ).map((row) => Number(row.id))
      seen.push({ answers, entries, jobs, counts, hits })
      await storage.close()
    }
    expect(seen[0]).toEqual(seen[1])
    const first = seen[0] as { answers: unknown[]; counts: number[]; jobs: string[]; hits: number[] }
    // Each append's count is the one it left, in the order asked: c0's appends 1, 2, 3, 4.
    expect(first.answers.filter((a) => (a as unknown[])[0] === 'c0').map((a) => (a as unknown[])[1])).toEqual(
      [1, 2, 3, 4],
    )
    expect(first.counts).toEqual([4, 4, 5, 4])
    expect(first.jobs).toHaveLength(17)
    expect(first.hits).toEqual([3])
  })

  it('fails only the append whose session went, with the per-append answer; the others are stored', async () => {
    const seen: unknown[] = []
    for (const setting of ['per-commit', 'per-append'] as const) {
      const { storage, db } = await open(setting)
      const kept = await storage.sessions.createSession('a', 'kept', AT)
      const gone = await storage.sessions.createSession('a', 'gone', AT)
      await storage.sessions.deleteSession('a', 'gone')
      const outcomes = await Promise.allSettled([
        storage.sessions.appendMessages(kept, [message('first')]),
        storage.sessions.appendMessages(gone, [message('lost')]),
        storage.sessions.appendMessages(kept, [message('second')]),
      ])
      const failure = (outcomes[1] as PromiseRejectedResult).reason as { code?: string; message: string }
      const alone = (await storage.sessions.appendMessages(gone, [message('alone')]).catch((e) => e)) as {
        code?: string
        message: string
      }
      seen.push({
        statuses: outcomes.map((o) => o.status),
        failure: [failure.constructor.name, failure.code, failure.message],
        alone: [alone.constructor.name, alone.code, alone.message],
        contents: (await db.message.findMany({ orderBy: { id: 'asc' } })).map((m) => m.content),
        embedJobs: await db.job.count({ where: { kind: 'embed' } }),
        count: (await db.session.findFirst({ where: { conversationId: 'kept' } }))?.messageCount,
      })
      await storage.close()
    }
    expect(seen[0]).toEqual(seen[1])
    expect(seen[0]).toMatchObject({
      statuses: ['fulfilled', 'rejected', 'fulfilled'],
      contents: ['first', 'second'],
      embedJobs: 2,
      count: 2,
    })
  })

  it('answers a group refused before it ran with its error, and the next append starts a new group', async () => {
    const { storage, db } = await open('per-commit')
    const session = await storage.sessions.createSession('a', 'c', AT)
    const direct = directSqlite(db)
    if (!direct) throw new Error('no direct connection')
    // As when the connection does not open or another process keeps the write lock past the deadline.
    vi.spyOn(direct, 'write').mockImplementationOnce(() => Promise.reject(new Error('database is locked')))
    const refused = await Promise.allSettled([
      storage.sessions.appendMessages(session, [message('one')]),
      storage.sessions.appendMessages(session, [message('two')]),
    ])
    expect(refused.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.status))).toEqual([
      'database is locked',
      'database is locked',
    ])
    const after = await storage.sessions.appendMessages(session, [message('three')])
    expect([after.session.messageCount, after.messages.map((m) => m.content)]).toEqual([1, ['three']])
    vi.restoreAllMocks()
    await storage.close()
  })

  it('starts a new group past ENGRAM_SQLITE_APPENDS_PER_GROUP appends (4: 16 appends, 4 writes)', async () => {
    const { storage, db } = await open('per-commit', 4)
    const { results, commits } = await appendBurst(storage)
    expect(commits).toBe(4)
    expect(
      results.filter((r) => r.session.conversationId === 'c0').map((r) => r.session.messageCount),
    ).toEqual([1, 2, 3, 4])
    expect(await db.message.count()).toBe(17)
    await storage.close()
  })
})
