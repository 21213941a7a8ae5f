import {
  type AppFactType,
  type Clock,
  DEFAULT_RUN_SCOPE,
  goalWords,
  NotFoundError,
  newRunId,
  type TrajectoryLimits,
  type TrajectoryRules,
  ValidationError,
} from '@engram/core'
import type {
  AppFactRecord,
  NewRunSession,
  RunDomainSummary,
  RunSessionRecord,
  SelectorRecord,
  TrajectoryForgetResult,
  TrajectoryMemoryRepository,
  TrajectoryRecord,
} from '../ports/trajectories.ts'
import { RunHints } from './run-hints.ts'
import {
  factTexts,
  type GuardedTexts,
  guardedFacts,
  guardedSteps,
  InputCheck,
  MAX_DURATION_MS,
  originOf,
  stepOf,
  stepTexts,
  type TextGuard,
} from './run-input.ts'
import type {
  FactInput,
  Page,
  PageRequest,
  RecordTarget,
  RecordTrajectoryInput,
  SelectorInput,
  TrajectoryFields,
} from './run-types.ts'

export interface RunMemoryDeps {
  repository: TrajectoryMemoryRepository
  clock: Clock
  rules: TrajectoryRules
  limits: TrajectoryLimits
  /** Generated ids (trajectories) draw their suffix from it; seeded in tests. */
  random: () => number
  /** The agents' sensitive-data policy over what is written; nothing guarded when absent. */
  guard?: TextGuard
}

/**
 * Trajectory memory's records (spec 004): trajectories, the session history, app facts with
 * their confidence, the selector cache and hints, each in a memory scope of one agent. The run
 * registry records a run's end through it; the direct operations (recordKnowledge, appFacts...)
 * call it as well.
 */
export class RunMemory {
  private readonly repository: TrajectoryMemoryRepository
  private readonly clock: Clock
  readonly rules: TrajectoryRules
  readonly limits: TrajectoryLimits
  private readonly random: () => number
  private readonly textGuard: TextGuard
  /** Cross-domain hints (spec 004's hints.json). */
  readonly hints: RunHints

  constructor(deps: RunMemoryDeps) {
    this.hints = new RunHints({ repository: deps.repository, clock: deps.clock, memory: this })
    this.textGuard = deps.guard ?? (async (_agentId, texts) => texts.map((t) => t.text))
    this.repository = deps.repository
    this.clock = deps.clock
    this.rules = deps.rules
    this.limits = deps.limits
    this.random = deps.random
  }

  check(): InputCheck {
    return new InputCheck(this.limits)
  }

  /**
   * The free texts of one write (goal, outcome, typed values, facts, hints) through the agent's
   * sensitive-data policy, in one call so a refusal names every field and nothing is written.
   */
  async guard(agentId: string, texts: GuardedTexts): Promise<GuardedTexts> {
    const present = Object.entries(texts).flatMap(([field, text]) => (text == null ? [] : [{ field, text }]))
    if (present.length === 0) return texts
    const guarded = await this.textGuard(agentId, present)
    const out: GuardedTexts = { ...texts }
    present.forEach((p, i) => {
      out[p.field] = guarded[i]
    })
    return out
  }

  /**
   * The scope and run a record call writes with. A run given must be the agent's (NOT_FOUND) with
   * its memory on, and a scope given too must be the run's: a run's contributions stay in the
   * scope its context reads, so deleting the run finds them.
   */
  private async target(
    agentId: string,
    check: InputCheck,
    target: RecordTarget,
  ): Promise<{ scope: string; domain: string; runId: string | null }> {
    const domain = check.domain('domain', target.domain)
    const named = target.scope != null ? check.scope('scope', target.scope) : null
    const runId = target.runId != null ? check.id('runId', target.runId) : null
    check.done()
    if (runId === null) return { scope: named ?? DEFAULT_RUN_SCOPE, domain, runId }
    const run = await this.repository.findRun(agentId, runId)
    if (!run) throw new NotFoundError('Run', runId)
    if (run.scope === null)
      throw new ValidationError([
        { field: 'runId', message: `run ${runId} has its memory OFF: it records nothing` },
      ])
    if (named !== null && named !== run.scope)
      throw new ValidationError([
        { field: 'scope', message: `must be the run's scope (${run.scope}) or left out` },
      ])
    return { scope: run.scope, domain, runId }
  }

  // --- trajectories ------------------------------------------------------------------------------

