import { randomUUID } from 'node:crypto'
import {
  type AgentMemoryFile,
  agentMemoryFiles,
  type Clock,
  ConflictError,
  DEFAULT_RUN_SCOPE,
  DEFAULT_TRAJECTORY_LIMITS,
  DEFAULT_TRAJECTORY_RULES,
  planAgentMemoryImport,
  RUN_SCOPE_PATTERN,
  type SkippedAgentMemoryFile,
  type TrajectoryLimits,
  type TrajectoryRules,
  unknownFieldsOf,
  ValidationError,
} from '@engram/core'
import type { TrajectoryMemoryRepository } from '../ports/trajectories.ts'
import type { TextGuard } from './run-input.ts'

export interface AgentMemoryImportReport {
  scope: string
  runs: number
  trajectories: number
  runSessions: number
  facts: number
  selectors: number
  hints: number
  skipped: SkippedAgentMemoryFile[]
}

export interface AgentMemoryExport {
  scope: string
  files: AgentMemoryFile[]
}

export interface AgentMemoryTransferDeps {
  repository: TrajectoryMemoryRepository
  clock: Clock
  limits?: TrajectoryLimits
  rules?: TrajectoryRules
  /**
   * The agent's sensitive-data policy over imported free text (goals, outcomes, typed values,
   * facts, hints), as the run registry applies it: a password typed into a login form in the old
   * system is not stored verbatim here either. Nothing guarded when absent.
   */
  guard?: TextGuard
  /** Ids of imported trajectories (Engram's own: the file's id is kept among its fields). */
  newId?: () => string
}

/**
 * Spec 004's users switching to Engram: a `.agent-memory/` directory (as `{path, content}` files)
 * into one memory scope of an agent, and a scope back out as such a directory. The formats are
 * core's agent-memory-*.ts; this writes the plan through the repository, every record under the
 * caller's agent.
 */
export class AgentMemoryTransfer {
  private readonly limits: TrajectoryLimits
  private readonly rules: TrajectoryRules
  private readonly newId: () => string

  constructor(private readonly deps: AgentMemoryTransferDeps) {
    this.limits = deps.limits ?? DEFAULT_TRAJECTORY_LIMITS
    this.rules = deps.rules ?? DEFAULT_TRAJECTORY_RULES
    this.newId = deps.newId ?? (() => `traj_${randomUUID()}`)
  }

  /**
   * Imports the files into `scope`. Files that cannot be read are reported in `skipped` with why,
   * and the rest still go in. Importing the same directory again adds nothing twice: a manifest
   * whose run the agent already has is reported, and trajectories, session entries and hints
   * already in the scope are not written again (facts and selectors are replaced by their key).
   */
  async importFiles(
    agentId: string,
    files: readonly AgentMemoryFile[],
    scope: string = DEFAULT_RUN_SCOPE,
  ): Promise<AgentMemoryImportReport> {
    this.checkScope(scope)
    const plan = planAgentMemoryImport(files, { limits: this.limits, now: this.deps.clock.now() })
    await this.guardPlan(agentId, plan)
    const repo = this.deps.repository
    const report: AgentMemoryImportReport = {
      scope,
      runs: 0,
      trajectories: 0,
      runSessions: 0,
      facts: 0,
      selectors: 0,
      hints: 0,
      skipped: [...plan.skipped],
    }
    const existing = await repo.snapshot(agentId, scope)
    const fileIdOf = (r: { domain: string; extra: Record<string, unknown> | null; recordedAt: Date }) =>
      `${r.domain}\u0000${JSON.stringify(unknownFieldsOf(r.extra).id ?? null)}\u0000${r.recordedAt.getTime()}`
    const sessionKey = (s: { domain: string; sessionId: string; endedAt: Date; goal: string }) =>
      `${s.domain}\u0000${s.sessionId}\u0000${s.endedAt.getTime()}\u0000${s.goal}`
    const knownTrajectories = new Set(existing.trajectories.map(fileIdOf))
    const knownSessions = new Set(existing.runSessions.map(sessionKey))
    const knownHints = new Set(existing.hints.map((h) => h.text))

    for (const { path, ...run } of plan.runs) {
      try {
        await repo.insertRun(agentId, { ...run, scope })
        report.runs++
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error
        report.skipped.push({
          path: path ?? `agent-runs/${run.id}.json`,
          reason: `the agent already has a run ${run.id}`,
        })
      }
    }
    for (const trajectory of plan.trajectories) {
      if (knownTrajectories.has(fileIdOf(trajectory))) continue
      await repo.insertTrajectory(
        agentId,
        { ...trajectory, id: this.newId(), scope },
        this.limits.maxTrajectoriesPerDomain,
      )
      report.trajectories++
    }
    // An imported history keeps all its entries, even past sessionHistoryLimit: the export gives
    // the same file back. Runs recorded later trim it to the limit again.
    const sessionsPerDomain = new Map<string, number>()
    for (const s of [...existing.runSessions, ...plan.runSessions])
      sessionsPerDomain.set(s.domain, (sessionsPerDomain.get(s.domain) ?? 0) + 1)
    for (const session of plan.runSessions) {
      if (knownSessions.has(sessionKey(session))) continue
      const keep = Math.max(this.rules.sessionHistoryLimit, sessionsPerDomain.get(session.domain) ?? 0)
      await repo.insertRunSession(agentId, { ...session, scope }, keep)
      report.runSessions++
    }
    for (const fact of plan.facts) {
      await repo.putFact(agentId, { ...fact, scope })
      report.facts++
    }
    for (const selector of plan.selectors) {
      await repo.putSelector(agentId, { ...selector, scope })
      report.selectors++
    }
    for (const hint of plan.hints) {
      if (knownHints.has(hint.text)) continue
      await repo.addHint(agentId, { ...hint, scope })
      report.hints++
    }
    return report
  }

