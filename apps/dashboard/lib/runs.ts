// Trajectory memory in the dashboard (issue 16, spec 004): the run registry and a domain's memory
// (run sessions, trajectories, app facts, known selectors, hints). The GraphQL selections the pages
// ask for, the shapes they answer, and the pure steps between them and the screen (the lineage
// tree, live events folded into a list, facts grouped by type, selectors ranked), kept here so they
// are tested without a browser. Field names follow the catalog (packages/contract/src/schemas/runs.ts).

/**
 * The API's names for the result types (the success members of the operations' unions; list
 * results come wrapped in Pothos' `<Field>Success { data }`). One place, so the selections below
 * follow the schema if a name changes.
 */
export const RUN_TYPENAMES = {
  run: 'Run',
  runPage: 'RunPage',
  lineage: 'RunLineage',
  deletion: 'RunDeletion',
  trajectoryPage: 'TrajectoryPage',
  factPage: 'AppFactPage',
  selectorPage: 'KnownSelectorPage',
  deleted: 'RunMemoryDeleted',
  runSessions: 'QueryRunSessionsSuccess',
  runHints: 'QueryRunHintsSuccess',
  runDomains: 'QueryRunDomainsSuccess',
} as const

/** The GraphQL types of the registry's id arguments (a run id, a run session id, a memory scope). */
export const RUN_ID_TYPE = 'String'

export const RUN_STATUS_LABELS: Record<string, string> = {
  RUNNING: 'Running',
  COMPLETED: 'Completed',
  FAILED: 'Failed',
}
export const RUN_STATUSES = Object.keys(RUN_STATUS_LABELS)

export const RUN_KIND_LABELS: Record<string, string> = { START: 'Start', RESUME: 'Resume', FORK: 'Fork' }

/** In the order the run context lists them (spec 004's types of app knowledge). */
export const APP_FACT_TYPE_LABELS: Record<string, string> = {
  TIMING: 'Timing',
  SELECTOR: 'Selector',
  PATTERN: 'Pattern',
  QUIRK: 'Quirk',
}
export const APP_FACT_TYPES = Object.keys(APP_FACT_TYPE_LABELS)

/** The scope direct memory operations use when none is named (core's DEFAULT_RUN_SCOPE). */
export const DEFAULT_SCOPE = 'default'

export interface Run {
  id: string
  sessionId: string
  parentRunId: string | null
  kind: string
  isolation: string
  scope: string | null
  status: string
  goal: string
  domain: string
  startUrl: string | null
  currentUrl: string | null
  finalUrl: string | null
  turnCount: number
  success: boolean | null
  summary: string | null
  result: string | null
  reason: string | null
  model: string | null
  durationMs: number | null
  startedAt: string
  updatedAt: string
  completedAt: string | null
}

export const RUN_FIELDS =
  'id sessionId parentRunId kind isolation scope status goal domain startUrl currentUrl finalUrl turnCount success summary result reason model durationMs startedAt updatedAt completedAt'

export interface RunPage {
  totalCount: number
  runs: Run[]
  nextCursor: string | null
}

export interface RunLineage {
  rootRunId: string
  runs: { run: Run; depth: number }[]
  ancestry: string[]
  parentMissing: boolean
  truncated: boolean
}

export const LINEAGE_FIELDS = `rootRunId ancestry parentMissing truncated runs { depth run { ${RUN_FIELDS} } }`

export interface RunEvent {
  kind: 'STARTED' | 'PROGRESS' | 'COMPLETED' | 'FAILED'
  run: Run
  at: string
}

export const RUN_EVENT_FIELDS = `kind at run { ${RUN_FIELDS} }`

export interface TrajectoryStep {
  action: string
  selector: string | null
  value: string | null
  url: string | null
  verified: boolean | null
  durationMs: number | null
}

export interface Trajectory {
  id: string
  scope: string
  domain: string
  origin: string | null
  goal: string
  runId: string | null
  steps: TrajectoryStep[]
  stepCount: number
  verifiedCount: number
  success: boolean
  turns: number
  durationMs: number
  outcome: string | null
  model: string | null
  recordedAt: string
}

export const TRAJECTORY_FIELDS =
  'id scope domain origin goal runId stepCount verifiedCount success turns durationMs outcome model recordedAt steps { action selector value url verified durationMs }'

