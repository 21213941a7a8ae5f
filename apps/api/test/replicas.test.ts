import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { RedisLease } from '@engram/bus-redis'
import { optimizerLeaseKey } from '@engram/engine'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { type Client, createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { freshPostgresDatabase, TEST_BACKEND } from './helpers.ts'
import { type GraphQLAnswer, ReplicaSet, replicaDatabaseUrl } from './replicas.ts'

// Short leases and a fast schedule keep the takeover inside a second (the defaults are 30 s and
// 120 s); the renewal is well below the TTL, as the defaults' 10 s / 30 s are.
const INTERVAL_MS = 150
const LEASE_TTL_MS = 900
const LEASE_RENEW_MS = 150
const ADMIN_KEY = `admin-${randomUUID()}`
const PREFIX = `engram-replicas-${randomUUID().slice(0, 8)}`

interface Snapshot {
  id: string
  agentId: string
  timestamp: string
}

/** Polls every 25 ms until `done` holds; returns how long it took. */
async function waitFor(done: () => Promise<boolean>, deadlineMs: number, what: string): Promise<number> {
  const started = Date.now()
  while (!(await done())) {
    if (Date.now() - started > deadlineMs) throw new Error(`${what}: not within ${deadlineMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  return Date.now() - started
}

function dataOf(answer: GraphQLAnswer, field: string): any {
  if (answer.errors) {
    // A masked "Unexpected error." says nothing by itself: the replicas' own logs say what failed.
    const logs = (replicaSet?.replicas ?? []).map(
      (replica) => `--- replica ${replica.index} ---\n${replica.output.join('').slice(-3000)}`,
    )
    throw new Error(`${field}: ${JSON.stringify(answer.errors)}\n${logs.join('\n')}`)
  }
  return answer.data?.[field]
}
/** The set under test, for dataOf's message. */
let replicaSet: ReplicaSet | undefined

// Three API processes on one database (a SQLite file, or Postgres in the suite's postgres
// project; ENGRAM_REPLICAS_DATABASE_URL names another) and one Redis, requests spread round-robin.
describe('three API replicas on one database and one Redis', () => {
  let redis: RedisServer
  let leases: RedisLease
  let set: ReplicaSet
  let directory: string
  const keys: Record<string, string> = {}
  const clients: Client[] = []

  const leaseHolderPid = async (agentId: string): Promise<number | null> => {
    // The same key the replicas use: <prefix>:lease:optimizer:<agent>.
    const holder = await leases.holderOf(optimizerLeaseKey(agentId))
    // Holders are `<host>:<pid>:<id>`.
    return holder ? Number(holder.split(':').at(-2)) : null
  }
  const addMessage = async (index: number, agentId: string, content: string) =>
    dataOf(
      await set.on(
        index,
        `mutation($content: String!) { addMessage(input: { conversationId: "shared", role: USER, content: $content }) { __typename } }`,
        { content },
        keys[agentId],
      ),
      'addMessage',
    )
  const messagesOn = async (index: number, agentId: string): Promise<string[]> => {
    const session = dataOf(
      await set.on(
        index,
        `query { session(conversationId: "shared") { ... on Session { messages(last: 100) { edges { node { content } } } } } }`,
        {},
        keys[agentId],
      ),
      'session',
    )
    return (session?.messages.edges ?? []).map((edge: { node: { content: string } }) => edge.node.content)
  }
  const lexicalHitsOn = async (index: number, agentId: string, query: string): Promise<string[]> =>
    dataOf(
      await set.on(
        index,
        `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES], strategy: LEXICAL, limit: 10 }) { ... on SearchResult { hits { text } } } }`,
        { q: query },
        keys[agentId],
      ),
      'search',
    ).hits.map((hit: { text: string }) => hit.text)
  const snapshotsOf = async (agentId: string): Promise<Snapshot[]> =>
    dataOf(
      await set.gql(
        `query($agentId: ID!) { optimizerSnapshots(agentId: $agentId, last: 500) { ... on OptimizationSnapshotList { snapshots { id agentId timestamp } } } }`,
        { agentId },
      ),
      'optimizerSnapshots',
    ).snapshots

  beforeAll(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-replicas-'))
    redis = await startRedis()
    leases = new RedisLease({ url: redis.url, prefix: PREFIX })
    replicaSet = set = await ReplicaSet.start({
      count: 3,
      // The suite's backend: a fresh SQLite file, or a fresh database on the run's postgresql-15.
      databaseUrl:
        TEST_BACKEND === 'postgres' ? await freshPostgresDatabase() : replicaDatabaseUrl(directory),
      redisUrl: redis.url,
      adminKey: ADMIN_KEY,
      env: {
        ENGRAM_REDIS_PREFIX: PREFIX,
        OPTIMIZER_INTERVAL_MS: String(INTERVAL_MS),
        ENGRAM_OPTIMIZER_LEASE_TTL_MS: String(LEASE_TTL_MS),
        ENGRAM_OPTIMIZER_LEASE_RENEW_MS: String(LEASE_RENEW_MS),
        // Formation and exact token counts are not what this test is about; they would only take
        // CPU from three replicas sharing two cores.
        ENGRAM_TOKENIZER: 'heuristic',
        ENGRAM_EXTRACTION: 'off',
        ENGRAM_SUMMARIES: 'off',
        ENGRAM_PROFILE: 'off',
      },
    })
    for (const agentId of ['agent-a', 'agent-b']) {
      keys[agentId] = dataOf(
        await set.gql(
          `mutation($agentId: ID!) { createApiKey(agentId: $agentId) { ... on CreatedApiKey { key } } }`,
          { agentId },
        ),
        'createApiKey',
      ).key
    }
  }, 240_000)
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()))
    await set?.stop()
    leases?.close()
    await redis?.stop()
    if (directory) fs.rmSync(directory, { recursive: true, force: true })
  })

  it('reads a write made on one replica on the others at once', async () => {
    for (const [index, agentId] of [
      [0, 'agent-a'],
      [1, 'agent-b'],
      [2, 'agent-a'],
    ] as const) {
      const content = `written on replica ${index} for ${agentId}`
      await addMessage(index, agentId, content)
      // No wait: the next request, on each other replica, sees it.
      for (const other of [0, 1, 2].filter((i) => i !== index))
        expect(await messagesOn(other, agentId)).toContain(content)
    }
    // Round-robin over the three: each sees every write, and none of another agent's.
    for (let i = 0; i < 3; i++) {
      const index = set.next().index
      expect(await messagesOn(index, 'agent-b')).toEqual(['written on replica 1 for agent-b'])
    }
  })

  it("keeps each replica's in-process lexical index in step with writes made on another (issue 18)", async () => {
    // Every replica builds its index of agent-b first, so what follows is a catch-up, not a build.
    for (const index of [0, 1, 2]) await lexicalHitsOn(index, 'agent-b', 'zqxreplica')
    await addMessage(1, 'agent-b', 'the zqxreplica lantern hangs in the barn')
    // SQLite: another process's commit moves data_version, seen on the next search; Postgres: the
    // write's cache:invalidate reaches the others through Redis (milliseconds).
    for (const other of [0, 2])
      await waitFor(
        async () => (await lexicalHitsOn(other, 'agent-b', 'zqxreplica lantern')).length === 1,
        10_000,
        `replica ${other} finds the write`,
      )
    // Never another agent's document.
    expect(await lexicalHitsOn(0, 'agent-a', 'zqxreplica lantern')).toEqual([])
  })

  it('delivers the optimizer snapshot produced on replica C to a subscription on replica A', async () => {
    const received: Snapshot[] = []
    const client = createClient({
      url: `ws://127.0.0.1:${set.replicas[0]?.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${keys['agent-a']}` },
      retryAttempts: 0,
    })
    clients.push(client)
    client.subscribe(
      { query: `subscription { optimizerSnapshots { id agentId timestamp } }` },
      {
        next: (value) => {
          const snapshot = (value.data as { optimizerSnapshots?: Snapshot } | null)?.optimizerSnapshots
          if (snapshot) received.push(snapshot)
        },
        error: () => {},
        complete: () => {},
      },
    )
    const producedOnC: string[] = []
    await waitFor(
      async () => {
        const run = dataOf(
          await set.on(
            2,
            `mutation { runOptimizer { ... on OptimizationSnapshot { id } } }`,
            {},
            keys['agent-a'],
          ),
          'runOptimizer',
        )
        producedOnC.push(run.id)
        await new Promise((resolve) => setTimeout(resolve, 50))
        return received.some((snapshot) => producedOnC.includes(snapshot.id))
      },
      10_000,
      'a snapshot produced on C reaching A',
    )
    expect(received.every((snapshot) => snapshot.agentId === 'agent-a')).toBe(true)
  })

  it('hands the killed lease holder’s agents to another replica within the lease time, with no duplicate run', async () => {
    const mark = Date.now()
    // The schedule gives every agent with entries to one replica.
    await waitFor(
      async () => (await leaseHolderPid('agent-a')) !== null && (await leaseHolderPid('agent-b')) !== null,
      5_000,
      'both agents leased',
    )
    // Scheduled runs are happening: at least one more run of agent-a before the kill.
    const before = (await snapshotsOf('agent-a')).length
    await waitFor(async () => (await snapshotsOf('agent-a')).length > before, 5_000, 'a scheduled run')

    // The holder of agent-a now, and when its lease would lapse were it never renewed again (a
    // replica lagging behind its renewals on a loaded machine may lose it sooner, even alive: so
    // the victim is whoever holds it at the kill, read together with the time left).
    const readAt = Date.now()
    const [holderPids, left] = await Promise.all([
      Promise.all(['agent-a', 'agent-b'].map(leaseHolderPid)),
      leases.remainingMs(optimizerLeaseKey('agent-a')),
    ])
    const victim = set.byPid(holderPids[0] as number)
    expect(victim).toBeDefined()
    const victimAgents = ['agent-a', 'agent-b'].filter((_, i) => holderPids[i] === victim?.pid)
    const lapsesAt = readAt + (left ?? 0)
    const killedAt = Date.now()
    await set.kill(victim?.index as number)
    await waitFor(
      async () => {
        const pids = await Promise.all(victimAgents.map(leaseHolderPid))
        return pids.every((pid) => pid !== null && pid !== victim?.pid && set.byPid(pid)?.alive())
      },
      LEASE_TTL_MS + 5_000,
      'the killed replica’s agents taken over',
    )
    // Not before its lease lapsed (Redis counts in ms), and within the lease time plus one cycle
    // (and the scheduling slack of three processes on two cores).
    const observedAt = Date.now()
    expect(observedAt).toBeGreaterThanOrEqual(lapsesAt - 5)
    expect(observedAt - killedAt).toBeLessThanOrEqual(LEASE_TTL_MS + INTERVAL_MS + 1_000)
    // The new holder runs them: a snapshot newer than the kill, for each.
    for (const agentId of victimAgents)
      await waitFor(
        async () => (await snapshotsOf(agentId)).some((s) => Date.parse(s.timestamp) > killedAt),
        5_000,
        `a run of ${agentId} after the kill`,
      )

    // No duplicate run: one replica at a time runs an agent, cycles at least INTERVAL_MS apart
    // (a duplicate would be two runs milliseconds apart); counted since this test began.
    const window = Date.now() - mark
    for (const agentId of ['agent-a', 'agent-b']) {
      const times = (await snapshotsOf(agentId))
        .map((s) => Date.parse(s.timestamp))
        .filter((time) => time >= mark)
        .sort((x, y) => x - y)
      const gaps = times.slice(1).map((time, i) => time - (times[i] as number))
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS / 2)
      expect(times.length).toBeLessThanOrEqual(Math.floor(window / INTERVAL_MS) + 1)
    }
    // The survivors still serve, round-robin.
    expect(await messagesOn(set.next().index, 'agent-a')).toHaveLength(2)
  })
})