  /** Keeps a successful action sequence (the caller has checked the fields). */
  async storeTrajectory(agentId: string, t: TrajectoryFields): Promise<TrajectoryRecord> {
    const now = this.clock.now()
    const steps = t.steps.map(stepOf)
    return this.repository.insertTrajectory(
      agentId,
      {
        id: newRunId(now.getTime(), this.random, 'traj'),
        scope: t.scope,
        domain: t.domain,
        origin: t.origin ?? originOf(steps.map((s) => s.url)),
        goal: t.goal,
        words: goalWords(t.goal),
        runId: t.runId,
        steps,
        stepCount: steps.length,
        verifiedCount: steps.filter((s) => s.verified === true).length,
        success: true,
        turns: t.turns,
        durationMs: t.durationMs,
        outcome: t.outcome,
        model: t.model,
        recordedAt: now,
        extra: null,
      },
      this.limits.maxTrajectoriesPerDomain,
    )
  }

  async recordTrajectory(agentId: string, input: RecordTrajectoryInput): Promise<TrajectoryRecord> {
    const check = this.check()
    const L = this.limits
    check.text('goal', input.goal, L.maxGoalChars)
    check.steps('steps', input.steps, 1)
    check.url('origin', input.origin)
    check.count('turns', input.turns, L.maxTurns)
    check.count('durationMs', input.durationMs, MAX_DURATION_MS)
    check.optionalText('outcome', input.outcome, L.maxOutcomeChars)
    if (input.model != null) check.text('model', input.model, L.maxModelChars)
    const { scope, domain, runId } = await this.target(agentId, check, input)
    const texts = await this.guard(agentId, {
      goal: input.goal,
      outcome: input.outcome,
      ...stepTexts('steps', input.steps),
    })
    return this.storeTrajectory(agentId, {
      scope,
      domain,
      goal: texts.goal as string,
      steps: guardedSteps(texts, 'steps', input.steps),
      origin: input.origin ? originOf([input.origin]) : null,
      runId,
      turns: input.turns ?? 0,
      durationMs: input.durationMs ?? 0,
      outcome: texts.outcome ?? null,
      model: input.model ?? null,
    })
  }

  /** Newest first; no scope given reads every scope. */
  async trajectories(
    agentId: string,
    filter: { scope?: string | null; domain?: string | null; runId?: string | null },
    page: PageRequest = {},
  ): Promise<Page<TrajectoryRecord>> {
    const check = this.check()
    const where = {
      ...(filter.scope != null ? { scope: check.scope('scope', filter.scope) } : {}),
      ...(filter.domain != null ? { domain: check.domain('domain', filter.domain) } : {}),
      ...(filter.runId != null ? { runId: check.id('runId', filter.runId) } : {}),
    }
    const window = check.window(page)
    check.done()
    const [totalCount, items] = await Promise.all([
      this.repository.countTrajectories(agentId, where),
      this.repository.listTrajectories(agentId, where, window),
    ])
    return { totalCount, items }
  }

  trajectory(agentId: string, id: string): Promise<TrajectoryRecord | null> {
    return this.repository.findTrajectory(agentId, id)
  }

  deleteTrajectory(agentId: string, id: string): Promise<boolean> {
    return this.repository.deleteTrajectory(agentId, id)
  }

  // --- session history ---------------------------------------------------------------------------

  /** Adds an ended run to its domain's history, keeping the last sessionHistoryLimit. */
  addRunSession(agentId: string, entry: NewRunSession): Promise<RunSessionRecord> {
    return this.repository.insertRunSession(agentId, entry, this.rules.sessionHistoryLimit)
  }

  /** A domain's session history, newest first (the last sessionHistoryLimit runs). */
  async runSessions(agentId: string, where: { domain: string; scope?: string | null }) {
    const check = this.check()
    const domain = check.domain('domain', where.domain)
    const scope = check.scopeOrDefault(where.scope)
    check.done()
    return this.repository.runSessions(agentId, scope, domain, this.rules.sessionHistoryLimit)
  }

  // --- app knowledge -----------------------------------------------------------------------------

  /** Applies each fact's observation in turn (the caller has checked them). */
  async observeFacts(
    agentId: string,
    where: { scope: string; domain: string },
    facts: readonly FactInput[],
    runId: string | null,
  ): Promise<AppFactRecord[]> {
    const at = this.clock.now()
    const observed: AppFactRecord[] = []
    // One after another: a later fact of the same key confirms or contradicts an earlier one.
    for (const fact of facts)
      observed.push(
        await this.repository.observeFact(
          agentId,
          { ...where, type: fact.type, key: fact.key, value: fact.value },
          at,
          this.rules,
          runId,
        ),
      )
    return observed
  }

