// Trajectory memory (issue 16, spec 004): a synthetic workload in spec 004's shape replayed through
// the engine (reference hit rate and precision, the context tokens an agent receives with memory
// and with it OFF), and run-context assembly latency at 10K trajectories per domain on each
// backend whose storage holds trajectory memory (in-memory always; SQLite and Postgres once their
// adapter is in). Written against the Storage interface: the same code on every backend.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Clock, createTokenCounter, DEFAULT_TRAJECTORY_RULES, goalWords } from '@engram/core'
import { createEngine, createOperations, type Engine, type Principal } from '@engram/engine'
import type { TrajectoryMemoryRepository, TrajectoryRecord } from '@engram/engine/ports'
import { createInMemoryStorage } from '@engram/engine/testing'
import { createSqliteEngine } from '@engram/store-sqlite'
import { startPostgres } from '@engram/test-servers'
import {
  type BenchOptions,
  type BenchRow,
  median,
  percentile,
  seededRandom,
  writeReport,
} from '../../../packages/core/bench/report.ts'
import { openStore } from '../src/store.ts'
import {
  corpusGoal,
  type Phrasing,
  paraphrase,
  taskSteps,
  workloadDomains,
  workloadRuns,
} from './trajectory-workload.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const operator: Principal = { kind: 'operator' }
const quiet = { info() {}, warn() {}, error() {} }

/** A clock the replay moves by hand: each run an hour after the previous one. */
class BenchClock implements Clock {
  constructor(private at = Date.parse('2026-05-01T08:00:00.000Z')) {}
  now() {
    return new Date(this.at)
  }
  advance(ms: number) {
    this.at += ms
  }
}

interface OpenedBackend {
  engine: Engine
  close(): Promise<void>
}

interface Backend {
  name: string
  /** Null when this backend cannot run here or on this branch, with the reason. */
  open(clock: BenchClock): Promise<OpenedBackend | string>
}

const hasTrajectoryMemory = (engine: Engine) =>
  typeof (engine.storage as { trajectories?: Partial<TrajectoryMemoryRepository> }).trajectories
    ?.trajectoryCandidates === 'function'

function backends(): Backend[] {
  const tokenCounter = createTokenCounter()
  return [
    {
      name: 'in-memory',
      open: async (clock) => ({
        engine: createEngine({
          storage: createInMemoryStorage(clock),
          clock,
          tokenCounter,
          log: quiet,
          optimizer: { intervalMs: 0 },
        }),
        close: async () => {},
      }),
    },
    {
      name: 'SQLite',
      open: async (clock) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-trajectories-'))
        const store = await openStore(`file:${path.join(dir, 'bench.db')}`)
        const engine = createSqliteEngine({
          db: store.db,
          clock,
          tokenCounter,
          log: quiet,
          optimizerIntervalMs: 0,
          databaseFile: store.databaseFile,
        }) as unknown as Engine
        const close = async () => {
          await store.close()
          fs.rmSync(dir, { recursive: true, force: true })
        }
        if (!hasTrajectoryMemory(engine)) {
          await close()
          return 'the SQLite adapter of TrajectoryMemoryRepository is not on this branch (t16-store)'
        }
        return { engine, close }
      },
    },
    {
      name: 'Postgres',
      open: async (clock) => {
        let server: Awaited<ReturnType<typeof startPostgres>>
        try {
          server = await startPostgres()
        } catch (error) {
          return `no postgresql-15 here (${error instanceof Error ? error.message : String(error)})`
        }
        const store = await openStore(await server.createDatabase(), { poolSize: 4 })
        const engine = store.postgres?.createEngine({
          clock,
          tokenCounter,
          log: quiet,
          optimizerIntervalMs: 0,
        }) as unknown as Engine
        const close = async () => {
          await store.close()
          await server.stop()
        }
        if (!hasTrajectoryMemory(engine)) {
          await close()
          return 'the Postgres adapter of TrajectoryMemoryRepository is not on this branch (t16-store)'
        }
        return { engine, close }
      },
    },
  ]
}

