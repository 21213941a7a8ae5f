import {
  type Clock,
  ConflictError,
  domainOfUrl,
  MEMORY_ISOLATIONS,
  NotFoundError,
  newRunId,
  type RunKind,
  type RunStatus,
  runMemoryScope,
  ValidationError,
} from '@engram/core'
import { encodeCursor } from '../paging/cursor.ts'
import type { EventBus, RunEvent } from '../ports/event-bus.ts'
import type {
  RunFilter,
  RunRecord,
  TrajectoryForgetResult,
  TrajectoryMemoryRepository,
} from '../ports/trajectories.ts'
import { checkRunEnd, guardRunEnd, recordRunEnd } from './run-end.ts'
import type { InputCheck } from './run-input.ts'
import { decodeRunCursor, walkLineage } from './run-lineage.ts'
import type { RunMemory } from './run-memory.ts'
import type {
  CompleteRunInput,
  FailRunInput,
  RunEnd,
  RunEndInput,
  RunLineage,
  RunPage,
  RunProgressInput,
  StartRunInput,
  StepInput,
} from './run-types.ts'

export interface RunRegistryDeps {
  repository: TrajectoryMemoryRepository
  memory: RunMemory
  clock: Clock
  events: EventBus
  /** Generated run and session ids draw their suffix from it; seeded in tests. */
  random: () => number
}

/**
 * Spec 004's run registry, the orchestration API: runs start, report progress and end; an ended
 * (or running) run can be resumed in its run session or forked into a new one; lineage walks the
 * tree of resumes and forks. Ending a run records what it learnt in its memory scope (through
 * RunMemory) unless its memory is OFF. Every start, progress report and end is published as
 * 'run:event' (ids only) for the runEvents subscription.
 */
export class RunRegistry {
  private readonly repository: TrajectoryMemoryRepository
  private readonly memory: RunMemory
  private readonly clock: Clock
  private readonly events: EventBus
  private readonly random: () => number
  // A run's check-then-write steps (progress, end) one at a time in this process, so two ends of
  // one run cannot both see it RUNNING.
  private readonly busy = new Map<string, Promise<unknown>>()

  constructor(deps: RunRegistryDeps) {
    this.repository = deps.repository
    this.memory = deps.memory
    this.clock = deps.clock
    this.events = deps.events
    this.random = deps.random
  }

  async startRun(agentId: string, input: StartRunInput): Promise<RunRecord> {
    const check = this.memory.check()
    const L = this.memory.limits
    check.text('goal', input.goal, L.maxGoalChars)
    const givenId = input.runId != null ? check.id('runId', input.runId) : null
    const givenSession = input.sessionId != null ? check.id('sessionId', input.sessionId) : null
    const startUrl = check.url('startUrl', input.startUrl)
    const domain = this.domainOf(check, input.domain, startUrl)
    const isolation = input.isolation ?? 'SHARED'
    if (!MEMORY_ISOLATIONS.includes(isolation))
      check.issues.push({ field: 'isolation', message: `must be one of ${MEMORY_ISOLATIONS.join(', ')}` })
    const scope = input.scope != null ? check.scope('scope', input.scope) : null
    if (scope !== null && isolation !== 'SHARED')
      check.issues.push({
        field: 'scope',
        message: `only a SHARED run names its scope (this one is ${isolation})`,
      })
    if (input.model != null) check.text('model', input.model, L.maxModelChars)
    check.done()
    const now = this.clock.now()
    const id = givenId ?? newRunId(now.getTime(), this.random)
    const memoryScope = runMemoryScope(isolation, scope, id)
    if (memoryScope !== null && memoryScope.length > L.maxScopeChars)
      throw new ValidationError([
        {
          field: 'runId',
          message: `makes the run's scope (run:<runId>) longer than ${L.maxScopeChars} characters`,
          limit: L.maxScopeChars - 4,
        },
      ])
    const { goal } = await this.memory.guard(agentId, { goal: input.goal })
    return this.insert(agentId, {
      id,
      sessionId: givenSession ?? newRunId(now.getTime(), this.random, 'session'),
      parentRunId: null,
      kind: 'START',
      isolation,
      scope: memoryScope,
      goal: goal as string,
      domain,
      startUrl,
      model: input.model ?? null,
      at: now,
    })
  }

  /** A running run's current URL, turns and what it is doing; CONFLICT once it has ended. */
  async reportProgress(agentId: string, runId: string, input: RunProgressInput): Promise<RunRecord> {
    const check = this.memory.check()
    const L = this.memory.limits
    check.id('runId', runId)
    check.url('currentUrl', input.currentUrl)
    check.count('turnCount', input.turnCount, L.maxTurns)
    check.optionalText('summary', input.summary, L.maxOutcomeChars)
    check.done()
    const { summary } = await this.memory.guard(agentId, { summary: input.summary })
    return this.serially(agentId, runId, async () => {
      await this.running(agentId, runId)
      const updated = await this.repository.updateRun(agentId, runId, {
        currentUrl: input.currentUrl ?? undefined,
        turnCount: input.turnCount ?? undefined,
        summary: summary ?? undefined,
        updatedAt: this.clock.now(),
      })
      this.publish(agentId, updated, 'PROGRESS')
      return updated
    })
  }