export interface RunSession {
  id: string
  sessionId: string
  runId: string | null
  domain: string
  goal: string
  outcome: string
  success: boolean
  finalUrl: string | null
  turnsUsed: number
  durationMs: number
  endedAt: string
}

export const RUN_SESSION_FIELDS =
  'id sessionId runId domain goal outcome success finalUrl turnsUsed durationMs endedAt'

export interface AppFact {
  id: string
  scope: string
  domain: string
  type: string
  key: string
  value: string
  confidence: number
  sources: number
  lastSeenAt: string
}

export const APP_FACT_FIELDS = 'id scope domain type key value confidence sources lastSeenAt'

export interface KnownSelector {
  id: string
  scope: string
  domain: string
  element: string
  selector: string
  successCount: number
  failureCount: number
  consecutiveFailures: number
  knownGood: boolean
  volatile: boolean
  lastUsedAt: string
}

export const KNOWN_SELECTOR_FIELDS =
  'id scope domain element selector successCount failureCount consecutiveFailures knownGood volatile lastUsedAt'

export interface RunHint {
  id: string
  scope: string
  text: string
  createdAt: string
  updatedAt: string
}

export const RUN_HINT_FIELDS = 'id scope text createdAt updatedAt'

export interface RunDomain {
  scope: string
  domain: string
  runs: number
  trajectories: number
  runSessions: number
  facts: number
  selectors: number
  lastActivityAt: string
}

export const RUN_DOMAIN_FIELDS = 'scope domain runs trajectories runSessions facts selectors lastActivityAt'

export interface RunDeletion {
  runs: number
  trajectories: number
  runSessions: number
  facts: number
  selectors: number
  hints: number
}

export const RUN_DELETION_FIELDS = 'runs trajectories runSessions facts selectors hints'

// --- the runs list ----------------------------------------------------------------------------

/** The runs page's filters, as its URL carries them (empty: not filtered). */
export interface RunFilter {
  domain: string | null
  status: string | null
  sessionId: string | null
  scope: string | null
}

/**
 * Whether a run belongs in a filtered list. The domain is compared as the API stores it (a host,
 * lower case): a filter typed as a URL or in capitals still matches its runs.
 */
export function runMatches(run: Run, filter: RunFilter): boolean {
  return (
    (!filter.domain || run.domain === normalizeDomain(filter.domain)) &&
    (!filter.status || run.status === filter.status) &&
    (!filter.sessionId || run.sessionId === filter.sessionId) &&
    (!filter.scope || run.scope === filter.scope)
  )
}

/** A host as the API keeps it: the URL's host lower-cased, else the lower-cased name (core's normalizeRunDomain). */
export function normalizeDomain(value: string): string {
  const trimmed = value.trim()
  try {
    const host = new URL(trimmed).host
    if (host) return host.toLowerCase()
  } catch {
    // Not a URL: a host or a name as given.
  }
  return trimmed.toLowerCase()
}

/**
 * A live event folded into the list on screen: a run it shows is replaced by the event's newer
 * state (kept in place, or dropped when it no longer matches the filter, e.g. a RUNNING filter once
 * it completes). A run it does not show but that matches the filter (just started, or now matching)
 * is not added here: its place in the API's order and the total count are the API's to say, so
 * `reread` asks the caller to read the page again. Other agents' runs never arrive (the
 * subscription is the agent's); runs outside the filter are ignored.
 */
export function applyRunEvent(
  runs: readonly Run[],
  event: RunEvent,
  filter: RunFilter,
): { runs: Run[]; reread: boolean } {
  const index = runs.findIndex((r) => r.id === event.run.id)
  if (index < 0) return { runs: [...runs], reread: runMatches(event.run, filter) }
  const current = runs[index] as Run
  // Events can cross on the bus: an older state never overwrites a newer one.
  if (current.updatedAt > event.run.updatedAt) return { runs: [...runs], reread: false }
  if (!runMatches(event.run, filter))
    return { runs: runs.filter((r) => r.id !== event.run.id), reread: false }
  return { runs: runs.map((r) => (r.id === event.run.id ? event.run : r)), reread: false }
}