  /** A scope's memory and the runs that used it, as a `.agent-memory/` directory's files. */
  async exportFiles(agentId: string, scope: string = DEFAULT_RUN_SCOPE): Promise<AgentMemoryExport> {
    this.checkScope(scope)
    return { scope, files: agentMemoryFiles(await this.deps.repository.snapshot(agentId, scope)) }
  }

  /** Passes every free text of the plan through the guard in one call, writing the answers back. */
  private async guardPlan(agentId: string, plan: ReturnType<typeof planAgentMemoryImport>): Promise<void> {
    const guard = this.deps.guard
    if (!guard) return
    const texts: { field: string; text: string }[] = []
    const writeBack: ((text: string) => void)[] = []
    const add = (field: string, text: string | null | undefined, set: (text: string) => void) => {
      if (text == null || text.length === 0) return
      texts.push({ field, text })
      writeBack.push(set)
    }
    plan.runs.forEach((r, i) => {
      add(`runs.${i}.goal`, r.goal, (t) => (r.goal = t))
      add(`runs.${i}.summary`, r.summary, (t) => (r.summary = t))
      add(`runs.${i}.result`, r.result, (t) => (r.result = t))
      add(`runs.${i}.reason`, r.reason, (t) => (r.reason = t))
    })
    plan.trajectories.forEach((tr, i) => {
      add(`trajectories.${i}.goal`, tr.goal, (t) => (tr.goal = t))
      add(`trajectories.${i}.outcome`, tr.outcome, (t) => (tr.outcome = t))
      for (const [j, step] of tr.steps.entries())
        add(`trajectories.${i}.steps.${j}.value`, step.value, (t) => (step.value = t))
    })
    plan.runSessions.forEach((s, i) => {
      add(`runSessions.${i}.goal`, s.goal, (t) => (s.goal = t))
      add(`runSessions.${i}.outcome`, s.outcome, (t) => (s.outcome = t))
    })
    for (const [i, f] of plan.facts.entries()) add(`facts.${i}.value`, f.value, (t) => (f.value = t))
    for (const [i, h] of plan.hints.entries()) add(`hints.${i}.text`, h.text, (t) => (h.text = t))
    if (texts.length === 0) return
    const guarded = await guard(agentId, texts)
    for (const [i, text] of guarded.entries()) writeBack[i]?.(text)
  }

  private checkScope(scope: string): void {
    if (scope.length > this.limits.maxScopeChars || !RUN_SCOPE_PATTERN.test(scope))
      throw new ValidationError([
        {
          field: 'scope',
          message: `must be 1 to ${this.limits.maxScopeChars} letters, digits and _ . : - starting with a letter or digit`,
          limit: this.limits.maxScopeChars,
        },
      ])
  }
}