  completeRun(agentId: string, runId: string, input: CompleteRunInput): Promise<RunEnd> {
    return this.end(agentId, runId, 'COMPLETED', input, input.steps ?? [], null)
  }

  failRun(agentId: string, runId: string, input: FailRunInput): Promise<RunEnd> {
    return this.end(agentId, runId, 'FAILED', input, [], input.reason)
  }

  /** A new run continuing `runId`: same run session, domain and memory, from where it ended. */
  resumeRun(
    agentId: string,
    runId: string,
    input: { goal?: string | null; newRunId?: string | null } = {},
  ): Promise<RunRecord> {
    return this.continueFrom(agentId, runId, 'RESUME', input)
  }

  /** A new run branching off `runId` in a new run session (given, or fork_<ms>_<6 chars>). */
  forkRun(
    agentId: string,
    runId: string,
    input: { goal: string; newRunId?: string | null; sessionId?: string | null },
  ): Promise<RunRecord> {
    return this.continueFrom(agentId, runId, 'FORK', input)
  }

  async run(agentId: string, runId: string): Promise<RunRecord | null> {
    const check = this.memory.check()
    check.id('runId', runId)
    check.done()
    return this.repository.findRun(agentId, runId)
  }

  /** Most recently updated first; `after` is the previous page's nextCursor. */
  async runs(
    agentId: string,
    filter: {
      domain?: string | null
      status?: RunStatus | null
      sessionId?: string | null
      parentRunId?: string | null
      scope?: string | null
    },
    page: { limit?: number | null; after?: string | null } = {},
  ): Promise<RunPage> {
    const check = this.memory.check()
    const L = this.memory.limits
    const where: RunFilter = {
      ...(filter.domain != null ? { domain: check.domain('domain', filter.domain) } : {}),
      ...(filter.status != null ? { status: filter.status } : {}),
      ...(filter.sessionId != null ? { sessionId: check.id('sessionId', filter.sessionId) } : {}),
      ...(filter.parentRunId != null ? { parentRunId: check.id('parentRunId', filter.parentRunId) } : {}),
      ...(filter.scope != null ? { scope: check.scope('scope', filter.scope) } : {}),
    }
    const limit = check.count('limit', page.limit, L.maxListLimit, 1) ?? L.defaultListLimit
    check.done()
    const after = page.after != null ? decodeRunCursor(page.after, 'after') : null
    const [totalCount, rows] = await Promise.all([
      this.repository.countRuns(agentId, where),
      this.repository.listRuns(agentId, where, after, limit + 1),
    ])
    const runs = rows.slice(0, limit)
    const last = runs[runs.length - 1]
    const nextCursor =
      rows.length > limit && last ? encodeCursor({ timestamp: last.updatedAt, id: last.id }) : null
    return { totalCount, runs, nextCursor }
  }

  /**
   * The tree a run belongs to: up its parents to the oldest still stored (parentMissing when that
   * one's parent was deleted), then every descendant of that root, breadth first, at most `limit`.
   */
  async runLineage(agentId: string, runId: string, limit?: number | null): Promise<RunLineage> {
    const check = this.memory.check()
    const L = this.memory.limits
    check.id('runId', runId)
    const most = check.count('limit', limit, L.maxLineageRuns, 1) ?? L.maxLineageRuns
    check.done()
    const asked = await this.repository.findRun(agentId, runId)
    if (!asked) throw new NotFoundError('Run', runId)
    return walkLineage(this.repository, agentId, asked, most, L.maxLineageRuns)
  }

  /** The run and what it left in memory (its trajectory, history entry and contributions). */
  async deleteRun(agentId: string, runId: string): Promise<TrajectoryForgetResult> {
    const check = this.memory.check()
    check.id('runId', runId)
    check.done()
    const forgotten = await this.serially(agentId, runId, () => this.repository.forgetRun(agentId, runId))
    if (!forgotten) throw new NotFoundError('Run', runId)
    return forgotten
  }

  // --- steps shared by the use cases -------------------------------------------------------------

  private domainOf(check: InputCheck, domain: string | null | undefined, startUrl: string | null): string {
    if (domain != null) return check.domain('domain', domain)
    const host = startUrl !== null ? domainOfUrl(startUrl) : null
    if (host === null)
      check.issues.push({ field: 'domain', message: 'is required unless startUrl is a URL with a host' })
    return host ?? ''
  }

