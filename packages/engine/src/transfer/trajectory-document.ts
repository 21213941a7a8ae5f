import {
  APP_FACT_TYPES,
  DEFAULT_TRAJECTORY_LIMITS,
  goalWords,
  MEMORY_ISOLATIONS,
  RUN_ID_PATTERN,
  RUN_KINDS,
  RUN_SCOPE_PATTERN,
  RUN_STATUSES,
  ValidationError,
} from '@engram/core'
import { z } from 'zod'
import type { TrajectoryMemorySnapshot } from '../ports/trajectories.ts'

// Trajectory memory in the agent export document (version 5, issue 16): the run registry and every
// scope's records, written back as they were (ids kept). A trajectory's goal words and step
// counts are not carried: they follow from its goal and steps, and are computed again on import.

const L = DEFAULT_TRAJECTORY_LIMITS
/** An import brings at most this many records of each kind. */
export const MAX_TRAJECTORY_RECORDS = 200_000

const isoDate = z.iso.datetime({ offset: true }).transform((s) => new Date(s))
const nullableDate = isoDate.nullable()
const text = (max: number) => z.string().max(max)
const nullableText = (max: number) => text(max).nullable()
const count = z.number().int().min(0)
const runId = z.string().min(1).max(L.maxRunIdChars).regex(RUN_ID_PATTERN)
const scope = z.string().min(1).max(L.maxScopeChars).regex(RUN_SCOPE_PATTERN)
const domain = z.string().min(1).max(L.maxDomainChars)
const recordId = z.string().min(1).max(L.maxRunIdChars)
/** Unknown fields of an imported file, verbatim; bounded in bytes like the import operation's. */
const extra = z
  .record(z.string(), z.unknown())
  .nullable()
  .refine((v) => v == null || Buffer.byteLength(JSON.stringify(v)) <= L.maxExtraBytes, {
    message: `must be at most ${L.maxExtraBytes} bytes of JSON`,
  })

export const TrajectoryMemoryDocumentSchema = z.object({
  runs: z
    .array(
      z.object({
        id: runId,
        sessionId: runId,
        parentRunId: runId.nullable(),
        kind: z.enum(RUN_KINDS),
        isolation: z.enum(MEMORY_ISOLATIONS),
        scope: scope.nullable(),
        status: z.enum(RUN_STATUSES),
        goal: text(L.maxGoalChars),
        domain,
        startUrl: nullableText(L.maxUrlChars),
        currentUrl: nullableText(L.maxUrlChars),
        finalUrl: nullableText(L.maxUrlChars),
        turnCount: count.max(L.maxTurns),
        success: z.boolean().nullable(),
        summary: nullableText(L.maxOutcomeChars),
        result: nullableText(L.maxOutcomeChars),
        reason: nullableText(L.maxOutcomeChars),
        artifactPaths: z.array(text(L.maxUrlChars)).max(L.maxArtifactPaths),
        model: nullableText(L.maxModelChars),
        durationMs: count.nullable(),
        extra,
        startedAt: isoDate,
        updatedAt: isoDate,
        completedAt: nullableDate,
      }),
    )
    .max(MAX_TRAJECTORY_RECORDS),
  runSessions: z
    .array(
      z.object({
        id: recordId,
        scope,
        domain,
        sessionId: runId,
        runId: runId.nullable(),
        goal: text(L.maxGoalChars),
        outcome: text(L.maxOutcomeChars),
        success: z.boolean(),
        finalUrl: nullableText(L.maxUrlChars),
        turnsUsed: count.max(L.maxTurns),
        durationMs: count,
        endedAt: isoDate,
        extra,
      }),
    )
    .max(MAX_TRAJECTORY_RECORDS),
  trajectories: z
    .array(
      z.object({
        id: recordId,
        scope,
        domain,
        origin: nullableText(L.maxUrlChars),
        goal: text(L.maxGoalChars),
        runId: runId.nullable(),
        steps: z
          .array(
            z.object({
              action: z.string().min(1).max(L.maxActionChars),
              selector: nullableText(L.maxSelectorChars),
              value: nullableText(L.maxStepValueChars),
              url: nullableText(L.maxUrlChars),
              verified: z.boolean().nullable(),
              durationMs: count.nullable(),
              extra,
            }),
          )
          .max(L.maxStepsPerTrajectory),
        success: z.boolean(),
        turns: count.max(L.maxTurns),
        durationMs: count,
        outcome: nullableText(L.maxOutcomeChars),
        model: nullableText(L.maxModelChars),
        recordedAt: isoDate,
        extra,
      }),
    )
    .max(MAX_TRAJECTORY_RECORDS),
  facts: z
    .array(
      z.object({
        id: recordId,
        scope,
        domain,
        type: z.enum(APP_FACT_TYPES),
        key: z.string().min(1).max(L.maxFactKeyChars),
        value: text(L.maxFactValueChars),
        confidence: z.number().min(0).max(1),
        sources: count,
        lastSeenAt: isoDate,
        createdAt: isoDate,
        extra,
      }),
    )
    .max(MAX_TRAJECTORY_RECORDS),
  selectors: z
    .array(
      z.object({
        id: recordId,
        scope,
        domain,
        element: z.string().min(1).max(L.maxElementChars),
        selector: z.string().min(1).max(L.maxSelectorChars),
        successCount: count,
        failureCount: count,
        consecutiveFailures: count,
        lastUsedAt: isoDate,
        createdAt: isoDate,
        extra,
      }),
    )
    .max(MAX_TRAJECTORY_RECORDS),
  hints: z
    .array(
      z.object({
        id: recordId,
        scope,
        text: z.string().min(1).max(L.maxHintChars),
        createdAt: isoDate,
        updatedAt: isoDate,
        extra,
      }),
    )
    .max(MAX_TRAJECTORY_RECORDS),
})

