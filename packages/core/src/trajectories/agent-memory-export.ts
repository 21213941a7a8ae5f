import {
  type AgentMemoryExtra,
  type AgentMemoryFile,
  type Bookkeeping,
  bookkeepingOf,
  type JsonObject,
  type PlannedFact,
  type PlannedHint,
  type PlannedRun,
  type PlannedRunSession,
  type PlannedSelector,
  type PlannedTrajectory,
  safeFileName,
  unknownFieldsOf,
  writeObject,
} from './agent-memory-format.ts'
import { actionValueField } from './agent-memory-import.ts'
import { domainDirectoryName, normalizeRunDomain } from './domains.ts'
import { compareSelectors, isVolatileRef } from './selectors.ts'

/** What an export reads: one memory scope's records (the engine's records carry more fields). */
export interface AgentMemoryRecords {
  runs: readonly PlannedRun[]
  trajectories: readonly PlannedTrajectory[]
  runSessions: readonly PlannedRunSession[]
  facts: readonly PlannedFact[]
  selectors: readonly PlannedSelector[]
  hints: readonly PlannedHint[]
}

const json = (value: unknown) => JSON.stringify(value, null, 2)
const iso = (d: Date) => d.toISOString()
const newest = (dates: readonly Date[]) =>
  dates.reduce<Date | null>((a, b) => (a === null || b.getTime() > a.getTime() ? b : a), null)

/** Imported records first in their file's order, then Engram's own by time. */
function inFileOrder<T extends { extra: AgentMemoryExtra }>(
  records: readonly T[],
  time: (r: T) => Date,
): T[] {
  const at = (r: T) => bookkeepingOf(r.extra).at
  return [...records].sort((a, b) => {
    const x = at(a)
    const y = at(b)
    if (x !== undefined && y !== undefined) return x - y
    if (x !== undefined) return -1
    if (y !== undefined) return 1
    return time(a).getTime() - time(b).getTime()
  })
}

/** The file-level fields an imported file had (on any of its records), or null for Engram's own. */
function fileOf(records: readonly { extra: AgentMemoryExtra }[]): NonNullable<Bookkeeping['file']> | null {
  for (const r of records) {
    const file = bookkeepingOf(r.extra).file
    if (file) return file
  }
  return null
}

/**
 * The file's updatedAt: kept as the file had it, unless Engram recorded something newer since the
 * import (then the newest record's time), or the records' newest time for Engram's own.
 */
function updatedAtOf(
  fields: JsonObject | null,
  records: readonly { extra: AgentMemoryExtra }[],
  times: readonly Date[],
): string | null {
  const latest = newest(times)
  const written = fields?.updatedAt
  if (typeof written === 'string' && !Number.isNaN(Date.parse(written))) {
    const native = records.some((r) => bookkeepingOf(r.extra).file === undefined)
    return native && latest && latest.getTime() > Date.parse(written) ? iso(latest) : written
  }
  if (fields && 'updatedAt' in fields) return null // not a date: written back verbatim
  return latest ? iso(latest) : null
}

/**
 * One memory scope's records as a `.agent-memory/` directory in the documented system's formats:
 * domains/<dir>/{knowledge.json, selectors.json, trajectories/<id>.json}, agent-runs/<runId>.json,
 * hints.json. Fields kept from an import are written back (see agent-memory-format.ts), so an
 * imported directory exports as the same files. Sorted by path.
 */
