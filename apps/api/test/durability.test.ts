import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, freshPostgresDatabase, TEST_BACKEND, type TestApp } from './helpers.ts'
import { ReplicaSet, replicaDatabaseUrl } from './replicas.ts'

// Issue 14 §3: kill -9 while 64 writers are mid-flight loses no acknowledged write, on a SQLite
// file (sqlite project) and on a Postgres database (postgres project).
const WRITERS = 64
// Long enough for hundreds of writes to be acknowledged and many more to be in flight.
const WRITE_FOR_MS = 1_500
const KILL_AFTER_ACKNOWLEDGED = 2 * WRITERS
const KILL_DEADLINE_MS = 20_000
const ADMIN_KEY = `admin-${randomUUID()}`
const AGENT = 'durable-agent'
const ADD = `mutation($c: String!, $m: String!) { addMessage(input: { conversationId: $c, role: USER, content: $m }) { __typename ... on Message { id content } ... on Error { message } } }`

/** What one writer saw: the writes the server answered with a stored Message, and how many were cut. */
interface WriterLog {
  conversationId: string
  acknowledged: { id: string; content: string }[]
  /** Requests sent but not answered when the process died (0 or 1: one request at a time). */
  inFlightAtKill: number
  /** Answers that were not a Message (a typed error): none are expected before the kill. */
  refused: string[]
}