export type TrajectoryMemoryDocument = z.input<typeof TrajectoryMemoryDocumentSchema>
export type ParsedTrajectoryMemory = z.infer<typeof TrajectoryMemoryDocumentSchema>

const iso = (d: Date | null) => (d ? d.toISOString() : null)

/** The agent's trajectory memory as the document carries it (dates as ISO strings). */
export function trajectoryMemoryDocument(memory: TrajectoryMemorySnapshot): TrajectoryMemoryDocument {
  return {
    runs: memory.runs.map(({ agentId: _, ...r }) => ({
      ...r,
      startedAt: r.startedAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
      completedAt: iso(r.completedAt),
    })),
    runSessions: memory.runSessions.map(({ agentId: _, ...e }) => ({
      ...e,
      endedAt: e.endedAt.toISOString(),
    })),
    trajectories: memory.trajectories.map(
      ({ agentId: _, words: _w, stepCount: _s, verifiedCount: _v, ...t }) => ({
        ...t,
        recordedAt: t.recordedAt.toISOString(),
      }),
    ),
    facts: memory.facts.map(({ agentId: _, ...f }) => ({
      ...f,
      lastSeenAt: f.lastSeenAt.toISOString(),
      createdAt: f.createdAt.toISOString(),
    })),
    selectors: memory.selectors.map(({ agentId: _, ...s }) => ({
      ...s,
      lastUsedAt: s.lastUsedAt.toISOString(),
      createdAt: s.createdAt.toISOString(),
    })),
    hints: memory.hints.map(({ agentId: _, ...h }) => ({
      ...h,
      createdAt: h.createdAt.toISOString(),
      updatedAt: h.updatedAt.toISOString(),
    })),
  }
}

