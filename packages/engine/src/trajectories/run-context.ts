import {
  type AssembledRunContext,
  assembleRunContext,
  type Clock,
  contextSelectors,
  DEFAULT_RUN_SCOPE,
  goalWords,
  minSharedWords,
  NotFoundError,
  normalizeRunDomain,
  parseWith,
  RUN_CONTEXT_SECTIONS,
  type RunContextMaterial,
  type RunContextSection,
  rankReferenceTrajectories,
  type TokenCounter,
  type TrajectoryRules,
  TrajectoryRulesSchema,
  ValidationError,
} from '@engram/core'
import type { SelectorRecord, TrajectoryMemoryRepository, TrajectoryRecord } from '../ports/trajectories.ts'

const DAY_MS = 86_400_000
/**
 * Candidates reference matching ranks per query: the adapter returns those sharing the most goal
 * words (newest first among equals), so a domain's 10K trajectories cost a bounded read. More
 * than any repeated goal needs: its copies share every word and come first.
 */
export const REFERENCE_CANDIDATES = 200
/** Facts read for APP KNOWLEDGE (confidence first): more than any budget shows. */
export const FACT_CANDIDATES = 200
/** Selectors read per page, and at most, while looking for selectorContextLimit known-good elements. */
const SELECTOR_PAGE = 200
const SELECTOR_SCAN = 2_000
/** matchTrajectories' answer when no limit is given. */
export const DEFAULT_MATCH_LIMIT = 5

/** A ranked reference: the trajectory with its steps, its goal similarity and its ranking score. */
export interface TrajectoryMatch {
  trajectory: TrajectoryRecord
  similarity: number
  score: number
}

/** Per-call overrides of the engine's trajectory rules (spec 004's --trace-scoring, --trace-ttl-days). */
export interface TraceOverrides {
  traceScoring?: boolean | null
  traceTtlDays?: number | null
}

export interface RunContextRequest extends TraceOverrides {
  /** The run the context is for: its domain, goal and memory scope (OFF: an empty context). */
  runId?: string | null
  /** Without a run: the domain (a host, a URL, or a name) and the memory scope (default "default"). */
  domain?: string | null
  /** The goal the reference trajectory is matched against (default: the run's). */
  goal?: string | null
  scope?: string | null
  budgetTokens?: number | null
  sections?: readonly RunContextSection[] | null
}

export interface RunContextResult extends AssembledRunContext {
  domain: string
  /** Null when the run's memory is OFF. */
  scope: string | null
  goal: string | null
  reference: TrajectoryMatch | null
}

export interface MatchRequest extends TraceOverrides {
  domain: string
  goal: string
  scope?: string | null
  limit?: number | null
}

/**
 * Spec 004's context injection as one read: for a run (or a domain and goal), its domain's
 * session history, the best matching past trajectory as a reference, the app facts and
 * known-good selectors learnt there, and the scope's hints, trimmed to a token budget by core's
 * assembleRunContext. Every read is scoped to the agent and to one memory scope.
 */
export class RunContextService {
  constructor(
    private readonly deps: {
      repository: TrajectoryMemoryRepository
      clock: Clock
      tokenCounter: TokenCounter
      rules: TrajectoryRules
    },
  ) {}

  get rules(): TrajectoryRules {
    return this.deps.rules
  }

  async build(agentId: string, request: RunContextRequest): Promise<RunContextResult> {
    const rules = this.rulesFor(request)
    const budgetTokens = request.budgetTokens ?? rules.defaultContextBudgetTokens
    const target = await this.target(agentId, request)
    const wanted = new Set<RunContextSection>(
      request.sections?.length ? request.sections : RUN_CONTEXT_SECTIONS,
    )
    const material: RunContextMaterial = {
      sessions: [],
      reference: null,
      facts: [],
      selectors: [],
      hints: [],
    }
    let reference: TrajectoryMatch | null = null
    const { scope, domain, goal } = target
    // OFF (spec 004's --no-memory baseline): nothing is read, the context is empty.
    if (scope !== null) {
      const repo = this.deps.repository
      const [sessions, matches, facts, selectors, hints] = await Promise.all([
        wanted.has('SESSION_HISTORY')
          ? repo.runSessions(agentId, scope, domain, rules.sessionHistoryLimit)
          : [],
        wanted.has('REFERENCE_TRAJECTORY') && goal
          ? this.rank(agentId, { scope, domain, goal }, rules, 1)
          : [],
        wanted.has('APP_KNOWLEDGE')
          ? repo.listFacts(
              agentId,
              { scope, domain, minConfidence: rules.factContextMinConfidence },
              { offset: 0, limit: FACT_CANDIDATES },
            )
          : [],
        wanted.has('KNOWN_SELECTORS') ? this.knownSelectors(agentId, scope, domain, rules) : [],
        wanted.has('HINTS') ? repo.listHints(agentId, scope) : [],
      ])
      reference = matches[0] ?? null
      material.sessions = sessions
      material.reference = reference
        ? { goal: reference.trajectory.goal, steps: reference.trajectory.steps }
        : null
      material.facts = facts
      material.selectors = selectors
      material.hints = hints.map((h) => h.text)
    }
    const assembled = assembleRunContext({ material, budgetTokens, sections: [...wanted] }, rules, (text) =>
      this.deps.tokenCounter.count(text),
    )
    return { ...assembled, domain, scope, goal, reference }
  }

