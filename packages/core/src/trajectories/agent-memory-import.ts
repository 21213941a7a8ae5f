import {
  type AgentMemoryFile,
  type AgentMemoryImportPlan,
  agentMemoryPlace,
  type Bookkeeping,
  FieldReader,
  isObject,
  type JsonObject,
  limitError,
  type PlannedFact,
  type PlannedRun,
  type PlannedRunSession,
  type PlannedSelector,
  type PlannedStep,
  type PlannedTrajectory,
  safeFileName,
} from './agent-memory-format.ts'
import { domainDirectoryName, normalizeRunDomain } from './domains.ts'
import { APP_FACT_TYPES, RUN_ID_PATTERN, RUN_STATUSES, type TrajectoryLimits } from './rules.ts'
import { goalWords } from './similarity.ts'

/**
 * Which field of the documented system's Action variants (its src/types.ts) is the step's value:
 * the typed text, the key pressed, the option selected, the URL gone to, the scroll direction, the
 * wait in ms, an evaluation's criteria, a script, a completion's result, an abort's reason. Verbs
 * it does not know (an Engram agent's "run_tool") carry theirs as `value`.
 */
export const ACTION_VALUE_FIELDS: Readonly<Record<string, string>> = {
  type: 'text',
  press: 'key',
  select: 'value',
  navigate: 'url',
  scroll: 'direction',
  wait: 'ms',
  evaluate: 'criteria',
  runScript: 'script',
  complete: 'result',
  abort: 'reason',
}
export const actionValueField = (verb: string) => ACTION_VALUE_FIELDS[verb] ?? 'value'

const MAX_DURATION_MS = 365 * 86_400_000
const MAX_COUNT = 1_000_000_000
const byteLength = (text: string) => new TextEncoder().encode(text).length

export interface AgentMemoryImportOptions {
  limits: TrajectoryLimits
  /** Stands in for a date a file does not give (a hints.json without updatedAt). */
  now: Date
}

/**
 * Reads a `.agent-memory/` directory's files into the records to write. A file that cannot be read
 * (bad JSON, an unknown place, a required field missing, a per-record limit) is reported in
 * `skipped` with its reason and the rest go on; the directory as a whole over maxImportFiles or
 * maxImportBytes is refused (ValidationError naming `files` and the limit).
 */
export function planAgentMemoryImport(
  files: readonly AgentMemoryFile[],
  options: AgentMemoryImportOptions,
): AgentMemoryImportPlan {
  const { limits } = options
  if (files.length > limits.maxImportFiles)
    throw limitError('files', `must be at most ${limits.maxImportFiles} files`, limits.maxImportFiles)
  let bytes = 0
  for (const f of files) bytes += byteLength(f.content)
  if (bytes > limits.maxImportBytes)
    throw limitError(
      'files',
      `must hold at most ${limits.maxImportBytes} bytes in all`,
      limits.maxImportBytes,
    )

  const plan: AgentMemoryImportPlan = {
    runs: [],
    trajectories: [],
    runSessions: [],
    facts: [],
    selectors: [],
    hints: [],
    skipped: [],
  }
  const parsed = new Map<string, unknown>()
  const parse = (file: AgentMemoryFile): unknown => {
    if (!parsed.has(file.path)) parsed.set(file.path, JSON.parse(file.content))
    return parsed.get(file.path)
  }

  // A domain directory's records take knowledge.json's `domain` when it names one, else the
  // directory's name (the documented system names directories after the host).
  const domains = new Map<string, string>()
  for (const file of files) {
    const place = agentMemoryPlace(file.path)
    if (place.kind !== 'knowledge') continue
    try {
      const data = parse(file)
      const named = isObject(data) ? data.domain : undefined
      if (typeof named === 'string' && named.trim().length > 0 && named.length <= limits.maxDomainChars)
        domains.set(place.directory, normalizeRunDomain(named))
    } catch {
      // Reported when the file itself is read below.
    }
  }
  const domainOf = (directory: string) => domains.get(directory) ?? normalizeRunDomain(directory)
  const directoryKept = (directory: string): Bookkeeping =>
    domainDirectoryName(domainOf(directory)) === directory ? {} : { raw: { directory } }

  const seenRuns = new Set<string>()
  for (const file of files) {
    const place = agentMemoryPlace(file.path)
    try {
      if (place.kind === 'unknown') throw new Error('an unknown place in the .agent-memory layout')
      if (place.kind === 'suiteSummary')
        throw new Error(
          'a suite result summary (runs/): Engram keeps no suite summaries, so it is not imported',
        )
      let data: unknown
      try {
        data = parse(file)
      } catch (error) {
        throw new Error(`bad JSON: ${(error as Error).message}`)
      }
      if (!isObject(data)) throw new Error('bad JSON: the file must hold a JSON object')
      switch (place.kind) {
        case 'trajectory':
          plan.trajectories.push(
            readTrajectory(
              data,
              domainOf(place.directory),
              place.name,
              directoryKept(place.directory),
              limits,
            ),
          )
          break
        case 'knowledge': {
          const read = readKnowledge(data, domainOf(place.directory), directoryKept(place.directory), limits)
          plan.facts.push(...read.facts)
          plan.runSessions.push(...read.runSessions)
          break
        }
        case 'selectors':
          plan.selectors.push(
            ...readSelectors(data, domainOf(place.directory), directoryKept(place.directory), limits),
          )
          break
        case 'run': {
          const run = { ...readRun(data, place.name, limits), path: file.path }
          if (seenRuns.has(run.id))
            throw new Error(`runId ${run.id} appears in another manifest of the directory`)
          seenRuns.add(run.id)
          plan.runs.push(run)
          break
        }
        case 'hints':
          plan.hints.push(readHints(data, options.now, limits))
          break
      }
    } catch (error) {
      plan.skipped.push({ path: file.path, reason: (error as Error).message })
    }
  }
  deriveRunKinds(plan.runs)
  return plan
}

