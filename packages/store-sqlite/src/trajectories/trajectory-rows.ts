import type { AppFactType, MemoryIsolation, RunKind, RunStatus } from '@engram/core'
import type {
  AppFactRecord,
  Extra,
  HintRecord,
  RunFilter,
  RunRecord,
  RunSessionRecord,
  SelectorRecord,
  TrajectoryCandidate,
  TrajectoryForgetResult,
  TrajectoryRecord,
  TrajectoryStep,
} from '@engram/engine'
import type {
  AppFact as FactRow,
  RunHint as HintRow,
  Prisma,
  AgentRun as RunRow,
  RunSession as RunSessionRow,
  KnownSelector as SelectorRow,
  Trajectory as TrajectoryRow,
} from '../generated/prisma/client.ts'

// Rows of the trajectory memory tables ⇄ the port's records, and the filters and orders the
// repository queries with (sqlite-trajectories.ts holds the repository itself).
/** Ids bound in one `IN (...)`: well under SQLite's bound-parameter limit. */
export const IDS_PER_STATEMENT = 500

export const chunks = <T>(items: readonly T[]): T[][] => {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += IDS_PER_STATEMENT) out.push(items.slice(i, i + IDS_PER_STATEMENT))
  return out
}

/** The order the in-memory adapter gives ids (code units), whatever the database's collation. */
export const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

export function parseJson<T>(text: string | null, fallback: T, accept: (value: unknown) => boolean): T {
  if (text == null) return fallback
  try {
    const value = JSON.parse(text) as unknown
    return accept(value) ? (value as T) : fallback
  } catch {
    return fallback
  }
}
export const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)
export const parseExtra = (text: string | null): Extra => parseJson<Extra>(text, null, isObject)
export const extraText = (extra: Extra): string | null => (extra == null ? null : JSON.stringify(extra))
export const parseStrings = (text: string): string[] =>
  parseJson<unknown[]>(text, [], Array.isArray).filter((s): s is string => typeof s === 'string')

export function toRun(row: RunRow): RunRecord {
  return {
    id: row.runId,
    agentId: row.agentId,
    sessionId: row.sessionId,
    parentRunId: row.parentRunId,
    kind: row.kind as RunKind,
    isolation: row.isolation as MemoryIsolation,
    scope: row.scope,
    status: row.status as RunStatus,
    goal: row.goal,
    domain: row.domain,
    startUrl: row.startUrl,
    currentUrl: row.currentUrl,
    finalUrl: row.finalUrl,
    turnCount: row.turnCount,
    success: row.success,
    summary: row.summary,
    result: row.result,
    reason: row.reason,
    artifactPaths: parseStrings(row.artifactPaths),
    model: row.model,
    durationMs: row.durationMs,
    extra: parseExtra(row.extra),
    startedAt: row.startedAt,
    updatedAt: row.updatedAt,
    completedAt: row.completedAt,
  }
}

export function runData(
  agentId: string,
  run: Omit<RunRecord, 'agentId'>,
): Prisma.AgentRunUncheckedCreateInput {
  const { id, artifactPaths, extra, ...rest } = run
  return {
    ...rest,
    agentId,
    runId: id,
    artifactPaths: JSON.stringify(artifactPaths),
    extra: extraText(extra),
  }
}

export function toRunSession(row: RunSessionRow): RunSessionRecord {
  return { ...row, extra: parseExtra(row.extra) }
}

export function toStep(value: unknown): TrajectoryStep {
  const s = (isObject(value) ? value : {}) as Record<string, unknown>
  const text = (v: unknown) => (typeof v === 'string' ? v : null)
  return {
    action: typeof s.action === 'string' ? s.action : '',
    selector: text(s.selector),
    value: text(s.value),
    url: text(s.url),
    verified: typeof s.verified === 'boolean' ? s.verified : null,
    durationMs: typeof s.durationMs === 'number' ? s.durationMs : null,
    extra: isObject(s.extra) ? (s.extra as Extra) : null,
  }
}

export function toTrajectory(row: TrajectoryRow): TrajectoryRecord {
  return {
    ...row,
    words: parseStrings(row.words),
    steps: parseJson<unknown[]>(row.steps, [], Array.isArray).map(toStep),
    extra: parseExtra(row.extra),
  }
}

