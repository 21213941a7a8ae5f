// Replica scaling (issue 14 §4): 1, 2 and 3 API processes on one local postgresql-15 and one Redis,
// driven round-robin with the same request mix at the same concurrency for the same time. This
// machine has 2 cores shared by the replicas, Postgres and this driver, so throughput cannot grow
// with replicas here; what the figures show is the server CPU each request costs (the replicas'
// utime + stime from /proc, and Postgres' beside it), which is what scales on a machine with a
// core per replica.
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import { startPostgres, startRedis } from '@engram/test-servers'
import {
  type BenchOptions,
  type BenchRow,
  seededRandom,
  writeReport,
} from '../../../packages/core/bench/report.ts'
import { type GraphQLAnswer, ReplicaSet } from '../test/replicas.ts'

const REPLICA_COUNTS = [1, 2, 3]
/** Requests in flight at every moment (each driver loop sends one at a time). */
const CONCURRENCY = 16
const AGENTS = 8
const ADMIN_KEY = `admin-${randomUUID()}`
const WORDS =
  'agent page login form title result network selector click wait url error step data camping lake dinner trip'.split(
    ' ',
  )
const ADD = `mutation($c: String!, $m: String!) { addMessage(input: { conversationId: $c, role: USER, content: $m }) { __typename } }`
const SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES], limit: 10 }) { __typename } }`
const WINDOW = `query($c: String!) { contextWindow(conversationId: $c, budget: { maxContextTokens: 16000, fullMessageWindow: 30 }) { __typename ... on Error { message } } }`
/** The answers that mean the operation succeeded (anything else is an error typed in the union). */
const OK = new Set(['Message', 'SearchResult', 'ContextWindow'])

const TICKS_PER_SECOND = 100 // getconf CLK_TCK on Linux

/** utime + stime (and, with children, cutime + cstime of reaped ones) of a process, in ms. */
function cpuMs(pid: number, withReapedChildren = false): number {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return 0 // exited between listing and reading
  }
  // Fields after the command (which may hold spaces) start at state (field 3).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const at = (field: number) => Number(fields[field - 3])
  const ticks = at(14) + at(15) + (withReapedChildren ? at(16) + at(17) : 0)
  return (ticks * 1000) / TICKS_PER_SECOND
}

/** The postmaster listening on `port` (its command line has `-p <port>`), or null. */
function postmasterOf(port: number): number | null {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const args = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      const p = args.indexOf('-p')
      if (p > 0 && args[p + 1] === String(port) && args[0]?.endsWith('/postgres')) return Number(entry)
    } catch {
      // gone meanwhile
    }
  }
  return null
}

/** Postgres' CPU: the postmaster, its live backends, and the backends it has reaped. */
function postgresCpuMs(postmaster: number): number {
  let total = cpuMs(postmaster, true)
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === postmaster) total += cpuMs(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return total
}

interface Measured {
  requests: number
  errors: number
  /** The first failed answer, for the message when there are too many. */
  firstError?: string
  seconds: number
  replicaCpuMs: number
  postgresCpuMs: number
}

/** Drives the mix against `set` for `durationMs`; counts what was answered in that window. */
async function drive(
  set: ReplicaSet,
  keys: string[],
  durationMs: number,
  random: () => number,
): Promise<{ requests: number; errors: number; firstError?: string; seconds: number }> {
  const text = (count: number) =>
    Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')
  let requests = 0
  let errors = 0
  let turn = 0
  let firstError: string | undefined
  const started = performance.now()
  const until = started + durationMs
  const loop = async () => {
    while (performance.now() < until) {
      const i = turn++
      const key = keys[i % keys.length] as string
      // One conversation per agent: its writes feed its searches and context windows.
      const conversation = 'bench'
      // The fixed mix: one write, one search, one context window, in turn.
      const [query, variables] =
        i % 3 === 0
          ? [ADD, { c: conversation, m: text(40) }]
          : i % 3 === 1
            ? [SEARCH, { q: text(4) }]
            : [WINDOW, { c: conversation }]
      let answer: GraphQLAnswer
      try {
        answer = await set.on(set.next().index, query, variables, key)
      } catch (error) {
        errors++
        firstError ??= String(error)
        continue
      }
      const typename = answer.data && (Object.values(answer.data)[0] as { __typename?: string } | null)
      if (answer.errors || !typename?.__typename || !OK.has(typename.__typename)) {
        errors++
        firstError ??= JSON.stringify(answer).slice(0, 500)
      } else requests++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, loop))
  return { requests, errors, firstError, seconds: (performance.now() - started) / 1000 }
}

async function measureReplicas(
  count: number,
  server: { url: string; port: number; createDatabase(): Promise<string> },
  redisUrl: string,
  quick: boolean,
): Promise<Measured> {
  const set = await ReplicaSet.start({
    count,
    databaseUrl: await server.createDatabase(),
    redisUrl,
    adminKey: ADMIN_KEY,
    env: {
      ENGRAM_REDIS_PREFIX: `engram-bench-${randomUUID().slice(0, 8)}`,
      // The request path only: background work would spend the CPU being measured.
      OPTIMIZER_INTERVAL_MS: '0',
      ENGRAM_EXTRACTION: 'off',
      ENGRAM_SUMMARIES: 'off',
      ENGRAM_PROFILE: 'off',
    },
  })
  try {
    const keys: string[] = []
    for (let a = 0; a < AGENTS; a++) {
      const answer = await set.gql(
        `mutation($agentId: ID!) { createApiKey(agentId: $agentId) { ... on CreatedApiKey { key } } }`,
        { agentId: `bench-agent-${a}` },
      )
      const key = answer.data?.createApiKey?.key
      if (!key) throw new Error(`createApiKey failed: ${JSON.stringify(answer)}`)
      keys.push(key)
    }
    const random = seededRandom(31)
    // Each agent's conversation exists before any request of the mix asks for its window.
    for (const key of keys) {
      const answer = await set.gql(ADD, { c: 'bench', m: 'the first message of the bench conversation' }, key)
      if (answer.data?.addMessage?.__typename !== 'Message') throw new Error(JSON.stringify(answer))
    }
    // Warm-up on every replica (JIT, pools, each agent's first write): not measured, and its
    // context windows asked before an agent's conversation exists are not counted either.
    await drive(set, keys, quick ? 2_000 : 4_000, random)
    const postmaster = postmasterOf(server.port)
    const pids = set.replicas.map((replica) => replica.pid)
    const replicaBefore = pids.reduce((sum, pid) => sum + cpuMs(pid), 0)
    const postgresBefore = postmaster ? postgresCpuMs(postmaster) : 0
    const run = await drive(set, keys, quick ? 5_000 : 15_000, random)
    const replicaCpuMs = pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - replicaBefore
    const postgresCpu = postmaster ? postgresCpuMs(postmaster) - postgresBefore : Number.NaN
    // An internal error's cause is in the replica's log, not in the answer.
    const logged =
      run.errors > 0
        ? set.replicas
            .flatMap((replica) => replica.output)
            .join('')
            .slice(-3000)
        : ''
    return { ...run, firstError: `${run.firstError}\n${logged}`, replicaCpuMs, postgresCpuMs: postgresCpu }
  } finally {
    await set.stop()
  }
}

/** Throughput and server CPU per request with 1, 2 and 3 replicas on one Postgres + Redis. */
export async function replicaBenchmarks({ quick }: BenchOptions): Promise<BenchRow[]> {
  const postgres = await startPostgres()
  const redis = await startRedis()
  try {
    const rows: BenchRow[] = []
    for (const count of REPLICA_COUNTS) {
      const m = await measureReplicas(count, postgres, redis.url, quick)
      // A few internal errors are a known Postgres race (two transactions writing the same
      // Embedding row: P2002), counted in the note; more than 5% means the figures mean nothing.
      if (m.errors > m.requests * 0.05)
        throw new Error(
          `${count} replicas: ${m.errors} errors for ${m.requests} requests; first: ${m.firstError}`,
        )
      const label = `${count} replica${count > 1 ? 's' : ''}`
      const note = `${m.requests} requests in ${m.seconds.toFixed(1)} s, concurrency ${CONCURRENCY}, mix add/search/contextWindow 1:1:1, ${m.errors} errors`
      rows.push(
        {
          name: `throughput: ${label}`,
          value: m.requests / m.seconds,
          unit: 'req/s',
          better: 'higher',
          note,
          ...(count > 1 ? { baseline: 'throughput: 1 replica' } : {}),
        },
        {
          name: `replica CPU per request: ${label}`,
          value: m.replicaCpuMs / m.requests,
          unit: 'ms CPU/req',
          better: 'lower',
          note: `sum of the ${count} API processes' utime+stime`,
          ...(count > 1 ? { baseline: 'replica CPU per request: 1 replica' } : {}),
        },
        {
          name: `Postgres CPU per request: ${label}`,
          value: m.postgresCpuMs / m.requests,
          unit: 'ms CPU/req',
          better: 'lower',
          note: 'postmaster + backends utime+stime',
          ...(count > 1 ? { baseline: 'Postgres CPU per request: 1 replica' } : {}),
        },
      )
    }
    return rows
  } finally {
    await redis.stop()
    await postgres.stop()
  }
}

// Run on its own: `tsx apps/api/bench/replicas.ts [--quick]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await replicaBenchmarks({ quick: process.argv.includes('--quick'), random: seededRandom(31) })
  for (const row of rows) {
    const base = row.baseline ? rows.find((r) => r.name === row.baseline) : null
    if (base) row.ratio = row.value / base.value
  }
  writeReport('replicas', 'API replicas on one Postgres + Redis (HTTP, round-robin)', rows)
}