/**
 * A manifest does not say whether it resumed or forked its parent: a fork starts a new run session
 * (the documented system names it fork_…), a resume keeps its parent's.
 */
function deriveRunKinds(runs: PlannedRun[]): void {
  const byId = new Map(runs.map((r) => [r.id, r]))
  for (const run of runs) {
    if (run.parentRunId === null) continue
    const parent = byId.get(run.parentRunId)
    const forked = parent ? parent.sessionId !== run.sessionId : run.sessionId.startsWith('fork_')
    run.kind = forked ? 'FORK' : 'RESUME'
  }
}

function readTrajectory(
  data: JsonObject,
  domain: string,
  name: string,
  kept: Bookkeeping,
  limits: TrajectoryLimits,
): PlannedTrajectory {
  const r = new FieldReader(data, '')
  // The file's id stays among its own fields (written back as it was); Engram gives the record an
  // id of its own, so two agents importing the same directory never share one.
  const fileId = r.peek('id')
  const goal = r.text('goal', limits.maxGoalChars)
  const origin = r.optionalText('origin', limits.maxUrlChars, true)
  const rawSteps = r.use('steps')
  if (!Array.isArray(rawSteps)) throw limitError('steps', 'must be a list of steps')
  if (rawSteps.length > limits.maxStepsPerTrajectory)
    throw limitError(
      'steps',
      `must hold at most ${limits.maxStepsPerTrajectory} steps`,
      limits.maxStepsPerTrajectory,
    )
  const steps = rawSteps.map((step, i) => readStep(step, i, limits))
  const success = r.boolean('success')
  const durationMs = r.numberOr('durationMs', { min: 0, max: MAX_DURATION_MS, integer: true }, 0)
  const model = r.optionalText('model', limits.maxModelChars, true)
  const recordedAt = r.date('timestamp')
  // Engram's own fields, written by its export; absent from the documented system's files.
  const turns = r.numberOr('turns', { min: 0, max: limits.maxTurns, integer: true }, steps.length)
  const outcome = r.optionalText('outcome', limits.maxOutcomeChars)
  const runId = r.optionalText('runId', limits.maxRunIdChars, true)
  const derivedName = typeof fileId === 'string' ? `${safeFileName(fileId)}.json` : null
  return {
    domain,
    origin,
    goal,
    words: goalWords(goal),
    runId,
    steps,
    stepCount: steps.length,
    verifiedCount: steps.filter((s) => s.verified === true).length,
    success,
    turns,
    durationMs,
    outcome,
    model,
    recordedAt,
    extra: r.extra({ ...kept, ...(derivedName === name ? {} : { name }) }, limits.maxExtraBytes),
  }
}

function readStep(step: unknown, i: number, limits: TrajectoryLimits): PlannedStep {
  const at = `steps[${i}]`
  if (!isObject(step)) throw limitError(at, 'must be an object')
  const r = new FieldReader(step, at)
  const action = r.use('action')
  if (!isObject(action)) throw limitError(`${at}.action`, 'must be an object with an action verb')
  const a = new FieldReader(action, `${at}.action`)
  const verb = a.text('action', limits.maxActionChars)
  const selector = a.optionalText('selector', limits.maxSelectorChars, true)
  const field = actionValueField(verb)
  let value: string | null
  if (verb === 'wait') {
    const ms = a.optionalNumber(field, { min: 0, max: MAX_DURATION_MS })
    value = ms === null ? null : String(ms)
  } else value = a.optionalText(field, limits.maxStepValueChars)
  const url = r.optionalText('url', limits.maxUrlChars, true)
  const verified = r.optionalBoolean('verified')
  const durationMs = r.optionalNumber('durationMs', { min: 0, max: MAX_DURATION_MS, integer: true })
  return {
    action: verb,
    selector,
    value,
    url,
    verified,
    durationMs,
    extra: r.extra({ action: a.unknown() }, limits.maxExtraBytes),
  }
}