/** What the replay measured: counts, so any backend must give the same. */
interface ReplayFigures {
  runs: number
  /** Per phrasing: runs whose task had a live successful trajectory, and how many got a reference. */
  repeated: Record<Phrasing, { runs: number; offered: number; sameTask: number }>
  /** References offered in all, and how many were for the run's own task. */
  offered: number
  offeredSameTask: number
  unrelatedRuns: number
  unrelatedOffered: number
  firstTimeRuns: number
  firstTimeOffered: number
  tokensWithMemory: number[]
  tokensUntrimmed: number[]
  tokensOff: number[]
  referenceSteps: number[]
}

/**
 * Replays the workload through the engine's operations, as an orchestrator drives them: each run
 * is started (SHARED), asks for its context by run id, and ends with completeRun (its steps, facts
 * and selectors) or failRun (a failed selector); beside it an OFF run of the same goal asks for its
 * context too (the no-memory baseline). Unrelated goals complete without steps: they leave a
 * session entry but no trajectory, so they stay unrelated.
 */
async function replay(engine: Engine, clock: BenchClock, count: number): Promise<ReplayFigures> {
  const random = seededRandom(404)
  const ops = createOperations(engine)
  const agentId = 'bench-replay'
  await ops.createAgent(operator, { id: agentId })
  const agent: Principal = { kind: 'agent', agentId }
  const domains = workloadDomains()
  const runs = workloadRuns(domains, count, random)
  const taskOf = new Map<string, string>()
  const recorded = new Set<string>()
  const figures: ReplayFigures = {
    runs: runs.length,
    repeated: {
      repeat: { runs: 0, offered: 0, sameTask: 0 },
      'light paraphrase': { runs: 0, offered: 0, sameTask: 0 },
      'heavy paraphrase': { runs: 0, offered: 0, sameTask: 0 },
    },
    offered: 0,
    offeredSameTask: 0,
    unrelatedRuns: 0,
    unrelatedOffered: 0,
    firstTimeRuns: 0,
    firstTimeOffered: 0,
    tokensWithMemory: [],
    tokensUntrimmed: [],
    tokensOff: [],
    referenceSteps: [],
  }
  for (const [i, run] of runs.entries()) {
    clock.advance(HOUR)
    const where = run.domain.origin ? { startUrl: `${run.domain.origin}/` } : { domain: run.domain.domain }
    const runId = `run_replay_${i}`
    await ops.startRun(agent, { runId, sessionId: `session_${i % 7}`, goal: run.goal, ...where })
    await ops.startRun(agent, { runId: `${runId}_off`, goal: run.goal, isolation: 'OFF', ...where })
    const context = await ops.runContext(agent, { runId })
    const off = await ops.runContext(agent, { runId: `${runId}_off` })
    figures.tokensWithMemory.push(context.totalTokens)
    figures.tokensUntrimmed.push(context.sections.reduce((sum, s) => sum + s.fullTokens, 0))
    figures.tokensOff.push(off.totalTokens)
    const reference = context.reference
    const sameTask =
      reference !== null && run.task !== null && taskOf.get(reference.trajectory.id) === run.task.id
    if (reference) {
      figures.offered++
      if (sameTask) figures.offeredSameTask++
      figures.referenceSteps.push(reference.trajectory.stepCount)
    }
    if (run.task === null) {
      figures.unrelatedRuns++
      if (reference) figures.unrelatedOffered++
    } else if (recorded.has(run.task.id)) {
      const bucket = figures.repeated[run.phrasing as Phrasing]
      bucket.runs++
      if (reference) bucket.offered++
      if (sameTask) bucket.sameTask++
    } else {
      figures.firstTimeRuns++
      if (reference) figures.firstTimeOffered++
    }

    clock.advance(20_000 + (i % 13) * 1_000)
    const ending = {
      runId,
      finalUrl: run.domain.origin ? `${run.domain.origin}/after/${i}` : undefined,
      turnCount: 4 + (i % 9),
    }
    if (run.fails && run.task) {
      await ops.failRun(agent, {
        ...ending,
        reason: 'the page never showed the expected state',
        selectors: [
          {
            element: `element for ${run.task.selectors.at(-1)}`,
            selector: run.task.selectors.at(-1) as string,
            outcome: 'FAILURE',
          },
        ],
      })
    } else if (run.task) {
      const steps = taskSteps(run.task, run.domain.origin, random).map(({ extra: _, ...step }) => ({
        action: step.action,
        ...(step.selector ? { selector: step.selector } : {}),
        ...(step.value ? { value: step.value } : {}),
        ...(step.url ? { url: step.url } : {}),
        verified: step.verified,
        durationMs: step.durationMs,
      }))
      const end = await ops.completeRun(agent, {
        ...ending,
        outcome: `Finished: ${run.goal}`,
        steps,
        facts: run.domain.facts.map((f) => ({
          type: f.type,
          key: f.key,
          value: random() < 0.9 ? f.value : f.other,
        })),
        selectors: run.task.selectors.map((selector) => ({ element: `element for ${selector}`, selector })),
      })
      if (end.trajectoryId) {
        taskOf.set(end.trajectoryId, run.task.id)
        recorded.add(run.task.id)
      }
    } else {
      await ops.completeRun(agent, { ...ending, outcome: `Looked into: ${run.goal}` })
    }
    await ops.failRun(agent, { runId: `${runId}_off`, reason: 'baseline only asks for its context' })
  }
  return figures
}