/** How long a run took, or has been going (a running run against `now`). */
export function runDurationMs(run: Run, now: Date): number {
  if (run.durationMs != null) return run.durationMs
  const end = run.completedAt ? new Date(run.completedAt) : now
  return Math.max(0, end.getTime() - new Date(run.startedAt).getTime())
}

/** 850 → "850 ms", 12_400 → "12.4 s", 95_000 → "1 min 35 s", 4_000_000 → "1 h 6 min". */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`
  const minutes = Math.floor(ms / 60_000)
  if (minutes < 60) {
    const seconds = Math.round((ms % 60_000) / 1_000)
    return seconds ? `${minutes} min ${seconds} s` : `${minutes} min`
  }
  const rest = minutes % 60
  return rest ? `${Math.floor(minutes / 60)} h ${rest} min` : `${Math.floor(minutes / 60)} h`
}

// --- the lineage tree -------------------------------------------------------------------------

export interface LineageTreeNode {
  run: Run
  children: LineageTreeNode[]
}

/**
 * The lineage's breadth-first list as a tree from its root: each run under its parent, children
 * in the order the API answered (oldest first). A run whose parent is not in the list (a cut
 * lineage) hangs under the root rather than disappearing.
 */
export function lineageTree(lineage: RunLineage): LineageTreeNode | null {
  const nodes = new Map<string, LineageTreeNode>()
  for (const { run } of lineage.runs) nodes.set(run.id, { run, children: [] })
  const root = nodes.get(lineage.rootRunId)
  if (!root) return null
  for (const { run } of lineage.runs) {
    if (run.id === root.run.id) continue
    const node = nodes.get(run.id) as LineageTreeNode
    const parent = (run.parentRunId && nodes.get(run.parentRunId)) || root
    parent.children.push(node)
  }
  return root
}

// --- a domain's memory ------------------------------------------------------------------------

/** Facts by type in the run context's order, most confident first within a type; empty types left out. */
export function groupFactsByType(facts: readonly AppFact[]): { type: string; facts: AppFact[] }[] {
  const known = [
    ...APP_FACT_TYPES,
    ...new Set(facts.map((f) => f.type).filter((t) => !APP_FACT_TYPES.includes(t))),
  ]
  return known
    .map((type) => ({
      type,
      facts: facts
        .filter((f) => f.type === type)
        .sort((a, b) => b.confidence - a.confidence || a.key.localeCompare(b.key)),
    }))
    .filter((group) => group.facts.length > 0)
}

/**
 * Best first, as the run context offers them (core's compareSelectors): most successes, then
 * fewest failures, stable before volatile ("@e12" changes between page loads), most recently used.
 */
export function compareKnownSelectors(a: KnownSelector, b: KnownSelector): number {
  return (
    b.successCount - a.successCount ||
    a.failureCount - b.failureCount ||
    Number(a.volatile) - Number(b.volatile) ||
    b.lastUsedAt.localeCompare(a.lastUsedAt) ||
    a.selector.localeCompare(b.selector)
  )
}

/** Selectors by element (elements by their best selector's rank), each element's selectors ranked. */
export function rankSelectorsByElement(
  selectors: readonly KnownSelector[],
): { element: string; selectors: KnownSelector[] }[] {
  const ranked = [...selectors].sort(compareKnownSelectors)
  const groups = new Map<string, KnownSelector[]>()
  for (const selector of ranked) {
    const group = groups.get(selector.element)
    if (group) group.push(selector)
    else groups.set(selector.element, [selector])
  }
  return [...groups].map(([element, list]) => ({ element, selectors: list }))
}

/** The run session history, newest first. */
export function newestFirst(sessions: readonly RunSession[]): RunSession[] {
  return [...sessions].sort((a, b) => b.endedAt.localeCompare(a.endedAt) || b.id.localeCompare(a.id))
}

/** The path of a domain's page (the domain is a host and may hold a port: "localhost:5173"). */
export function domainHref(agentId: string, domain: string, scope: string | null = null): string {
  const query = new URLSearchParams({ agent: agentId })
  if (scope && scope !== DEFAULT_SCOPE) query.set('scope', scope)
  return `/runs/domains/${encodeURIComponent(domain)}?${query.toString()}`
}

/** The path of a run's page. */
export function runHref(agentId: string, runId: string): string {
  return `/runs/${encodeURIComponent(runId)}?${new URLSearchParams({ agent: agentId }).toString()}`
}
