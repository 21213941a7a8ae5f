'use server'

import { type Answer, answer, attempt, type Payload } from '../../../lib/answers'
import { ERROR_FIELDS, gql } from '../../../lib/api'
import {
  APP_FACT_FIELDS,
  type AppFact,
  KNOWN_SELECTOR_FIELDS,
  type KnownSelector,
  LINEAGE_FIELDS,
  RUN_DELETION_FIELDS,
  RUN_DOMAIN_FIELDS,
  RUN_FIELDS,
  RUN_HINT_FIELDS,
  RUN_ID_TYPE,
  RUN_SESSION_FIELDS,
  RUN_TYPENAMES,
  type Run,
  type RunDeletion,
  type RunDomain,
  type RunFilter,
  type RunHint,
  type RunLineage,
  type RunPage,
  type RunSession,
  TRAJECTORY_FIELDS,
  type Trajectory,
} from '../../../lib/runs'

// The runs and domain pages' calls to the API, as the signed-in operator. They answer data or a
// refusal (never throw), so a page can show a failed call in place; the pages' first reads turn a
// refusal into the route's error state.

export type { Answer }

/** Runs shown on a page; the API's most: maxRunListLimit. */
const RUNS_PAGE_SIZE = 100

/** The agent's runs matching the filter, most recently updated first. */
export async function readRuns(agentId: string, filter: RunFilter): Promise<Answer<RunPage>> {
  return attempt(async () => {
    const { runs } = await gql<{ runs: Payload }>(
      `query($a: ID, $domain: String, $status: RunStatus, $session: ${RUN_ID_TYPE}, $scope: ${RUN_ID_TYPE}, $limit: Int) {
        runs(agentId: $a, domain: $domain, status: $status, sessionId: $session, scope: $scope, limit: $limit) {
          __typename ... on ${RUN_TYPENAMES.runPage} { totalCount nextCursor runs { ${RUN_FIELDS} } } ${ERROR_FIELDS}
        }
      }`,
      { a: agentId, ...variablesOf(filter), limit: RUNS_PAGE_SIZE },
    )
    return answer<RunPage>(runs, RUN_TYPENAMES.runPage, 'Listing the runs')
  })
}

function variablesOf(filter: RunFilter) {
  return { domain: filter.domain, status: filter.status, session: filter.sessionId, scope: filter.scope }
}

/** One run, or null when the agent has none by that id. */
export async function readRun(agentId: string, runId: string): Promise<Answer<Run | null>> {
  return attempt<Run | null>(async () => {
    const { run } = await gql<{ run: Payload | null }>(
      `query($a: ID, $r: ${RUN_ID_TYPE}!) { run(agentId: $a, runId: $r) { __typename ... on ${RUN_TYPENAMES.run} { ${RUN_FIELDS} } ${ERROR_FIELDS} } }`,
      { a: agentId, r: runId },
    )
    if (run === null) return { ok: true, value: null }
    return answer<Run | null>(run, RUN_TYPENAMES.run, 'Reading the run')
  })
}

export async function readLineage(agentId: string, runId: string): Promise<Answer<RunLineage>> {
  return attempt(async () => {
    const { runLineage } = await gql<{ runLineage: Payload }>(
      `query($a: ID, $r: ${RUN_ID_TYPE}!) { runLineage(agentId: $a, runId: $r) { __typename ... on ${RUN_TYPENAMES.lineage} { ${LINEAGE_FIELDS} } ${ERROR_FIELDS} } }`,
      { a: agentId, r: runId },
    )
    return answer<RunLineage>(runLineage, RUN_TYPENAMES.lineage, 'Reading the lineage')
  })
}

/** A run's trajectory (kept when it completed with steps and memory on), or null. */
export async function readRunTrajectory(agentId: string, runId: string): Promise<Answer<Trajectory | null>> {
  return attempt(async () => {
    const { trajectories } = await gql<{ trajectories: Payload }>(
      `query($a: ID, $r: ${RUN_ID_TYPE}) { trajectories(agentId: $a, runId: $r, limit: 1) { __typename ... on ${RUN_TYPENAMES.trajectoryPage} { totalCount trajectories { ${TRAJECTORY_FIELDS} } } ${ERROR_FIELDS} } }`,
      { a: agentId, r: runId },
    )
    return answer<Trajectory | null>(
      trajectories,
      RUN_TYPENAMES.trajectoryPage,
      'Reading the trajectory',
      (p) => (p.trajectories as Trajectory[])[0] ?? null,
    )
  })
}