/**
 * Seeds `perDomain` trajectories on each of two domains (restored in batches, as an import writes
 * them), with session history, facts, selectors and hints beside them. The small records go
 * first: the in-memory store copies its whole state per transaction.
 */
async function seedCorpus(engine: Engine, clock: BenchClock, agentId: string, perDomain: number) {
  const random = seededRandom(1_010)
  const repo = engine.storage.trajectories
  const now = clock.now().getTime()
  const domains = ['big-shop-1.example.com', 'big-shop-2.example.com']
  for (let i = 0; i < 3; i++)
    await repo.addHint(agentId, {
      scope: 'default',
      text: `Hint ${i}: dismiss overlays before typing`,
      createdAt: clock.now(),
      updatedAt: clock.now(),
      extra: null,
    })
  for (const domain of domains) {
    for (let i = 0; i < 5; i++)
      await repo.insertRunSession(
        agentId,
        {
          scope: 'default',
          domain,
          sessionId: 'corpus',
          runId: null,
          goal: corpusGoal(random),
          outcome: 'Finished the task and left the cart ready',
          success: i !== 3,
          finalUrl: `https://${domain}/after/${i}`,
          turnsUsed: 6,
          durationMs: 30_000,
          endedAt: new Date(now - i * HOUR),
          extra: null,
        },
        DEFAULT_TRAJECTORY_RULES.sessionHistoryLimit,
      )
    for (let i = 0; i < 30; i++)
      await repo.observeFact(
        agentId,
        { scope: 'default', domain, type: 'QUIRK', key: `quirk-${i}`, value: `the page does thing ${i}` },
        clock.now(),
        DEFAULT_TRAJECTORY_RULES,
        null,
      )
    for (let i = 0; i < 100; i++)
      await repo.observeSelector(
        agentId,
        {
          scope: 'default',
          domain,
          element: `button "Action ${i % 40}"`,
          selector: `[data-testid='action-${i}']`,
          outcome: 'SUCCESS',
        },
        clock.now(),
        null,
      )
  }
  for (const domain of domains) {
    // An import-sized batch: one restore is one transaction, within Prisma's interactive timeout.
    const batch = 1_000
    for (let start = 0; start < perDomain; start += batch) {
      const trajectories: TrajectoryRecord[] = []
      for (let i = start; i < Math.min(perDomain, start + batch); i++) {
        const goal = corpusGoal(random)
        const steps = Array.from({ length: 6 }, (_, s) => ({
          action: s === 2 ? 'type' : 'click',
          selector: `[data-testid='step-${s}-${i % 50}']`,
          value: s === 2 ? goal.split(' ').slice(-2).join(' ') : null,
          url: `https://${domain}/p/${i % 100}`,
          verified: random() < 0.85,
          durationMs: 500 + Math.floor(random() * 1_500),
          extra: null,
        }))
        trajectories.push({
          id: `traj_${domain}_${i}`,
          agentId,
          scope: 'default',
          domain,
          origin: `https://${domain}`,
          goal,
          words: goalWords(goal),
          runId: null,
          steps,
          stepCount: steps.length,
          verifiedCount: steps.filter((s) => s.verified).length,
          success: random() > 0.05,
          turns: 7,
          durationMs: steps.reduce((sum, s) => sum + s.durationMs, 0),
          outcome: 'done',
          model: null,
          // Spread over the last 29 days: every one is live (traceTtlDays 30).
          recordedAt: new Date(now - Math.floor(random() * 29 * DAY)),
          extra: null,
        })
      }
      await repo.restore(agentId, {
        runs: [],
        runSessions: [],
        trajectories,
        facts: [],
        selectors: [],
        hints: [],
      })
    }
  }
  return domains
}