/** The top-level fields of a file other than its record lists, kept for the export. */
function fileFields(data: JsonObject, lists: readonly string[]): { fields: JsonObject; lists: string[] } {
  const fields: JsonObject = {}
  for (const [k, v] of Object.entries(data)) if (!lists.includes(k)) fields[k] = v
  return { fields, lists: lists.filter((l) => data[l] !== undefined) }
}

function readKnowledge(
  data: JsonObject,
  domain: string,
  kept: Bookkeeping,
  limits: TrajectoryLimits,
): { facts: PlannedFact[]; runSessions: PlannedRunSession[] } {
  const file = fileFields(data, ['facts', 'sessions'])
  const list = (key: string): unknown[] => {
    const v = data[key]
    if (v === undefined) return []
    if (!Array.isArray(v)) throw limitError(key, 'must be a list')
    return v
  }
  const rawFacts = list('facts')
  const rawSessions = list('sessions')
  if (rawFacts.length === 0 && rawSessions.length === 0)
    throw new Error('holds no facts and no sessions: nothing to import')
  const facts = rawFacts.map((fact, i): PlannedFact => {
    if (!isObject(fact)) throw limitError(`facts[${i}]`, 'must be an object')
    const r = new FieldReader(fact, `facts[${i}]`)
    const written = r.text('type', 32)
    const type = written.toUpperCase() as PlannedFact['type']
    if (!APP_FACT_TYPES.includes(type))
      throw limitError(r.field('type'), 'must be one of timing, selector, pattern, quirk')
    if (written !== type.toLowerCase()) r.rawText('type', written)
    const lastSeenAt = r.date('lastSeen')
    return {
      domain,
      type,
      key: r.text('key', limits.maxFactKeyChars),
      value: r.text('value', limits.maxFactValueChars),
      confidence: r.number('confidence', { min: 0, max: 1 }),
      sources: r.number('sources', { min: 0, max: MAX_COUNT, integer: true }),
      lastSeenAt,
      createdAt: lastSeenAt,
      extra: r.extra({ ...kept, at: i, file }, limits.maxExtraBytes),
    }
  })
  const runSessions = rawSessions.map((session, i): PlannedRunSession => {
    if (!isObject(session)) throw limitError(`sessions[${i}]`, 'must be an object')
    const r = new FieldReader(session, `sessions[${i}]`)
    return {
      domain,
      sessionId: r.text('id', limits.maxRunIdChars),
      goal: r.text('goal', limits.maxGoalChars),
      outcome: r.textOr('outcome', limits.maxOutcomeChars, ''),
      success: r.boolean('success'),
      finalUrl: r.optionalText('finalUrl', limits.maxUrlChars, true),
      endedAt: r.date('timestamp'),
      turnsUsed: r.numberOr('turnsUsed', { min: 0, max: limits.maxTurns, integer: true }, 0),
      durationMs: r.numberOr('durationMs', { min: 0, max: MAX_DURATION_MS, integer: true }, 0),
      runId: r.optionalText('runId', limits.maxRunIdChars, true),
      extra: r.extra({ ...kept, at: i, file }, limits.maxExtraBytes),
    }
  })
  return { facts, runSessions }
}

/**
 * The documented system keeps one entry per element with its last snapshot reference (`lastRef`,
 * "@e12") and its best stable selector, and one successCount for the element. Engram counts per
 * selector: each of the two becomes a selector of the element carrying the entry's successCount
 * (the element was found that many times through them), and the export writes the highest count of
 * the element's selectors back, which is the entry's own after an import.
 */
function readSelectors(
  data: JsonObject,
  domain: string,
  kept: Bookkeeping,
  limits: TrajectoryLimits,
): PlannedSelector[] {
  const file = fileFields(data, ['entries'])
  const entries = data.entries
  if (!isObject(entries)) throw limitError('entries', 'must be an object of element → entry')
  const out: PlannedSelector[] = []
  for (const [key, entry] of Object.entries(entries)) {
    const at = `entries[${JSON.stringify(key.slice(0, 80))}]`
    if (!isObject(entry)) throw limitError(at, 'must be an object')
    const r = new FieldReader(entry, at)
    let element = r.optionalText('element', limits.maxElementChars, true)
    if (element === null) {
      if (key.length === 0 || key.length > limits.maxElementChars)
        throw limitError(
          r.field('element'),
          `must be 1 to ${limits.maxElementChars} characters`,
          limits.maxElementChars,
        )
      element = key
      r.standIn('element')
    }
    const stable = r.optionalText('stableSelector', limits.maxSelectorChars, true)
    const ref = r.optionalText('lastRef', limits.maxSelectorChars, true)
    if (stable === null && ref === null)
      throw limitError(at, 'has neither a stableSelector nor a lastRef: nothing to keep')
    const successCount = r.number('successCount', { min: 0, max: MAX_COUNT, integer: true })
    const lastUsedAt = r.date('lastUsed')
    const entryKept: Bookkeeping = { ...kept, file, ...(key === element ? {} : { key }) }
    for (const [selector, role] of [
      [stable, 'stable'],
      [ref, 'ref'],
    ] as const) {
      if (selector === null) continue
      out.push({
        domain,
        element,
        selector,
        successCount,
        failureCount: 0,
        consecutiveFailures: 0,
        lastUsedAt,
        createdAt: lastUsedAt,
        extra: r.extra({ ...entryKept, role }, limits.maxExtraBytes),
      })
    }
  }
  if (out.length === 0) throw new Error('holds no selector entries: nothing to import')
  return out
}