export function trajectoryData(
  agentId: string,
  t: Omit<TrajectoryRecord, 'agentId'>,
): Prisma.TrajectoryUncheckedCreateInput {
  return {
    ...t,
    agentId,
    words: JSON.stringify(t.words),
    steps: JSON.stringify(t.steps),
    extra: extraText(t.extra),
  }
}

/** The goal-word index rows of a trajectory: one per distinct word. */
export function wordRows(
  agentId: string,
  t: Omit<TrajectoryRecord, 'agentId'>,
): Prisma.TrajectoryWordCreateManyInput[] {
  return [...new Set(t.words)].map((word) => ({
    agentId,
    trajectoryId: t.id,
    scope: t.scope,
    domain: t.domain,
    word,
    success: t.success,
    recordedAt: t.recordedAt,
  }))
}

export function toAppFact(row: FactRow): AppFactRecord {
  return { ...row, type: row.type as AppFactType, extra: parseExtra(row.extra) }
}

export function toSelector(row: SelectorRow): SelectorRecord {
  return { ...row, extra: parseExtra(row.extra) }
}

export function toHint(row: HintRow): HintRecord {
  return { ...row, extra: parseExtra(row.extra) }
}

export const emptyForget = (): TrajectoryForgetResult => ({
  runs: 0,
  trajectories: 0,
  runSessions: 0,
  facts: 0,
  selectors: 0,
  hints: 0,
})

export function runWhere(agentId: string, f: RunFilter): Prisma.AgentRunWhereInput {
  return {
    agentId,
    ...(f.domain !== undefined ? { domain: f.domain } : {}),
    ...(f.status !== undefined ? { status: f.status } : {}),
    ...(f.sessionId !== undefined ? { sessionId: f.sessionId } : {}),
    ...(f.parentRunId !== undefined ? { parentRunId: f.parentRunId } : {}),
    ...(f.scope !== undefined ? { scope: f.scope } : {}),
  }
}

export const NEWEST_RUN_FIRST: Prisma.AgentRunOrderByWithRelationInput[] = [
  { updatedAt: 'desc' },
  { runId: 'desc' },
]
export const NEWEST_TRAJECTORY_FIRST: Prisma.TrajectoryOrderByWithRelationInput[] = [
  { recordedAt: 'desc' },
  { id: 'desc' },
]
export const NEWEST_SESSION_FIRST: Prisma.RunSessionOrderByWithRelationInput[] = [
  { endedAt: 'desc' },
  { id: 'desc' },
]
export const FACT_ORDER: Prisma.AppFactOrderByWithRelationInput[] = [
  { confidence: 'desc' },
  { lastSeenAt: 'desc' },
  { id: 'asc' },
]

export function trajectoryWhere(
  agentId: string,
  f: { scope?: string; domain?: string; runId?: string },
): Prisma.TrajectoryWhereInput {
  return {
    agentId,
    ...(f.scope !== undefined ? { scope: f.scope } : {}),
    ...(f.domain !== undefined ? { domain: f.domain } : {}),
    ...(f.runId !== undefined ? { runId: f.runId } : {}),
  }
}

export function factWhere(
  agentId: string,
  f: { scope: string; domain?: string; type?: AppFactType; minConfidence?: number },
): Prisma.AppFactWhereInput {
  return {
    agentId,
    scope: f.scope,
    ...(f.domain !== undefined ? { domain: f.domain } : {}),
    ...(f.type !== undefined ? { type: f.type } : {}),
    ...(f.minConfidence !== undefined ? { confidence: { gte: f.minConfidence } } : {}),
  }
}

export function selectorWhere(
  agentId: string,
  f: { scope: string; domain?: string; element?: string },
): Prisma.KnownSelectorWhereInput {
  return {
    agentId,
    scope: f.scope,
    ...(f.domain !== undefined ? { domain: f.domain } : {}),
    ...(f.element !== undefined ? { element: f.element } : {}),
  }
}

export const CANDIDATE_FIELDS = {
  id: true,
  goal: true,
  words: true,
  recordedAt: true,
  durationMs: true,
  stepCount: true,
  verifiedCount: true,
  success: true,
  runId: true,
} as const

export function toCandidate(row: {
  id: string
  goal: string
  words: string
  recordedAt: Date
  durationMs: number
  stepCount: number
  verifiedCount: number
  success: boolean
  runId: string | null
}): TrajectoryCandidate {
  return { ...row, words: parseStrings(row.words) }
}