export function agentMemoryFiles(records: AgentMemoryRecords): AgentMemoryFile[] {
  const files: AgentMemoryFile[] = []
  const byDomain = new Map<
    string,
    {
      trajectories: PlannedTrajectory[]
      sessions: PlannedRunSession[]
      facts: PlannedFact[]
      selectors: PlannedSelector[]
    }
  >()
  const domainOf = (domain: string) => {
    const found = byDomain.get(domain)
    if (found) return found
    const d = { trajectories: [], sessions: [], facts: [], selectors: [] }
    byDomain.set(domain, d)
    return d
  }
  for (const t of records.trajectories) domainOf(t.domain).trajectories.push(t)
  for (const s of records.runSessions) domainOf(s.domain).sessions.push(s)
  for (const f of records.facts) domainOf(f.domain).facts.push(f)
  for (const s of records.selectors) domainOf(s.domain).selectors.push(s)

  // Two domains whose directory names collide ("a:1" and "a_1") get distinct directories.
  const directories = new Set<string>()
  for (const [domain, d] of [...byDomain].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const all = [...d.trajectories, ...d.sessions, ...d.facts, ...d.selectors]
    const keptName = all.map((r) => bookkeepingOf(r.extra).raw?.directory).find((n) => n !== undefined)
    let directory = keptName ?? domainDirectoryName(domain)
    for (let n = 2; directories.has(directory); n++) directory = `${domainDirectoryName(domain)}_${n}`
    directories.add(directory)
    const base = `domains/${directory}`
    if (d.facts.length > 0 || d.sessions.length > 0)
      files.push(knowledgeFile(base, domain, d.facts, d.sessions))
    if (d.selectors.length > 0) files.push(selectorsFile(base, d.selectors))
    const names = new Set<string>()
    for (const t of d.trajectories) {
      const file = trajectoryFile(t)
      let name = file.name
      for (let n = 2; names.has(name); n++) name = file.name.replace(/\.json$/, `_${n}.json`)
      names.add(name)
      files.push({ path: `${base}/trajectories/${name}`, content: json(file.object) })
    }
  }
  const runNames = new Set<string>()
  for (const run of records.runs) {
    const file = runFile(run)
    let name = file.name
    for (let n = 2; runNames.has(name); n++) name = file.name.replace(/\.json$/, `_${n}.json`)
    runNames.add(name)
    files.push({ path: `agent-runs/${name}`, content: json(file.object) })
  }
  if (records.hints.length > 0) files.push({ path: 'hints.json', content: json(hintsObject(records.hints)) })
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

function knowledgeFile(
  base: string,
  domain: string,
  facts: readonly PlannedFact[],
  sessions: readonly PlannedRunSession[],
): AgentMemoryFile {
  const records = [...facts, ...sessions]
  const file = fileOf(records)
  const object: JsonObject = file ? { ...file.fields } : { domain }
  const lists = file?.lists ?? ['facts', 'sessions']
  if (lists.includes('facts') || facts.length > 0)
    object.facts = inFileOrder(facts, (f) => f.createdAt).map((f) => {
      const raw = bookkeepingOf(f.extra).raw?.type
      const type = raw !== undefined && raw.toUpperCase() === f.type ? raw : f.type.toLowerCase()
      return writeObject(
        {
          type,
          key: f.key,
          value: f.value,
          confidence: f.confidence,
          sources: f.sources,
          lastSeen: f.lastSeenAt,
        },
        f.extra,
      )
    })
  if (lists.includes('sessions') || sessions.length > 0)
    object.sessions = inFileOrder(sessions, (s) => s.endedAt).map((s) =>
      writeObject(
        {
          id: s.sessionId,
          goal: s.goal,
          outcome: s.outcome,
          success: s.success,
          finalUrl: s.finalUrl,
          timestamp: s.endedAt,
          turnsUsed: s.turnsUsed,
          durationMs: s.durationMs,
          runId: s.runId,
        },
        s.extra,
      ),
    )
  const updatedAt = updatedAtOf(file?.fields ?? null, records, [
    ...facts.map((f) => f.lastSeenAt),
    ...sessions.map((s) => s.endedAt),
  ])
  if (updatedAt !== null) object.updatedAt = updatedAt
  return { path: `${base}/knowledge.json`, content: json(object) }
}

/**
 * An element's entry back from its selectors: the stable selector is the one imported as such, else
 * the best-ranked one that is not a snapshot reference; lastRef likewise, else the most recently
 * used reference; successCount is the element's highest (see readSelectors); lastUsed the newest.
 */
function selectorsFile(base: string, selectors: readonly PlannedSelector[]): AgentMemoryFile {
  const file = fileOf(selectors)
  const byKey = new Map<string, PlannedSelector[]>()
  for (const s of selectors) {
    const key = bookkeepingOf(s.extra).key ?? s.element
    byKey.set(key, [...(byKey.get(key) ?? []), s])
  }
  const entries: JsonObject = {}
  for (const [key, group] of byKey) {
    const ranked = [...group].sort(compareSelectors)
    const role = (r: 'stable' | 'ref') => group.find((s) => bookkeepingOf(s.extra).role === r)
    const stable = role('stable') ?? ranked.find((s) => !isVolatileRef(s.selector))
    const ref =
      role('ref') ??
      [...group]
        .filter((s) => isVolatileRef(s.selector))
        .sort((a, b) => b.lastUsedAt.getTime() - a.lastUsedAt.getTime())[0]
    const host = stable ?? ref ?? (ranked[0] as PlannedSelector)
    const lastUsed = newest(group.map((s) => s.lastUsedAt)) as Date
    // The entry's own date as written, when the newest use is still the imported one.
    const raw = group.map((s) => bookkeepingOf(s.extra).raw?.lastUsed).find((r) => r !== undefined)
    entries[key] = writeObject(
      {
        element: host.element,
        lastRef: ref?.selector ?? null,
        stableSelector: stable?.selector ?? null,
        successCount: Math.max(...group.map((s) => s.successCount)),
        lastUsed: raw !== undefined && Date.parse(raw) === lastUsed.getTime() ? raw : iso(lastUsed),
      },
      host.extra,
    )
  }
  const object: JsonObject = { ...(file?.fields ?? {}), entries }
  const updatedAt = updatedAtOf(
    file?.fields ?? null,
    selectors,
    selectors.map((s) => s.lastUsedAt),
  )
  if (updatedAt !== null) object.updatedAt = updatedAt
  return { path: `${base}/selectors.json`, content: json(object) }
}

function trajectoryFile(t: PlannedTrajectory): { name: string; object: JsonObject } {
  const b = bookkeepingOf(t.extra)
  const keptId = unknownFieldsOf(t.extra).id
  const id = keptId ?? (t as { id?: string }).id ?? null
  const steps = t.steps.map((step) => {
    const action: JsonObject = { ...(bookkeepingOf(step.extra).action ?? {}), action: step.action }
    if (step.selector !== null) action.selector = step.selector
    if (step.value !== null) {
      const numeric = step.action === 'wait' && /^-?\d+(\.\d+)?$/.test(step.value)
      action[actionValueField(step.action)] = numeric ? Number(step.value) : step.value
    }
    return writeObject(
      { url: step.url, action, verified: step.verified, durationMs: step.durationMs },
      step.extra,
    )
  })
  const object = writeObject(
    {
      id,
      goal: t.goal,
      origin: t.origin,
      steps,
      success: t.success,
      durationMs: t.durationMs,
      model: t.model,
      timestamp: t.recordedAt,
      // Engram's own fields (the documented system's reader ignores them).
      turns: t.turns,
      outcome: t.outcome,
      runId: t.runId,
    },
    t.extra,
  )
  const name = b.name ?? `${safeFileName(typeof id === 'string' ? id : String(id))}.json`
  return { name, object }
}

function runFile(run: PlannedRun): { name: string; object: JsonObject } {
  const b = bookkeepingOf(run.extra)
  const rawStatus = b.raw?.status
  const rawDomain = b.raw?.domain
  const object = writeObject(
    {
      runId: run.id,
      sessionId: run.sessionId,
      parentRunId: run.parentRunId,
      status:
        rawStatus !== undefined && rawStatus.toUpperCase() === run.status
          ? rawStatus
          : run.status.toLowerCase(),
      goal: run.goal,
      domain:
        rawDomain !== undefined && normalizeRunDomain(rawDomain) === run.domain ? rawDomain : run.domain,
      startUrl: run.startUrl,
      finalUrl: run.finalUrl,
      currentUrl: run.currentUrl,
      startedAt: run.startedAt,
      updatedAt: run.updatedAt,
      completedAt: run.completedAt,
      success: run.success,
      summary: run.summary,
      artifactPaths: run.artifactPaths,
      turnCount: run.turnCount,
      result: run.result,
      reason: run.reason,
      model: run.model,
      durationMs: run.durationMs,
    },
    run.extra,
  )
  return { name: b.name ?? `${safeFileName(run.id)}.json`, object }
}

/** hints.json holds one text: several hints are joined by blank lines, the newest time kept. */
function hintsObject(hints: readonly PlannedHint[]): JsonObject {
  const ordered = [...hints].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
  const first = ordered[0] as PlannedHint
  if (ordered.length === 1) return writeObject({ hints: first.text, updatedAt: first.updatedAt }, first.extra)
  return {
    ...unknownFieldsOf(first.extra),
    hints: ordered.map((h) => h.text).join('\n\n'),
    updatedAt: iso(newest(ordered.map((h) => h.updatedAt)) as Date),
  }
}