  /** Past successful trajectories of the domain whose goal matches, best first (with their steps). */
  async matchTrajectories(agentId: string, request: MatchRequest): Promise<TrajectoryMatch[]> {
    const rules = this.rulesFor(request)
    const limit = request.limit ?? DEFAULT_MATCH_LIMIT
    if (!Number.isInteger(limit) || limit < 1 || limit > REFERENCE_CANDIDATES) {
      throw new ValidationError([
        {
          field: 'limit',
          message: `must be an integer from 1 to ${REFERENCE_CANDIDATES}`,
          limit: REFERENCE_CANDIDATES,
        },
      ])
    }
    const domain = this.domainOf(request.domain)
    return this.rank(
      agentId,
      { scope: request.scope ?? DEFAULT_RUN_SCOPE, domain, goal: request.goal },
      rules,
      limit,
    )
  }

  private async rank(
    agentId: string,
    query: { scope: string; domain: string; goal: string },
    rules: TrajectoryRules,
    limit: number,
  ): Promise<TrajectoryMatch[]> {
    const words = goalWords(query.goal)
    if (words.length === 0) return []
    const now = this.deps.clock.now()
    const candidates = await this.deps.repository.trajectoryCandidates(
      agentId,
      {
        scope: query.scope,
        domain: query.domain,
        words,
        minShared: minSharedWords(words.length, rules.similarityThreshold),
        since: new Date(now.getTime() - rules.traceTtlDays * DAY_MS),
      },
      REFERENCE_CANDIDATES,
    )
    const ranked = rankReferenceTrajectories(query.goal, candidates, now, rules).slice(0, limit)
    const found = await Promise.all(
      ranked.map(async (m) => {
        const trajectory = await this.deps.repository.findTrajectory(agentId, m.trajectory.id)
        // Deleted between the two reads: left out rather than answered without its steps.
        return trajectory ? { trajectory, similarity: m.similarity, score: m.score } : null
      }),
    )
    return found.filter((m): m is TrajectoryMatch => m !== null)
  }

  /** The best known-good selector per element, most used first, up to selectorContextLimit elements. */
  private async knownSelectors(
    agentId: string,
    scope: string,
    domain: string,
    rules: TrajectoryRules,
  ): Promise<SelectorRecord[]> {
    if (rules.selectorContextLimit === 0) return []
    const read: SelectorRecord[] = []
    for (let offset = 0; offset < SELECTOR_SCAN; offset += SELECTOR_PAGE) {
      const page = await this.deps.repository.listSelectors(
        agentId,
        { scope, domain },
        { offset, limit: SELECTOR_PAGE },
      )
      read.push(...page)
      if (page.length < SELECTOR_PAGE) break
      if (contextSelectors(read, rules, rules.selectorContextLimit).length >= rules.selectorContextLimit)
        break
    }
    return contextSelectors(read, rules, rules.selectorContextLimit)
  }

  /** The domain, goal and memory scope the context is for: the run's, or the ones given. */
  private async target(
    agentId: string,
    request: RunContextRequest,
  ): Promise<{ domain: string; scope: string | null; goal: string | null }> {
    if (request.runId) {
      const run = await this.deps.repository.findRun(agentId, request.runId)
      if (!run) throw new NotFoundError('Run', request.runId)
      if (request.scope != null && request.scope !== run.scope) {
        throw new ValidationError([
          { field: 'scope', message: `run ${run.id} uses memory scope ${run.scope ?? 'none (OFF)'}` },
        ])
      }
      if (request.domain != null && normalizeRunDomain(request.domain) !== run.domain) {
        throw new ValidationError([{ field: 'domain', message: `run ${run.id} is on ${run.domain}` }])
      }
      return { domain: run.domain, scope: run.scope, goal: request.goal ?? run.goal }
    }
    return {
      domain: this.domainOf(request.domain),
      scope: request.scope ?? DEFAULT_RUN_SCOPE,
      goal: request.goal ?? null,
    }
  }

  private domainOf(domain: string | null | undefined): string {
    const normalized = domain == null ? '' : normalizeRunDomain(domain)
    if (normalized === '') {
      throw new ValidationError([{ field: 'domain', message: 'give a runId, or a domain (a host or a URL)' }])
    }
    return normalized
  }

  private rulesFor(overrides: TraceOverrides): TrajectoryRules {
    const rules = this.deps.rules
    if (overrides.traceScoring == null && overrides.traceTtlDays == null) return rules
    return {
      ...rules,
      traceScoring: overrides.traceScoring ?? rules.traceScoring,
      traceTtlDays:
        overrides.traceTtlDays == null
          ? rules.traceTtlDays
          : parseWith(TrajectoryRulesSchema.shape.traceTtlDays, overrides.traceTtlDays, 'traceTtlDays'),
    }
  }
}