function readHints(data: JsonObject, now: Date, limits: TrajectoryLimits) {
  const r = new FieldReader(data, '')
  const text = r.text('hints', limits.maxHintChars)
  let updatedAt = r.optionalDate('updatedAt')
  if (updatedAt === null) {
    updatedAt = now
    r.standIn('updatedAt')
  }
  return { text, createdAt: updatedAt, updatedAt, extra: r.extra({}, limits.maxExtraBytes) }
}

function readRun(data: JsonObject, name: string, limits: TrajectoryLimits): PlannedRun {
  const r = new FieldReader(data, '')
  const id = r.text('runId', limits.maxRunIdChars)
  if (!RUN_ID_PATTERN.test(id))
    throw limitError(
      'runId',
      'must start with a letter or digit and use only letters, digits and _ . : -',
      String(RUN_ID_PATTERN),
    )
  let sessionId = r.optionalText('sessionId', limits.maxRunIdChars, true)
  if (sessionId === null) {
    // A run without a session is a session of its own.
    sessionId = id
    r.standIn('sessionId')
  }
  const writtenStatus = r.text('status', 32)
  const status = writtenStatus.toUpperCase() as PlannedRun['status']
  if (!RUN_STATUSES.includes(status)) throw limitError('status', 'must be one of running, completed, failed')
  if (writtenStatus !== status.toLowerCase()) r.rawText('status', writtenStatus)
  const writtenDomain = r.text('domain', limits.maxDomainChars)
  const domain = normalizeRunDomain(writtenDomain)
  if (domain !== writtenDomain) r.rawText('domain', writtenDomain)
  let artifactPaths: string[] = []
  const paths = r.peek('artifactPaths')
  if (
    Array.isArray(paths) &&
    paths.length <= limits.maxArtifactPaths &&
    paths.every((p) => typeof p === 'string' && p.length <= limits.maxUrlChars)
  ) {
    r.use('artifactPaths')
    artifactPaths = paths as string[]
  } else if (paths === undefined) {
    r.use('artifactPaths')
    r.standIn('artifactPaths')
  } else if (Array.isArray(paths) && paths.length > limits.maxArtifactPaths) {
    throw limitError(
      'artifactPaths',
      `must hold at most ${limits.maxArtifactPaths} paths`,
      limits.maxArtifactPaths,
    )
  } else {
    // Not a list of paths: it stays among the unknown fields, verbatim.
    r.standIn('artifactPaths')
  }
  const run: PlannedRun = {
    id,
    sessionId,
    parentRunId: r.optionalText('parentRunId', limits.maxRunIdChars, true),
    kind: 'START',
    isolation: 'SHARED',
    status,
    goal: r.text('goal', limits.maxGoalChars),
    domain,
    startUrl: r.optionalText('startUrl', limits.maxUrlChars, true),
    currentUrl: r.optionalText('currentUrl', limits.maxUrlChars, true),
    finalUrl: r.optionalText('finalUrl', limits.maxUrlChars, true),
    turnCount: r.numberOr('turnCount', { min: 0, max: limits.maxTurns, integer: true }, 0),
    success: r.optionalBoolean('success'),
    summary: r.optionalText('summary', limits.maxOutcomeChars),
    result: r.optionalText('result', limits.maxOutcomeChars),
    reason: r.optionalText('reason', limits.maxOutcomeChars),
    artifactPaths,
    model: r.optionalText('model', limits.maxModelChars, true),
    durationMs: r.optionalNumber('durationMs', { min: 0, max: MAX_DURATION_MS, integer: true }),
    startedAt: r.date('startedAt'),
    updatedAt: r.date('updatedAt'),
    completedAt: r.optionalDate('completedAt'),
    extra: null,
  }
  const derivedName = `${safeFileName(id)}.json`
  run.extra = r.extra(derivedName === name ? {} : { name }, limits.maxExtraBytes)
  return run
}