/** The run's entry in its domain's session history (kept for the last few runs with memory on), or null. */
export async function readRunSessionEntry(agentId: string, run: Run): Promise<Answer<RunSession | null>> {
  if (run.scope === null) return { ok: true, value: null }
  return attempt(async () => {
    const { runSessions } = await gql<{ runSessions: Payload }>(
      `query($a: ID, $d: String!, $scope: ${RUN_ID_TYPE}) { runSessions(agentId: $a, domain: $d, scope: $scope) { __typename ... on ${RUN_TYPENAMES.runSessions} { data { ${RUN_SESSION_FIELDS} } } ${ERROR_FIELDS} } }`,
      { a: agentId, d: run.domain, scope: run.scope },
    )
    return answer<RunSession | null>(
      runSessions,
      RUN_TYPENAMES.runSessions,
      'Reading the session history',
      (p) => (p.data as RunSession[]).find((entry) => entry.runId === run.id) ?? null,
    )
  })
}

export async function readRunDomains(agentId: string, scope: string | null): Promise<Answer<RunDomain[]>> {
  return attempt(async () => {
    const { runDomains } = await gql<{ runDomains: Payload }>(
      `query($a: ID, $scope: ${RUN_ID_TYPE}) { runDomains(agentId: $a, scope: $scope) { __typename ... on ${RUN_TYPENAMES.runDomains} { data { ${RUN_DOMAIN_FIELDS} } } ${ERROR_FIELDS} } }`,
      { a: agentId, scope },
    )
    return answer<RunDomain[]>(
      runDomains,
      RUN_TYPENAMES.runDomains,
      'Listing the domains',
      (p) => p.data as RunDomain[],
    )
  })
}

export interface DomainMemory {
  sessions: RunSession[]
  trajectories: { totalCount: number; trajectories: Trajectory[] }
  facts: { totalCount: number; facts: AppFact[] }
  selectors: { totalCount: number; selectors: KnownSelector[] }
  hints: RunHint[]
}

/** Items of each kind the domain page shows (the API's most per call: maxRunListLimit). */
const DOMAIN_PAGE_SIZE = 100

/** Everything the domain page shows, in one request: five fields of one query. */
export async function readDomainMemory(
  agentId: string,
  domain: string,
  scope: string,
): Promise<Answer<DomainMemory>> {
  return attempt(async () => {
    const data = await gql<Record<keyof DomainMemory, Payload>>(
      `query($a: ID, $d: String!, $scope: ${RUN_ID_TYPE}, $limit: Int) {
        sessions: runSessions(agentId: $a, domain: $d, scope: $scope) {
          __typename ... on ${RUN_TYPENAMES.runSessions} { data { ${RUN_SESSION_FIELDS} } } ${ERROR_FIELDS}
        }
        trajectories: trajectories(agentId: $a, domain: $d, scope: $scope, limit: $limit) {
          __typename ... on ${RUN_TYPENAMES.trajectoryPage} { totalCount trajectories { ${TRAJECTORY_FIELDS} } } ${ERROR_FIELDS}
        }
        facts: appFacts(agentId: $a, domain: $d, scope: $scope, limit: $limit) {
          __typename ... on ${RUN_TYPENAMES.factPage} { totalCount facts { ${APP_FACT_FIELDS} } } ${ERROR_FIELDS}
        }
        selectors: knownSelectors(agentId: $a, domain: $d, scope: $scope, limit: $limit) {
          __typename ... on ${RUN_TYPENAMES.selectorPage} { totalCount selectors { ${KNOWN_SELECTOR_FIELDS} } } ${ERROR_FIELDS}
        }
        hints: runHints(agentId: $a, scope: $scope) {
          __typename ... on ${RUN_TYPENAMES.runHints} { data { ${RUN_HINT_FIELDS} } } ${ERROR_FIELDS}
        }
      }`,
      { a: agentId, d: domain, scope, limit: DOMAIN_PAGE_SIZE },
    )
    const parts = [
      answer<RunSession[]>(
        data.sessions,
        RUN_TYPENAMES.runSessions,
        'Reading the session history',
        (p) => p.data as RunSession[],
      ),
      answer<DomainMemory['trajectories']>(
        data.trajectories,
        RUN_TYPENAMES.trajectoryPage,
        'Reading the trajectories',
      ),
      answer<DomainMemory['facts']>(data.facts, RUN_TYPENAMES.factPage, 'Reading the app knowledge'),
      answer<DomainMemory['selectors']>(data.selectors, RUN_TYPENAMES.selectorPage, 'Reading the selectors'),
      answer<RunHint[]>(data.hints, RUN_TYPENAMES.runHints, 'Reading the hints', (p) => p.data as RunHint[]),
    ] as const
    const refused = parts.find((part) => !part.ok)
    if (refused && !refused.ok) return refused
    const [sessions, trajectories, facts, selectors, hints] = parts.map((p) => (p.ok ? p.value : null))
    return {
      ok: true,
      value: { sessions, trajectories, facts, selectors, hints } as DomainMemory,
    }
  })
}

