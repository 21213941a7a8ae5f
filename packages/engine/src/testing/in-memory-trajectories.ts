import {
  ConflictError,
  compareSelectors,
  type FactRules,
  NotFoundError,
  observeFact,
  observeSelector,
} from '@engram/core'
import type {
  AppFactRecord,
  HintRecord,
  RunDomainSummary,
  RunFilter,
  RunRecord,
  RunSessionRecord,
  SelectorRecord,
  TrajectoryForgetResult,
  TrajectoryMemoryRepository,
  TrajectoryMemorySnapshot,
  TrajectoryRecord,
} from '../ports/trajectories.ts'
import { SerialState } from './serial-state.ts'

/** What one run gave a fact or selector, so deleting the run takes exactly that back. */
interface Contribution {
  agentId: string
  runId: string
  factId: string | null
  selectorId: string | null
  successes: number
  failures: number
}

interface State {
  runs: Map<string, RunRecord>
  runSessions: Map<string, RunSessionRecord>
  trajectories: Map<string, TrajectoryRecord>
  facts: Map<string, AppFactRecord>
  selectors: Map<string, SelectorRecord>
  hints: Map<string, HintRecord>
  contributions: Contribution[]
  nextId: number
}

const runKey = (agentId: string, id: string) => `${agentId}\u0000${id}`
const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const emptyForget = (): TrajectoryForgetResult => ({
  runs: 0,
  trajectories: 0,
  runSessions: 0,
  facts: 0,
  selectors: 0,
  hints: 0,
})

function matchesRun(r: RunRecord, f: RunFilter): boolean {
  return (
    (f.domain === undefined || r.domain === f.domain) &&
    (f.status === undefined || r.status === f.status) &&
    (f.sessionId === undefined || r.sessionId === f.sessionId) &&
    (f.parentRunId === undefined || r.parentRunId === f.parentRunId) &&
    (f.scope === undefined || r.scope === f.scope)
  )
}

const newestRunFirst = (a: RunRecord, b: RunRecord) =>
  b.updatedAt.getTime() - a.updatedAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

const factOrder = (a: AppFactRecord, b: AppFactRecord) =>
  b.confidence - a.confidence || b.lastSeenAt.getTime() - a.lastSeenAt.getTime() || byId(a, b)

/** Trajectory memory in memory: the reference the conformance spec holds the SQL adapters to. */
export class InMemoryTrajectories {
  private readonly store = new SerialState<State>({
    runs: new Map(),
    runSessions: new Map(),
    trajectories: new Map(),
    facts: new Map(),
    selectors: new Map(),
    hints: new Map(),
    contributions: [],
    nextId: 1,
  })
  readonly repository: TrajectoryMemoryRepository

  constructor() {
    this.repository = this.build()
  }

  /** What the agent still has here, per kind (the purge's remaining-data count). */
  owned(agentId: string): Record<keyof Omit<State, 'nextId'>, number> {
    const s = this.store.state
    const count = (map: Map<string, { agentId: string }>) =>
      [...map.values()].filter((r) => r.agentId === agentId).length
    return {
      runs: count(s.runs),
      runSessions: count(s.runSessions),
      trajectories: count(s.trajectories),
      facts: count(s.facts),
      selectors: count(s.selectors),
      hints: count(s.hints),
      contributions: s.contributions.filter((c) => c.agentId === agentId).length,
    }
  }

  forgetAgent(agentId: string): void {
    const s = this.store.state
    for (const map of [s.runs, s.runSessions, s.trajectories, s.facts, s.selectors, s.hints] as Map<
      string,
      { agentId: string }
    >[])
      for (const [id, record] of map) if (record.agentId === agentId) map.delete(id)
    s.contributions = s.contributions.filter((c) => c.agentId !== agentId)
  }

  private id(prefix: string): string {
    return `${prefix}${this.store.state.nextId++}`
  }