/** runContext timings at `perDomain` trajectories per domain: asked goals (70%), paraphrased (20%), unrelated (10%). */
async function latency(engine: Engine, clock: BenchClock, perDomain: number, queries: number) {
  const ops = createOperations(engine)
  const agentId = 'bench-latency'
  await ops.createAgent(operator, { id: agentId })
  const seedStart = performance.now()
  const domains = await seedCorpus(engine, clock, agentId, perDomain)
  const seedSeconds = (performance.now() - seedStart) / 1_000
  const random = seededRandom(2_020)
  const goals = Array.from({ length: queries + 5 }, (_, i) => {
    const roll = random()
    const goal = corpusGoal(random)
    return {
      domain: domains[i % domains.length] as string,
      goal:
        roll < 0.7
          ? goal
          : roll < 0.9
            ? paraphrase(goal, 'light paraphrase', random)
            : 'download the warranty certificate as pdf',
    }
  })
  const timings: number[] = []
  let offered = 0
  let tokens = 0
  for (const [i, q] of goals.entries()) {
    const start = performance.now()
    const context = await engine.runContext.build(agentId, q)
    const ms = performance.now() - start
    // The first five warm the tokenizer, statement caches and the JIT.
    if (i < 5) continue
    timings.push(ms)
    if (context.reference) offered++
    tokens += context.totalTokens
  }
  return { timings, seedSeconds, offered, meanTokens: tokens / timings.length }
}

const share = (part: number, whole: number) => (whole === 0 ? Number.NaN : (part / whole) * 100)
const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length