// --- deletions (each confirmed in the page first) ----------------------------------------------

/** Deletes a run and what it left in memory (its trajectory, its session entry, its confirmations). */
export async function deleteRun(agentId: string, runId: string): Promise<Answer<RunDeletion>> {
  return attempt(async () => {
    const { deleteRun } = await gql<{ deleteRun: Payload }>(
      `mutation($a: ID, $r: ${RUN_ID_TYPE}!) { deleteRun(agentId: $a, runId: $r) { __typename ... on ${RUN_TYPENAMES.deletion} { ${RUN_DELETION_FIELDS} } ${ERROR_FIELDS} } }`,
      { a: agentId, r: runId },
    )
    return answer<RunDeletion>(deleteRun, RUN_TYPENAMES.deletion, 'Deleting the run')
  })
}

/** Deletes a domain's memory in one scope: trajectories, session history, facts, selectors. */
export async function deleteRunDomain(
  agentId: string,
  domain: string,
  scope: string,
): Promise<Answer<RunDeletion>> {
  return attempt(async () => {
    const { deleteRunDomain } = await gql<{ deleteRunDomain: Payload }>(
      `mutation($a: ID, $d: String!, $scope: ${RUN_ID_TYPE}) { deleteRunDomain(agentId: $a, domain: $d, scope: $scope) { __typename ... on ${RUN_TYPENAMES.deletion} { ${RUN_DELETION_FIELDS} } ${ERROR_FIELDS} } }`,
      { a: agentId, d: domain, scope },
    )
    return answer<RunDeletion>(deleteRunDomain, RUN_TYPENAMES.deletion, 'Deleting the domain’s memory')
  })
}

/** Clears a whole memory scope (an evaluation track, a PER_RUN run's scope): every domain's memory and its hints. */
export async function clearRunMemoryScope(agentId: string, scope: string): Promise<Answer<RunDeletion>> {
  return attempt(async () => {
    const { clearRunMemoryScope } = await gql<{ clearRunMemoryScope: Payload }>(
      `mutation($a: ID, $scope: ${RUN_ID_TYPE}!) { clearRunMemoryScope(agentId: $a, scope: $scope) { __typename ... on ${RUN_TYPENAMES.deletion} { ${RUN_DELETION_FIELDS} } ${ERROR_FIELDS} } }`,
      { a: agentId, scope },
    )
    return answer<RunDeletion>(clearRunMemoryScope, RUN_TYPENAMES.deletion, 'Clearing the scope')
  })
}

/** The catalog's one-record deletions of trajectory memory, by the kind of record. */
const RECORD_DELETIONS = {
  trajectory: 'deleteTrajectory',
  fact: 'deleteAppFact',
  selector: 'deleteKnownSelector',
  hint: 'deleteRunHint',
} as const

export type MemoryRecordKind = keyof typeof RECORD_DELETIONS

/** Deletes one trajectory, app fact, selector entry or hint by id. */
export async function deleteMemoryRecord(
  agentId: string,
  kind: MemoryRecordKind,
  id: string,
): Promise<Answer<{ id: string; deleted: boolean }>> {
  const field = RECORD_DELETIONS[kind]
  if (!field) return { ok: false, message: `unknown record kind ${String(kind)}` }
  return attempt(async () => {
    const data = await gql<Record<string, Payload>>(
      `mutation($a: ID, $id: ID!) { ${field}(agentId: $a, id: $id) { __typename ... on ${RUN_TYPENAMES.deleted} { id deleted } ${ERROR_FIELDS} } }`,
      { a: agentId, id },
    )
    return answer<{ id: string; deleted: boolean }>(data[field] ?? null, RUN_TYPENAMES.deleted, 'Deleting')
  })
}