  private build(): TrajectoryMemoryRepository {
    const st = () => this.store.state
    const tx = <T>(fn: () => Promise<T> | T) => this.store.transaction(async () => fn())

    const contribute = (
      c: Omit<Contribution, 'successes' | 'failures'>,
      successes: number,
      failures: number,
    ) => {
      const found = st().contributions.find(
        (x) =>
          x.agentId === c.agentId &&
          x.runId === c.runId &&
          x.factId === c.factId &&
          x.selectorId === c.selectorId,
      )
      if (found) {
        found.successes += successes
        found.failures += failures
      } else st().contributions.push({ ...c, successes, failures })
    }
    const dropFact = (id: string) => {
      st().facts.delete(id)
      st().contributions = st().contributions.filter((c) => c.factId !== id)
    }
    const dropSelector = (id: string) => {
      st().selectors.delete(id)
      st().contributions = st().contributions.filter((c) => c.selectorId !== id)
    }
    const forgetWhere = (
      agentId: string,
      memory: (r: { scope: string; domain?: string }) => boolean,
      runs: (r: RunRecord) => boolean,
      hints: boolean,
    ): TrajectoryForgetResult => {
      const out = emptyForget()
      const s = st()
      for (const [k, r] of s.runs)
        if (r.agentId === agentId && runs(r)) {
          s.runs.delete(k)
          out.runs++
        }
      for (const [id, t] of s.trajectories)
        if (t.agentId === agentId && memory(t)) {
          s.trajectories.delete(id)
          out.trajectories++
        }
      for (const [id, e] of s.runSessions)
        if (e.agentId === agentId && memory(e)) {
          s.runSessions.delete(id)
          out.runSessions++
        }
      for (const [id, f] of s.facts)
        if (f.agentId === agentId && memory(f)) {
          dropFact(id)
          out.facts++
        }
      for (const [id, sel] of s.selectors)
        if (sel.agentId === agentId && memory(sel)) {
          dropSelector(id)
          out.selectors++
        }
      if (hints)
        for (const [id, h] of s.hints)
          if (h.agentId === agentId && memory(h)) {
            s.hints.delete(id)
            out.hints++
          }
      return out
    }
    const page = <T>(rows: T[], window: { offset: number; limit: number }) =>
      rows.slice(window.offset, window.offset + window.limit)
    const mine = <T extends { agentId: string }>(map: Map<string, T>, agentId: string) =>
      [...map.values()].filter((r) => r.agentId === agentId)

    const factsMatching = (
      agentId: string,
      f: { scope: string; domain?: string; type?: string; minConfidence?: number },
    ) =>
      mine(st().facts, agentId).filter(
        (x) =>
          x.scope === f.scope &&
          (f.domain === undefined || x.domain === f.domain) &&
          (f.type === undefined || x.type === f.type) &&
          (f.minConfidence === undefined || x.confidence >= f.minConfidence),
      )
    const selectorsMatching = (agentId: string, f: { scope: string; domain?: string; element?: string }) =>
      mine(st().selectors, agentId).filter(
        (x) =>
          x.scope === f.scope &&
          (f.domain === undefined || x.domain === f.domain) &&
          (f.element === undefined || x.element === f.element),
      )
    const trajectoriesMatching = (agentId: string, f: { scope?: string; domain?: string; runId?: string }) =>
      mine(st().trajectories, agentId)
        .filter(
          (t) =>
            (f.scope === undefined || t.scope === f.scope) &&
            (f.domain === undefined || t.domain === f.domain) &&
            (f.runId === undefined || t.runId === f.runId),
        )
        .sort((a, b) => b.recordedAt.getTime() - a.recordedAt.getTime() || byId(b, a))

    const repo: TrajectoryMemoryRepository = {
      insertRun: (agentId, run) =>
        tx(() => {
          const key = runKey(agentId, run.id)
          if (st().runs.has(key)) throw new ConflictError(`run ${run.id} already exists`, 'runId')
          const record: RunRecord = { ...run, agentId, artifactPaths: [...run.artifactPaths] }
          st().runs.set(key, record)
          return structuredClone(record)
        }),
      findRun: async (agentId, id) => structuredClone(st().runs.get(runKey(agentId, id)) ?? null),
      updateRun: (agentId, id, changes) =>
        tx(() => {
          const found = st().runs.get(runKey(agentId, id))
          if (!found) throw new NotFoundError('Run', id)
          const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined))
          Object.assign(found, defined)
          return structuredClone(found)
        }),
      listRuns: async (agentId, filter, after, limit) =>
        structuredClone(
          mine(st().runs, agentId)
            .filter((r) => matchesRun(r, filter))
            .sort(newestRunFirst)
            .filter(
              (r) =>
                !after || newestRunFirst(r, { updatedAt: after.updatedAt, id: after.id } as RunRecord) > 0,
            )
            .slice(0, limit),
        ),
      countRuns: async (agentId, filter) =>
        mine(st().runs, agentId).filter((r) => matchesRun(r, filter)).length,
      childRuns: async (agentId, parentIds, limit) => {
        const parents = new Set(parentIds)
        return structuredClone(
          mine(st().runs, agentId)
            .filter((r) => r.parentRunId !== null && parents.has(r.parentRunId))
            .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || byId(a, b))
            .slice(0, limit),
        )
      },
      forgetRun: (agentId, id) =>
        tx(() => {
          const s = st()
          const key = runKey(agentId, id)
          if (!s.runs.has(key)) return null
          s.runs.delete(key)
          const out = { ...emptyForget(), runs: 1 }
          for (const [tid, t] of s.trajectories)
            if (t.agentId === agentId && t.runId === id) {
              s.trajectories.delete(tid)
              out.trajectories++
            }
          for (const [eid, e] of s.runSessions)
            if (e.agentId === agentId && e.runId === id) {
              s.runSessions.delete(eid)
              out.runSessions++
            }
          const mineNow = s.contributions.filter((c) => c.agentId === agentId && c.runId === id)
          s.contributions = s.contributions.filter((c) => !(c.agentId === agentId && c.runId === id))
          for (const c of mineNow) {
            if (c.factId) {
              const fact = s.facts.get(c.factId)
              if (!fact) continue
              fact.sources -= c.successes
              if (fact.sources <= 0) {
                dropFact(fact.id)
                out.facts++
              }
            }
            if (c.selectorId) {
              const sel = s.selectors.get(c.selectorId)
              if (!sel) continue
              sel.successCount = Math.max(0, sel.successCount - c.successes)
              sel.failureCount = Math.max(0, sel.failureCount - c.failures)
              sel.consecutiveFailures = Math.min(sel.consecutiveFailures, sel.failureCount)
              if (sel.successCount === 0 && sel.failureCount === 0) {
                dropSelector(sel.id)
                out.selectors++
              }
            }
          }
          return out
        }),

      insertTrajectory: (agentId, trajectory, keepPerDomain) =>
        tx(() => {
          const record: TrajectoryRecord = structuredClone({ ...trajectory, agentId })
          st().trajectories.set(record.id, record)
          const sameDomain = trajectoriesMatching(agentId, { scope: record.scope, domain: record.domain })
          for (const old of sameDomain.slice(keepPerDomain)) st().trajectories.delete(old.id)
          return structuredClone(record)
        }),
      findTrajectory: async (agentId, id) => {
        const t = st().trajectories.get(id)
        return t && t.agentId === agentId ? structuredClone(t) : null
      },
      listTrajectories: async (agentId, filter, window) =>
        structuredClone(page(trajectoriesMatching(agentId, filter), window)),
      countTrajectories: async (agentId, filter) => trajectoriesMatching(agentId, filter).length,
      trajectoryCandidates: async (agentId, query, limit) => {
        const words = new Set(query.words)
        return trajectoriesMatching(agentId, { scope: query.scope, domain: query.domain })
          .filter((t) => t.success && t.recordedAt.getTime() >= query.since.getTime())
          .map((t) => ({ t, shared: t.words.filter((w) => words.has(w)).length }))
          .filter(({ shared }) => shared >= query.minShared)
          .sort((a, b) => b.shared - a.shared || b.t.recordedAt.getTime() - a.t.recordedAt.getTime())
          .slice(0, limit)
          .map(({ t }) =>
            structuredClone({
              id: t.id,
              goal: t.goal,
              words: t.words,
              recordedAt: t.recordedAt,
              durationMs: t.durationMs,
              stepCount: t.stepCount,
              verifiedCount: t.verifiedCount,
              success: t.success,
              runId: t.runId,
            }),
          )
      },
      deleteTrajectory: (agentId, id) =>
        tx(() => {
          const t = st().trajectories.get(id)
          if (!t || t.agentId !== agentId) return false
          return st().trajectories.delete(id)
        }),

      insertRunSession: (agentId, entry, keepLast) =>
        tx(() => {
          const record: RunSessionRecord = structuredClone({ ...entry, id: this.id('rs'), agentId })
          st().runSessions.set(record.id, record)
          const sameDomain = mine(st().runSessions, agentId)
            .filter((e) => e.scope === record.scope && e.domain === record.domain)
            .sort((a, b) => b.endedAt.getTime() - a.endedAt.getTime() || byId(b, a))
          for (const old of sameDomain.slice(keepLast)) st().runSessions.delete(old.id)
          return structuredClone(record)
        }),
      runSessions: async (agentId, scope, domain, limit) =>
        structuredClone(
          mine(st().runSessions, agentId)
            .filter((e) => e.scope === scope && e.domain === domain)
            .sort((a, b) => b.endedAt.getTime() - a.endedAt.getTime() || byId(b, a))
            .slice(0, limit),
        ),

      observeFact: (agentId, o, at, rules: FactRules, runId) =>
        tx(() => {
          const known = mine(st().facts, agentId).filter(
            (f) => f.scope === o.scope && f.domain === o.domain && f.type === o.type && f.key === o.key,
          )
          const change = observeFact(known, o, rules)
          for (const u of change.updates) {
            const fact = st().facts.get(u.id) as AppFactRecord
            fact.confidence = u.confidence
            if (u.sources !== fact.sources) {
              fact.sources = u.sources
              fact.lastSeenAt = at
            }
          }
          for (const id of change.prune) dropFact(id)
          let observed = known.find((f) => f.value === o.value) as AppFactRecord | undefined
          if (change.insert) {
            observed = {
              ...change.insert,
              id: this.id('fact'),
              agentId,
              scope: o.scope,
              domain: o.domain,
              lastSeenAt: at,
              createdAt: at,
              extra: null,
            }
            st().facts.set(observed.id, observed)
          }
          const fact = st().facts.get((observed as AppFactRecord).id) as AppFactRecord
          if (runId) contribute({ agentId, runId, factId: fact.id, selectorId: null }, 1, 0)
          return structuredClone(fact)
        }),
      listFacts: async (agentId, filter, window) =>
        structuredClone(page(factsMatching(agentId, filter).sort(factOrder), window)),
      countFacts: async (agentId, filter) => factsMatching(agentId, filter).length,
      putFact: (agentId, fact) =>
        tx(() => {
          const same = mine(st().facts, agentId).find(
            (f) =>
              f.scope === fact.scope &&
              f.domain === fact.domain &&
              f.type === fact.type &&
              f.key === fact.key &&
              f.value === fact.value,
          )
          const record: AppFactRecord = structuredClone({ ...fact, id: same?.id ?? this.id('fact'), agentId })
          st().facts.set(record.id, record)
          return structuredClone(record)
        }),
      deleteFact: (agentId, id) =>
        tx(() => {
          const f = st().facts.get(id)
          if (!f || f.agentId !== agentId) return false
          dropFact(id)
          return true
        }),

      observeSelector: (agentId, o, at, runId) =>
        tx(() => {
          let entry = mine(st().selectors, agentId).find(
            (x) =>
              x.scope === o.scope &&
              x.domain === o.domain &&
              x.element === o.element &&
              x.selector === o.selector,
          )
          if (!entry) {
            entry = {
              id: this.id('sel'),
              agentId,
              scope: o.scope,
              domain: o.domain,
              element: o.element,
              selector: o.selector,
              successCount: 0,
              failureCount: 0,
              consecutiveFailures: 0,
              lastUsedAt: at,
              createdAt: at,
              extra: null,
            }
          }
          const next = observeSelector(entry, o.outcome, at)
          st().selectors.set(next.id, next)
          if (runId)
            contribute(
              { agentId, runId, factId: null, selectorId: next.id },
              o.outcome === 'SUCCESS' ? 1 : 0,
              o.outcome === 'FAILURE' ? 1 : 0,
            )
          return structuredClone(next)
        }),
      listSelectors: async (agentId, filter, window) =>
        structuredClone(page(selectorsMatching(agentId, filter).sort(compareSelectors), window)),
      countSelectors: async (agentId, filter) => selectorsMatching(agentId, filter).length,
      putSelector: (agentId, selector) =>
        tx(() => {
          const same = mine(st().selectors, agentId).find(
            (x) =>
              x.scope === selector.scope &&
              x.domain === selector.domain &&
              x.element === selector.element &&
              x.selector === selector.selector,
          )
          const record: SelectorRecord = structuredClone({
            ...selector,
            id: same?.id ?? this.id('sel'),
            agentId,
          })
          st().selectors.set(record.id, record)
          return structuredClone(record)
        }),
      deleteSelector: (agentId, id) =>
        tx(() => {
          const x = st().selectors.get(id)
          if (!x || x.agentId !== agentId) return false
          dropSelector(id)
          return true
        }),

      listHints: async (agentId, scope) =>
        structuredClone(
          mine(st().hints, agentId)
            .filter((h) => h.scope === scope)
            .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || byId(a, b)),
        ),
      addHint: (agentId, hint) =>
        tx(() => {
          const record: HintRecord = structuredClone({ ...hint, id: this.id('hint'), agentId })
          st().hints.set(record.id, record)
          return structuredClone(record)
        }),
      updateHint: (agentId, id, changes) =>
        tx(() => {
          const h = st().hints.get(id)
          if (!h || h.agentId !== agentId) throw new NotFoundError('Hint', id)
          if (changes.text !== undefined) h.text = changes.text
          if (changes.extra !== undefined) h.extra = structuredClone(changes.extra)
          h.updatedAt = changes.updatedAt
          return structuredClone(h)
        }),
      deleteHint: (agentId, id) =>
        tx(() => {
          const h = st().hints.get(id)
          if (!h || h.agentId !== agentId) return false
          return st().hints.delete(id)
        }),

      domains: async (agentId, scope) => {
        const summaries = new Map<string, RunDomainSummary>()
        const touch = (s: string | null, domain: string, kind: keyof RunDomainSummary, at: Date) => {
          if (s === null || (scope !== undefined && s !== scope)) return
          const key = `${s}\u0000${domain}`
          const summary = summaries.get(key) ?? {
            scope: s,
            domain,
            runs: 0,
            trajectories: 0,
            runSessions: 0,
            facts: 0,
            selectors: 0,
            lastActivityAt: at,
          }
          ;(summary[kind] as number)++
          if (at > summary.lastActivityAt) summary.lastActivityAt = at
          summaries.set(key, summary)
        }
        for (const r of mine(st().runs, agentId)) touch(r.scope, r.domain, 'runs', r.updatedAt)
        for (const t of mine(st().trajectories, agentId))
          touch(t.scope, t.domain, 'trajectories', t.recordedAt)
        for (const e of mine(st().runSessions, agentId)) touch(e.scope, e.domain, 'runSessions', e.endedAt)
        for (const f of mine(st().facts, agentId)) touch(f.scope, f.domain, 'facts', f.lastSeenAt)
        for (const x of mine(st().selectors, agentId)) touch(x.scope, x.domain, 'selectors', x.lastUsedAt)
        return structuredClone(
          [...summaries.values()].sort(
            (a, b) =>
              b.lastActivityAt.getTime() - a.lastActivityAt.getTime() ||
              (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0),
          ),
        )
      },
      forgetDomain: (agentId, scope, domain) =>
        tx(() =>
          forgetWhere(
            agentId,
            (r) => r.scope === scope && r.domain === domain,
            (r) => r.scope === scope && r.domain === domain,
            false,
          ),
        ),
      forgetScope: (agentId, scope) =>
        tx(() =>
          forgetWhere(
            agentId,
            (r) => r.scope === scope,
            () => false,
            true,
          ),
        ),
      snapshot: async (agentId, scope) => {
        const inScope = (r: { scope: string | null }) => scope === undefined || r.scope === scope
        const snapshot: TrajectoryMemorySnapshot = {
          runs: mine(st().runs, agentId)
            .filter(inScope)
            .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || byId(a, b)),
          runSessions: mine(st().runSessions, agentId).filter(inScope).sort(byId),
          trajectories: mine(st().trajectories, agentId).filter(inScope).sort(byId),
          facts: mine(st().facts, agentId).filter(inScope).sort(byId),
          selectors: mine(st().selectors, agentId).filter(inScope).sort(byId),
          hints: mine(st().hints, agentId).filter(inScope).sort(byId),
        }
        return structuredClone(snapshot)
      },
      restore: (agentId, snapshot) =>
        tx(() => {
          const s = st()
          for (const r of snapshot.runs) s.runs.set(runKey(agentId, r.id), structuredClone({ ...r, agentId }))
          for (const e of snapshot.runSessions) s.runSessions.set(e.id, structuredClone({ ...e, agentId }))
          for (const t of snapshot.trajectories) s.trajectories.set(t.id, structuredClone({ ...t, agentId }))
          for (const f of snapshot.facts) s.facts.set(f.id, structuredClone({ ...f, agentId }))
          for (const x of snapshot.selectors) s.selectors.set(x.id, structuredClone({ ...x, agentId }))
          for (const h of snapshot.hints) s.hints.set(h.id, structuredClone({ ...h, agentId }))
        }),
      clear: (agentId) =>
        tx(() =>
          forgetWhere(
            agentId,
            () => true,
            () => true,
            true,
          ),
        ),
    }
    return repo
  }
}
