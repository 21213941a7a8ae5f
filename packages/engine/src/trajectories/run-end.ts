import type { RunRecord } from '../ports/trajectories.ts'
import {
  factTexts,
  guardedFacts,
  guardedSteps,
  type InputCheck,
  MAX_DURATION_MS,
  stepTexts,
} from './run-input.ts'
import type { RunMemory } from './run-memory.ts'
import type { RunEnd, RunEndInput, StepInput } from './run-types.ts'

/** Checks a run's end before anything is written: every bad field named at once. */
export function checkRunEnd(
  check: InputCheck,
  runId: string,
  input: RunEndInput,
  steps: readonly StepInput[],
  /** A failure's reason (required); null for a completion. */
  reason: string | null,
): void {
  const L = check.limits
  check.id('runId', runId)
  check.optionalText('outcome', input.outcome, L.maxOutcomeChars)
  check.optionalText('result', input.result, L.maxOutcomeChars)
  if (reason !== null) check.text('reason', reason, L.maxOutcomeChars)
  check.url('finalUrl', input.finalUrl)
  check.count('turnCount', input.turnCount, L.maxTurns)
  check.count('durationMs', input.durationMs, MAX_DURATION_MS)
  check.facts('facts', input.facts ?? [])
  check.selectors('selectors', input.selectors ?? [])
  check.steps('steps', steps)
  const paths = input.artifactPaths ?? []
  check.size('artifactPaths', paths.length, L.maxArtifactPaths)
  for (const [i, p] of paths.entries()) check.text(`artifactPaths.${i}`, p, L.maxUrlChars)
  if (input.model != null) check.text('model', input.model, L.maxModelChars)
  check.done()
}

/** A run's end with its free texts through the agent's sensitive-data policy (see RunMemory.guard). */
export async function guardRunEnd<I extends RunEndInput>(
  memory: RunMemory,
  agentId: string,
  input: I,
  steps: readonly StepInput[],
  reason: string | null,
): Promise<{ input: I; steps: StepInput[]; reason: string | null }> {
  const facts = input.facts ?? []
  const texts = await memory.guard(agentId, {
    outcome: input.outcome,
    result: input.result,
    reason,
    ...stepTexts('steps', steps),
    ...factTexts('facts', facts),
  })
  return {
    input: {
      ...input,
      outcome: texts.outcome ?? null,
      result: texts.result ?? null,
      facts: guardedFacts(texts, 'facts', facts),
    },
    steps: guardedSteps(texts, 'steps', steps),
    reason: texts.reason ?? null,
  }
}

/**
 * What an ended run leaves in its scope: the trajectory of a completed run with steps, its entry
 * in the domain's session history, and the facts and selectors it observed (as its contributions,
 * so deleting the run takes them back). A run with memory OFF leaves nothing but its manifest.
 */
export async function recordRunEnd(
  memory: RunMemory,
  agentId: string,
  run: RunRecord,
  input: RunEndInput,
  steps: readonly StepInput[],
): Promise<Omit<RunEnd, 'run'>> {
  const scope = run.scope
  if (scope === null) return { trajectory: null, facts: [], selectors: [], session: null }
  const where = { scope, domain: run.domain }
  const durationMs = run.durationMs ?? 0
  const trajectory =
    run.success && steps.length > 0
      ? await memory.storeTrajectory(agentId, {
          ...where,
          goal: run.goal,
          steps: [...steps],
          origin: null,
          runId: run.id,
          turns: run.turnCount,
          durationMs,
          outcome: input.outcome ?? null,
          model: run.model,
        })
      : null
  const session = await memory.addRunSession(agentId, {
    ...where,
    sessionId: run.sessionId,
    runId: run.id,
    goal: run.goal,
    // Spec 004's outcome is the agent's own words: what it said at the end, else along the way.
    outcome: input.outcome ?? run.summary ?? run.result ?? run.reason ?? '',
    success: run.success === true,
    finalUrl: run.finalUrl,
    turnsUsed: run.turnCount,
    durationMs,
    endedAt: run.completedAt ?? run.updatedAt,
    extra: null,
  })
  const facts = await memory.observeFacts(agentId, where, input.facts ?? [], run.id)
  const selectors = await memory.observeSelectors(agentId, where, input.selectors ?? [], run.id)
  return { trajectory, facts, selectors, session }
}