  async recordKnowledge(
    agentId: string,
    input: RecordTarget & { facts: FactInput[] },
  ): Promise<AppFactRecord[]> {
    const check = this.check()
    check.facts('facts', input.facts, 1)
    const { scope, domain, runId } = await this.target(agentId, check, input)
    const facts = guardedFacts(
      await this.guard(agentId, factTexts('facts', input.facts)),
      'facts',
      input.facts,
    )
    return this.observeFacts(agentId, { scope, domain }, facts, runId)
  }

  async appFacts(
    agentId: string,
    filter: {
      scope?: string | null
      domain?: string | null
      type?: AppFactType | null
      minConfidence?: number | null
    },
    page: PageRequest = {},
  ): Promise<Page<AppFactRecord>> {
    const check = this.check()
    const where = {
      scope: check.scopeOrDefault(filter.scope),
      ...(filter.domain != null ? { domain: check.domain('domain', filter.domain) } : {}),
      ...(filter.type != null ? { type: filter.type } : {}),
      ...(filter.minConfidence != null ? { minConfidence: filter.minConfidence } : {}),
    }
    const window = check.window(page)
    check.done()
    const [totalCount, items] = await Promise.all([
      this.repository.countFacts(agentId, where),
      this.repository.listFacts(agentId, where, window),
    ])
    return { totalCount, items }
  }

  deleteAppFact(agentId: string, id: string): Promise<boolean> {
    return this.repository.deleteFact(agentId, id)
  }

  // --- selectors ---------------------------------------------------------------------------------

  async observeSelectors(
    agentId: string,
    where: { scope: string; domain: string },
    selectors: readonly SelectorInput[],
    runId: string | null,
  ): Promise<SelectorRecord[]> {
    const at = this.clock.now()
    const observed: SelectorRecord[] = []
    for (const s of selectors)
      observed.push(
        await this.repository.observeSelector(
          agentId,
          {
            ...where,
            element: s.element,
            selector: s.selector,
            outcome: s.outcome ?? 'SUCCESS',
          },
          at,
          runId,
        ),
      )
    return observed
  }

  async recordSelector(
    agentId: string,
    input: RecordTarget & { selectors: SelectorInput[] },
  ): Promise<SelectorRecord[]> {
    const check = this.check()
    check.selectors('selectors', input.selectors, 1)
    const { scope, domain, runId } = await this.target(agentId, check, input)
    return this.observeSelectors(agentId, { scope, domain }, input.selectors, runId)
  }

  /** Ranked best first (most successes). */
  async knownSelectors(
    agentId: string,
    filter: { scope?: string | null; domain?: string | null; element?: string | null },
    page: PageRequest = {},
  ): Promise<Page<SelectorRecord>> {
    const check = this.check()
    const where = {
      scope: check.scopeOrDefault(filter.scope),
      ...(filter.domain != null ? { domain: check.domain('domain', filter.domain) } : {}),
      ...(filter.element != null
        ? { element: check.text('element', filter.element, this.limits.maxElementChars) }
        : {}),
    }
    const window = check.window(page)
    check.done()
    const [totalCount, items] = await Promise.all([
      this.repository.countSelectors(agentId, where),
      this.repository.listSelectors(agentId, where, window),
    ])
    return { totalCount, items }
  }

  deleteKnownSelector(agentId: string, id: string): Promise<boolean> {
    return this.repository.deleteSelector(agentId, id)
  }

  // --- domains and scopes ------------------------------------------------------------------------

  /** Every (scope, domain) holding memory, most recent activity first; no scope given: every scope. */
  async domains(agentId: string, scope?: string | null): Promise<RunDomainSummary[]> {
    const check = this.check()
    const read = scope != null ? check.scope('scope', scope) : undefined
    check.done()
    return this.repository.domains(agentId, read)
  }

  /** A domain's runs and memory in one scope. */
  async deleteDomain(
    agentId: string,
    where: { domain: string; scope?: string | null },
  ): Promise<TrajectoryForgetResult> {
    const check = this.check()
    const domain = check.domain('domain', where.domain)
    const scope = check.scopeOrDefault(where.scope)
    check.done()
    return this.repository.forgetDomain(agentId, scope, domain)
  }

  /** A scope's memory (an A/B evaluation's cleanup); the registry keeps its runs. */
  async clearScope(agentId: string, scope: string): Promise<TrajectoryForgetResult> {
    const check = this.check()
    check.scope('scope', scope)
    check.done()
    return this.repository.forgetScope(agentId, scope)
  }
}