/** The parsed section as the repository's records for `agentId` (words and step counts computed). */
export function trajectoryMemoryRecords(
  agentId: string,
  doc: ParsedTrajectoryMemory,
): TrajectoryMemorySnapshot {
  return {
    runs: doc.runs.map((r) => ({ ...r, agentId })),
    runSessions: doc.runSessions.map((e) => ({ ...e, agentId })),
    trajectories: doc.trajectories.map((t) => ({
      ...t,
      agentId,
      words: goalWords(t.goal),
      stepCount: t.steps.length,
      verifiedCount: t.steps.filter((s) => s.verified === true).length,
    })),
    facts: doc.facts.map((f) => ({ ...f, agentId })),
    selectors: doc.selectors.map((s) => ({ ...s, agentId })),
    hints: doc.hints.map((h) => ({ ...h, agentId })),
  }
}

/**
 * Ids unique in each list, and facts and selectors unique by what identifies them (a document
 * holding two would have one overwrite the other): a ValidationError naming the second.
 */
export function assertTrajectoryMemory(doc: ParsedTrajectoryMemory | undefined): void {
  if (!doc) return
  const unique = <T>(list: string, rows: readonly T[], key: (row: T) => string, what: string) => {
    const seen = new Set<string>()
    for (const [i, row] of rows.entries()) {
      const k = key(row)
      if (seen.has(k))
        throw new ValidationError([
          { field: `document.trajectoryMemory.${list}.${i}`, message: `duplicate ${what}` },
        ])
      seen.add(k)
    }
  }
  unique('runs', doc.runs, (r) => r.id, 'run id')
  unique('runSessions', doc.runSessions, (e) => e.id, 'id')
  unique('trajectories', doc.trajectories, (t) => t.id, 'id')
  unique('facts', doc.facts, (f) => f.id, 'id')
  unique('facts', doc.facts, (f) => JSON.stringify([f.scope, f.domain, f.type, f.key, f.value]), 'fact')
  unique('selectors', doc.selectors, (s) => s.id, 'id')
  unique(
    'selectors',
    doc.selectors,
    (s) => JSON.stringify([s.scope, s.domain, s.element, s.selector]),
    'selector',
  )
  unique('hints', doc.hints, (h) => h.id, 'id')
}

/**
 * The section's free texts, for the privacy guard (what the agent typed or wrote about a run):
 * goals, outcomes and reasons, typed step values, fact values and hints.
 */
export function trajectoryMemoryTexts(
  doc: ParsedTrajectoryMemory | undefined,
): { field: string; text: string; set: (text: string) => void }[] {
  if (!doc) return []
  const at = 'document.trajectoryMemory'
  const out: { field: string; text: string; set: (text: string) => void }[] = []
  const add = (field: string, value: string | null, set: (t: string) => void) => {
    if (value != null && value !== '') out.push({ field, text: value, set })
  }
  for (const [i, r] of doc.runs.entries()) {
    add(`${at}.runs.${i}.goal`, r.goal, (t) => (r.goal = t))
    add(`${at}.runs.${i}.summary`, r.summary, (t) => (r.summary = t))
    add(`${at}.runs.${i}.result`, r.result, (t) => (r.result = t))
    add(`${at}.runs.${i}.reason`, r.reason, (t) => (r.reason = t))
  }
  for (const [i, e] of doc.runSessions.entries()) {
    add(`${at}.runSessions.${i}.goal`, e.goal, (t) => (e.goal = t))
    add(`${at}.runSessions.${i}.outcome`, e.outcome, (t) => (e.outcome = t))
  }
  for (const [i, tr] of doc.trajectories.entries()) {
    add(`${at}.trajectories.${i}.goal`, tr.goal, (t) => (tr.goal = t))
    add(`${at}.trajectories.${i}.outcome`, tr.outcome, (t) => (tr.outcome = t))
    for (const [j, s] of tr.steps.entries())
      add(`${at}.trajectories.${i}.steps.${j}.value`, s.value, (t) => (s.value = t))
  }
  for (const [i, f] of doc.facts.entries()) add(`${at}.facts.${i}.value`, f.value, (t) => (f.value = t))
  for (const [i, h] of doc.hints.entries()) add(`${at}.hints.${i}.text`, h.text, (t) => (h.text = t))
  return out
}