export async function trajectoryBenchmarks({ quick }: BenchOptions): Promise<BenchRow[]> {
  const runCount = quick ? 120 : 400
  const perDomain = quick ? 1_000 : 10_000
  const queries = quick ? 50 : 200
  const rows: BenchRow[] = []
  const skipped: string[] = []
  let reference: string | null = null

  for (const backend of backends()) {
    const clock = new BenchClock()
    const opened = await backend.open(clock)
    if (typeof opened === 'string') {
      skipped.push(`${backend.name}: ${opened}`)
      continue
    }
    try {
      await measureBackend(backend, opened, clock)
    } catch (error) {
      // One backend failing leaves the others' figures in the report, with why.
      const reason = (error instanceof Error ? error.message : String(error)).trim().split('\n').at(-1)
      skipped.push(`${backend.name} failed: ${reason}`)
    } finally {
      await opened.close()
    }
  }
  for (const reason of skipped) rows.push({ name: `skipped: ${reason}`, value: 0, unit: '-' })
  return rows

  async function measureBackend(backend: Backend, opened: OpenedBackend, clock: BenchClock) {
    const f = await replay(opened.engine, clock, runCount)
    // Counts: every backend must give the in-memory reference's figures exactly.
    const summary = JSON.stringify({ ...f, tokensWithMemory: null, tokensUntrimmed: null })
    if (reference === null) {
      reference = summary
      const repeatedRuns = Object.values(f.repeated).reduce((s, b) => s + b.runs, 0)
      const repeatedOffered = Object.values(f.repeated).reduce((s, b) => s + b.offered, 0)
      const repeatedSameTask = Object.values(f.repeated).reduce((s, b) => s + b.sameTask, 0)
      const askedOrLight = f.repeated.repeat.runs + f.repeated['light paraphrase'].runs
      const askedOrLightOffered = f.repeated.repeat.offered + f.repeated['light paraphrase'].offered
      rows.push(
        {
          name: 'reference hit rate: repeated goal as asked',
          value: share(f.repeated.repeat.offered, f.repeated.repeat.runs),
          unit: '%',
          better: 'higher',
          note: `${f.repeated.repeat.offered}/${f.repeated.repeat.runs} runs whose task has a live trajectory; for that task: ${f.repeated.repeat.sameTask}`,
        },
        {
          name: 'reference hit rate: light paraphrase (a filler or one synonym)',
          value: share(f.repeated['light paraphrase'].offered, f.repeated['light paraphrase'].runs),
          unit: '%',
          better: 'higher',
          note: `${f.repeated['light paraphrase'].offered}/${f.repeated['light paraphrase'].runs}; for that task: ${f.repeated['light paraphrase'].sameTask}`,
        },
        {
          name: 'reference hit rate: heavy paraphrase (two synonyms, fillers)',
          value: share(f.repeated['heavy paraphrase'].offered, f.repeated['heavy paraphrase'].runs),
          unit: '%',
          note: `${f.repeated['heavy paraphrase'].offered}/${f.repeated['heavy paraphrase'].runs}; for that task: ${f.repeated['heavy paraphrase'].sameTask}; word overlap is not meant to catch these`,
        },
        {
          name: 'reference hit rate: repeated, as asked or lightly paraphrased',
          value: share(askedOrLightOffered, askedOrLight),
          unit: '%',
          better: 'higher',
          note: `all repeated incl. heavy: ${repeatedOffered}/${repeatedRuns} (${share(repeatedOffered, repeatedRuns).toFixed(1)}%)`,
        },
        {
          name: 'reference precision (offered reference is for the same task)',
          value: share(f.offeredSameTask, f.offered),
          unit: '%',
          better: 'higher',
          note: `${f.offeredSameTask}/${f.offered} offered; near-miss tasks share words on purpose`,
        },
        {
          name: 'reference precision when the task was done before',
          value: share(repeatedSameTask, repeatedOffered),
          unit: '%',
          better: 'higher',
          note: `${repeatedSameTask}/${repeatedOffered}: the right trajectory exists and outranks its siblings`,
        },
        {
          name: 'unrelated goals given a reference',
          value: share(f.unrelatedOffered, f.unrelatedRuns),
          unit: '%',
          better: 'lower',
          note: `${f.unrelatedOffered}/${f.unrelatedRuns}; first-time tasks given another task's: ${f.firstTimeOffered}/${f.firstTimeRuns}`,
        },
        {
          name: 'context tokens per run with memory (SHARED), mean',
          value: mean(f.tokensWithMemory),
          unit: 'tokens',
          note: `p95 ${percentile(f.tokensWithMemory, 95)}, budget ${DEFAULT_TRAJECTORY_RULES.defaultContextBudgetTokens}; untrimmed mean ${Math.round(mean(f.tokensUntrimmed))}`,
        },
        {
          name: 'context tokens per run without memory (OFF), mean',
          value: mean(f.tokensOff),
          unit: 'tokens',
          note: `max ${Math.max(...f.tokensOff)}: an OFF run's context is empty`,
        },
        {
          name: 'reference steps offered, median',
          value: median(f.referenceSteps),
          unit: 'steps',
          note: `${runCount} runs on 4 domains × 12 tasks, 15% failing`,
        },
      )
    } else {
      rows.push({
        name: `replay figures identical on ${backend.name}`,
        value: summary === reference ? 1 : 0,
        unit: 'yes=1',
        note: 'hit, precision and OFF counts against the in-memory reference',
      })
    }

    const measured = await latency(opened.engine, clock, perDomain, queries)
    rows.push(
      {
        name: `runContext p50, ${perDomain.toLocaleString('en-US')} trajectories/domain: ${backend.name}`,
        value: percentile(measured.timings, 50),
        unit: 'ms',
        better: 'lower',
        note: `${measured.timings.length} queries; ${measured.offered} got a reference; mean ${Math.round(measured.meanTokens)} tokens`,
      },
      {
        name: `runContext p95, ${perDomain.toLocaleString('en-US')} trajectories/domain: ${backend.name}`,
        value: percentile(measured.timings, 95),
        unit: 'ms',
        better: 'lower',
        note: `seeded ${(2 * perDomain).toLocaleString('en-US')} trajectories in ${measured.seedSeconds.toFixed(1)} s`,
      },
    )
  }
}

// Run on its own: `tsx apps/api/bench/trajectories.ts [--quick]` (the harness imports the function).
if (import.meta.url === `file://${process.argv[1]}`) {
  const quick = process.argv.includes('--quick')
  const rows = await trajectoryBenchmarks({ quick, random: seededRandom(41) })
  writeReport(
    quick ? 'trajectories-quick' : 'trajectories',
    'Trajectory memory (issue 16): reference matching, run context latency and tokens',
    rows,
  )
}