describe('kill -9 of the API process mid-write', () => {
  let redis: RedisServer
  let set: ReplicaSet
  let directory: string
  let databaseUrl: string
  let reopened: TestApp | null = null

  beforeAll(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-durability-'))
    redis = await startRedis()
    databaseUrl = TEST_BACKEND === 'postgres' ? await freshPostgresDatabase() : replicaDatabaseUrl(directory)
    set = await ReplicaSet.start({
      count: 1,
      databaseUrl,
      redisUrl: redis.url,
      adminKey: ADMIN_KEY,
      env: {
        ENGRAM_REDIS_PREFIX: `engram-durable-${randomUUID().slice(0, 8)}`,
        // Only the write path is under test: no background work competing for the two cores.
        OPTIMIZER_INTERVAL_MS: '0',
        ENGRAM_TOKENIZER: 'heuristic',
        ENGRAM_EXTRACTION: 'off',
        ENGRAM_SUMMARIES: 'off',
        ENGRAM_PROFILE: 'off',
      },
    })
  }, 240_000)
  afterAll(async () => {
    await reopened?.close()
    await set?.stop()
    await redis?.stop()
    if (directory) fs.rmSync(directory, { recursive: true, force: true })
  })

  it('keeps every acknowledged write, whole, and no half-written message', async () => {
    const created = await set.gql(
      `mutation($agentId: ID!) { createApiKey(agentId: $agentId) { ... on CreatedApiKey { key } } }`,
      { agentId: AGENT },
    )
    const key = created.data?.createApiKey?.key as string
    expect(key, JSON.stringify(created)).toBeTruthy()
    const replica = set.replicas[0] as (typeof set.replicas)[number]

    let killed = false
    const logs: WriterLog[] = Array.from({ length: WRITERS }, (_, w) => ({
      conversationId: `writer-${w}`,
      acknowledged: [],
      inFlightAtKill: 0,
      refused: [],
    }))
    // Each writer sends one addMessage at a time, in a loop, until its connection breaks.
    const writer = async (w: number) => {
      const log = logs[w] as WriterLog
      for (let seq = 0; ; seq++) {
        const content = `writer ${w} sequence ${seq} token w${w}s${seq}`
        let body: {
          data?: { addMessage?: { __typename: string; id?: string; content?: string; message?: string } }
        }
        try {
          const response = await fetch(`${replica.url}/graphql`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
            body: JSON.stringify({ query: ADD, variables: { c: log.conversationId, m: content } }),
          })
          if (response.status !== 200) throw new Error(`status ${response.status}`)
          body = await response.json()
        } catch (error) {
          // The connection broke: the write may or may not have committed, but it was never
          // acknowledged, so losing it is allowed. Before the kill nothing should break.
          if (!killed) throw error
          log.inFlightAtKill++
          return
        }
        const answer = body.data?.addMessage
        if (answer?.__typename === 'Message' && answer.id) {
          log.acknowledged.push({ id: answer.id, content })
          expect(answer.content).toBe(content)
        } else log.refused.push(JSON.stringify(body))
        if (killed) return
      }
    }
    const writing = Promise.all(logs.map((_, w) => writer(w)))
    // The first writes of a fresh process are slow (JIT, 64 sessions created): kill after
    // WRITE_FOR_MS and once KILL_AFTER_ACKNOWLEDGED writes were answered, so the kill cuts a
    // steady stream rather than the warm-up (bounded by KILL_DEADLINE_MS).
    const started = Date.now()
    const answered = () => logs.reduce((sum, log) => sum + log.acknowledged.length, 0)
    while (
      Date.now() - started < WRITE_FOR_MS ||
      (answered() < KILL_AFTER_ACKNOWLEDGED && Date.now() - started < KILL_DEADLINE_MS)
    )
      await new Promise((resolve) => setTimeout(resolve, 25))
    killed = true
    const killedAfterMs = Date.now() - started
    await set.kill(0)
    await writing

    const acknowledged = logs.flatMap((log) => log.acknowledged)
    const inFlight = logs.reduce((sum, log) => sum + log.inFlightAtKill, 0)
    console.info(
      `[durability ${TEST_BACKEND}] ${acknowledged.length} writes acknowledged by ${WRITERS} writers in ${killedAfterMs} ms; ${inFlight} in flight at the kill`,
    )
    expect(logs.flatMap((log) => log.refused)).toEqual([])
    // The kill really cut writes mid-flight, and enough were acknowledged to mean something.
    expect(inFlight).toBeGreaterThan(0)
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKNOWLEDGED)

    // Open the database again, as the next process would (recovery of the WAL on SQLite).
    reopened = await createTestApp(
      TEST_BACKEND === 'postgres'
        ? { postgresUrl: databaseUrl }
        : { databaseFile: databaseUrl.slice('file:'.length) },
    )
    const db = reopened.db
    const messages = await db.message.findMany({
      where: { agentId: AGENT },
      include: { entry: true, session: true },
      orderBy: { id: 'asc' },
    })
    const stored = new Map(messages.map((message) => [String(message.id), message]))

    // 0 acknowledged writes lost: each is there under its id, with its content, in its writer's conversation.
    for (const log of logs)
      for (const write of log.acknowledged) {
        const message = stored.get(write.id)
        expect(message?.content, `acknowledged write ${write.id} (${write.content})`).toBe(write.content)
        expect(message?.session.conversationId).toBe(log.conversationId)
      }
    // A writer's messages are a prefix of its sequence: no gap, at most the one in-flight write
    // beyond what was acknowledged (committed just before the kill, its answer never sent).
    for (const [w, log] of logs.entries()) {
      const mine = messages.filter((message) => message.session.conversationId === log.conversationId)
      expect(mine.map((message) => message.content)).toEqual(
        Array.from({ length: mine.length }, (_, seq) => `writer ${w} sequence ${seq} token w${w}s${seq}`),
      )
      expect(mine.length - log.acknowledged.length).toBeGreaterThanOrEqual(0)
      expect(mine.length - log.acknowledged.length).toBeLessThanOrEqual(log.inFlightAtKill)
    }
    // No half-written message: each has its memory entry (same agent, session, content, tokens),
    // and each session's count is the number of its messages (all written in one transaction).
    for (const message of messages) {
      expect(message.entry, `memory entry of message ${message.id}`).not.toBeNull()
      expect(message.entry).toMatchObject({
        agentId: AGENT,
        sessionId: message.sessionId,
        content: message.content,
        tokenCount: message.tokenCount,
        type: 'short_term',
      })
    }
    const sessions = await db.session.findMany({
      where: { agentId: AGENT },
      include: { _count: { select: { messages: true } } },
    })
    // A writer whose first write was cut has no session yet (its first write creates it).
    expect(sessions.length).toBeLessThanOrEqual(WRITERS)
    expect(sessions.length).toBeGreaterThanOrEqual(logs.filter((log) => log.acknowledged.length > 0).length)
    for (const session of sessions) expect(session.messageCount).toBe(session._count.messages)
    const orphanEntries = await db.memoryEntry.count({
      where: { agentId: AGENT, type: 'short_term', messageId: null },
    })
    expect(orphanEntries).toBe(0)

    // The text index is in step too: the last acknowledged write of a few writers is found by its
    // own token through the reopened app's search.
    const reader = await reopened.gql(
      `mutation($agentId: ID!) { createApiKey(agentId: $agentId) { ... on CreatedApiKey { key } } }`,
      { agentId: AGENT },
    )
    const readerKey = reader.data.createApiKey.key as string
    for (const log of logs.slice(0, 4)) {
      const last = log.acknowledged.at(-1)
      if (!last) continue
      const token = last.content.split(' ').at(-1) as string
      const found = await reopened.gql(
        `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES], limit: 5 }) { ... on SearchResult { hits { message { content } } } } }`,
        { q: token },
        readerKey,
      )
      expect(
        found.data.search.hits.map((hit: { message: { content: string } | null }) => hit.message?.content),
      ).toContain(last.content)
    }
  }, 120_000)
})