  private async insert(
    agentId: string,
    run: Pick<
      RunRecord,
      | 'id'
      | 'sessionId'
      | 'parentRunId'
      | 'kind'
      | 'isolation'
      | 'scope'
      | 'goal'
      | 'domain'
      | 'startUrl'
      | 'model'
    > & { at: Date },
  ): Promise<RunRecord> {
    const { at, ...fields } = run
    const inserted = await this.repository.insertRun(agentId, {
      ...fields,
      status: 'RUNNING',
      currentUrl: null,
      finalUrl: null,
      turnCount: 0,
      success: null,
      summary: null,
      result: null,
      reason: null,
      artifactPaths: [],
      durationMs: null,
      extra: null,
      startedAt: at,
      updatedAt: at,
      completedAt: null,
    })
    this.publish(agentId, inserted, 'STARTED')
    return inserted
  }

  private async continueFrom(
    agentId: string,
    parentId: string,
    kind: Exclude<RunKind, 'START'>,
    input: { goal?: string | null; newRunId?: string | null; sessionId?: string | null },
  ): Promise<RunRecord> {
    const check = this.memory.check()
    check.id('runId', parentId)
    if (input.goal != null) check.text('goal', input.goal, this.memory.limits.maxGoalChars)
    const givenId = input.newRunId != null ? check.id('newRunId', input.newRunId) : null
    const givenSession = input.sessionId != null ? check.id('sessionId', input.sessionId) : null
    check.done()
    const parent = await this.repository.findRun(agentId, parentId)
    if (!parent) throw new NotFoundError('Run', parentId)
    const { goal } = await this.memory.guard(agentId, { goal: input.goal })
    const now = this.clock.now()
    return this.insert(agentId, {
      id: givenId ?? newRunId(now.getTime(), this.random),
      sessionId:
        kind === 'RESUME' ? parent.sessionId : (givenSession ?? newRunId(now.getTime(), this.random, 'fork')),
      parentRunId: parent.id,
      kind,
      // The parent's memory, a PER_RUN parent's own scope included: the new run continues it.
      isolation: parent.isolation,
      scope: parent.scope,
      goal: goal ?? parent.goal,
      domain: parent.domain,
      startUrl: parent.finalUrl ?? parent.currentUrl ?? parent.startUrl,
      model: parent.model,
      at: now,
    })
  }

  private async end(
    agentId: string,
    runId: string,
    status: Exclude<RunStatus, 'RUNNING'>,
    given: RunEndInput,
    givenSteps: readonly StepInput[],
    givenReason: string | null,
  ): Promise<RunEnd> {
    checkRunEnd(
      this.memory.check(),
      runId,
      given,
      givenSteps,
      status === 'FAILED' ? (givenReason ?? '') : null,
    )
    const { input, steps, reason } = await guardRunEnd(this.memory, agentId, given, givenSteps, givenReason)
    return this.serially(agentId, runId, async () => {
      const run = await this.running(agentId, runId)
      const now = this.clock.now()
      const success = status === 'COMPLETED'
      // The manifest ends first, so a second end (here or on another replica) meets CONFLICT as
      // early as it can; what the run learnt follows (no transaction of the port spans both).
      const ended = await this.repository.updateRun(agentId, runId, {
        status,
        success,
        finalUrl: input.finalUrl ?? run.currentUrl,
        turnCount: input.turnCount ?? run.turnCount,
        durationMs: input.durationMs ?? Math.max(0, now.getTime() - run.startedAt.getTime()),
        summary: input.outcome ?? run.summary,
        result: input.result ?? null,
        reason,
        artifactPaths: input.artifactPaths ?? run.artifactPaths,
        model: input.model ?? run.model,
        completedAt: now,
        updatedAt: now,
      })
      const recorded = await recordRunEnd(this.memory, agentId, ended, input, steps)
      this.publish(agentId, ended, status)
      return { run: ended, ...recorded }
    })
  }

  /** The run, which must exist (NOT_FOUND) and still be running (CONFLICT). */
  private async running(agentId: string, runId: string): Promise<RunRecord> {
    const run = await this.repository.findRun(agentId, runId)
    if (!run) throw new NotFoundError('Run', runId)
    if (run.status !== 'RUNNING')
      throw new ConflictError(`run ${runId} has already ended (${run.status})`, 'runId')
    return run
  }

  private async serially<T>(agentId: string, runId: string, step: () => Promise<T>): Promise<T> {
    const key = `${agentId}\u0000${runId}`
    const before = this.busy.get(key) ?? Promise.resolve()
    const mine = before.catch(() => {}).then(step)
    const settled = mine.catch(() => {})
    this.busy.set(key, settled)
    try {
      return await mine
    } finally {
      if (this.busy.get(key) === settled) this.busy.delete(key)
    }
  }

  private publish(agentId: string, run: RunRecord, kind: RunEvent['kind']): void {
    this.events.publish('run:event', {
      agentId,
      runId: run.id,
      domain: run.domain,
      kind,
      at: run.updatedAt.toISOString(),
    })
  }
}
