import type { OperationName, OutputOf } from '@engram/contract'
import { isVolatileRef, selectorIsKnownGood, type TrajectoryRules } from '@engram/core'
import type {
  AppFactRecord,
  HintRecord,
  RunDomainSummary,
  RunRecord,
  RunSessionRecord,
  SelectorRecord,
  TrajectoryForgetResult,
  TrajectoryRecord,
} from '../ports/trajectories.ts'
import type { RunEnd, RunLineage } from '../trajectories/run-types.ts'

// Trajectory memory's records in the catalog's output shapes (as wire.ts does for the rest):
// dates as ISO strings, only the catalog's fields (`extra`, imported fields Engram keeps for an
// export, never goes over the wire), each literal typed against the catalog.

type Out<N extends OperationName> = OutputOf<N>

const iso = (date: Date) => date.toISOString()
const isoOrNull = (date: Date | null) => (date ? date.toISOString() : null)

export function runOut(r: RunRecord): Out<'startRun'> {
  return {
    id: r.id,
    sessionId: r.sessionId,
    parentRunId: r.parentRunId,
    kind: r.kind,
    isolation: r.isolation,
    scope: r.scope,
    status: r.status,
    goal: r.goal,
    domain: r.domain,
    startUrl: r.startUrl,
    currentUrl: r.currentUrl,
    finalUrl: r.finalUrl,
    turnCount: r.turnCount,
    success: r.success,
    summary: r.summary,
    result: r.result,
    reason: r.reason,
    artifactPaths: [...r.artifactPaths],
    model: r.model,
    durationMs: r.durationMs,
    startedAt: iso(r.startedAt),
    updatedAt: iso(r.updatedAt),
    completedAt: isoOrNull(r.completedAt),
  }
}

export function runEndOut(end: RunEnd): Out<'completeRun'> {
  return {
    run: runOut(end.run),
    trajectoryId: end.trajectory?.id ?? null,
    factsRecorded: end.facts.length,
    selectorsRecorded: end.selectors.length,
    sessionRecorded: end.session !== null,
  }
}

export function runLineageOut(l: RunLineage): Out<'runLineage'> {
  return {
    rootRunId: l.rootRunId,
    runs: l.runs.map((node) => ({ run: runOut(node.run), depth: node.depth })),
    ancestry: [...l.ancestry],
    parentMissing: l.parentMissing,
    truncated: l.truncated,
  }
}

export function forgetOut(f: TrajectoryForgetResult): Out<'deleteRun'> {
  return {
    runs: f.runs,
    trajectories: f.trajectories,
    runSessions: f.runSessions,
    facts: f.facts,
    selectors: f.selectors,
    hints: f.hints,
  }
}

export function trajectoryOut(t: TrajectoryRecord): Out<'recordTrajectory'> {
  return {
    id: t.id,
    scope: t.scope,
    domain: t.domain,
    origin: t.origin,
    goal: t.goal,
    runId: t.runId,
    steps: t.steps.map((s) => ({
      action: s.action,
      selector: s.selector,
      value: s.value,
      url: s.url,
      verified: s.verified,
      durationMs: s.durationMs,
    })),
    stepCount: t.stepCount,
    verifiedCount: t.verifiedCount,
    success: t.success,
    turns: t.turns,
    durationMs: t.durationMs,
    outcome: t.outcome,
    model: t.model,
    recordedAt: iso(t.recordedAt),
  }
}

export function runSessionOut(e: RunSessionRecord): Out<'runSessions'>[number] {
  return {
    id: e.id,
    sessionId: e.sessionId,
    runId: e.runId,
    domain: e.domain,
    goal: e.goal,
    outcome: e.outcome,
    success: e.success,
    finalUrl: e.finalUrl,
    turnsUsed: e.turnsUsed,
    durationMs: e.durationMs,
    endedAt: iso(e.endedAt),
  }
}

export function appFactOut(f: AppFactRecord): Out<'recordKnowledge'>[number] {
  return {
    id: f.id,
    scope: f.scope,
    domain: f.domain,
    type: f.type,
    key: f.key,
    value: f.value,
    confidence: f.confidence,
    sources: f.sources,
    lastSeenAt: iso(f.lastSeenAt),
  }
}

/** A selector entry with what the rules make of it: offered (knownGood) and volatile ("@e12"). */
export function knownSelectorOut(
  s: SelectorRecord,
  rules: Pick<TrajectoryRules, 'selectorFailureLimit'>,
): Out<'recordSelector'>[number] {
  return {
    id: s.id,
    scope: s.scope,
    domain: s.domain,
    element: s.element,
    selector: s.selector,
    successCount: s.successCount,
    failureCount: s.failureCount,
    consecutiveFailures: s.consecutiveFailures,
    knownGood: selectorIsKnownGood(s, rules),
    volatile: isVolatileRef(s.selector),
    lastUsedAt: iso(s.lastUsedAt),
  }
}

export function runHintOut(h: HintRecord): Out<'addRunHint'> {
  return {
    id: h.id,
    scope: h.scope,
    text: h.text,
    createdAt: iso(h.createdAt),
    updatedAt: iso(h.updatedAt),
  }
}

export function runDomainOut(d: RunDomainSummary): Out<'runDomains'>[number] {
  return {
    scope: d.scope,
    domain: d.domain,
    runs: d.runs,
    trajectories: d.trajectories,
    runSessions: d.runSessions,
    facts: d.facts,
    selectors: d.selectors,
    lastActivityAt: iso(d.lastActivityAt),
  }
}
