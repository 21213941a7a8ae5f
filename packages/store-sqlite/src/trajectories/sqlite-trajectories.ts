import { randomUUID } from 'node:crypto'
import { ConflictError, compareSelectors, NotFoundError, observeFact, observeSelector } from '@engram/core'
import type {
  AppFactRecord,
  RunDomainSummary,
  SelectorRecord,
  TrajectoryForgetResult,
  TrajectoryMemoryRepository,
  TrajectoryMemorySnapshot,
} from '@engram/engine'
import type { Database, Transaction } from '../db/client.ts'
import type { AgentRun as RunRow } from '../generated/prisma/client.ts'

import {
  byId,
  CANDIDATE_FIELDS,
  chunks,
  emptyForget,
  extraText,
  FACT_ORDER,
  factWhere,
  IDS_PER_STATEMENT,
  NEWEST_RUN_FIRST,
  NEWEST_SESSION_FIRST,
  NEWEST_TRAJECTORY_FIRST,
  parseStrings,
  runData,
  runWhere,
  selectorWhere,
  toAppFact,
  toCandidate,
  toHint,
  toRun,
  toRunSession,
  toSelector,
  toTrajectory,
  trajectoryData,
  trajectoryWhere,
  wordRows,
} from './trajectory-rows.ts'
/**
 * The repository on a client or inside a transaction (the archive's import and clearing call it
 * on theirs, so trajectory memory is written and cleared in the same unit of work).
 */
export function trajectoriesIn(db: Database | Transaction): TrajectoryMemoryRepository {
  const dropFacts = async (agentId: string, ids: readonly string[]) => {
    for (const part of chunks(ids)) {
      await db.runContribution.deleteMany({ where: { agentId, kind: 'FACT', targetId: { in: part } } })
      await db.appFact.deleteMany({ where: { agentId, id: { in: part } } })
    }
  }
  const dropSelectors = async (agentId: string, ids: readonly string[]) => {
    for (const part of chunks(ids)) {
      await db.runContribution.deleteMany({ where: { agentId, kind: 'SELECTOR', targetId: { in: part } } })
      await db.knownSelector.deleteMany({ where: { agentId, id: { in: part } } })
    }
  }
  const contribute = (
    agentId: string,
    runId: string,
    target: { kind: 'FACT' | 'SELECTOR'; id: string; scope: string; domain: string },
    successes: number,
    failures: number,
  ) =>
    db.runContribution.upsert({
      where: { agentId_runId_kind_targetId: { agentId, runId, kind: target.kind, targetId: target.id } },
      create: {
        agentId,
        runId,
        kind: target.kind,
        targetId: target.id,
        scope: target.scope,
        domain: target.domain,
        successes,
        failures,
      },
      update: { successes: { increment: successes }, failures: { increment: failures } },
    })
  /** The ids beyond the newest `keep` of a list (the pruning of inserts). */
  const beyond = (rows: { id: string }[]) => rows.map((r) => r.id)
  /** Deletes what a where matches in the memory tables (forgetDomain, forgetScope, clear). */
  const forgetMemory = async (
    agentId: string,
    where: { scope?: string; domain?: string },
    hints: boolean,
  ): Promise<TrajectoryForgetResult> => {
    const out = emptyForget()
    const base = { agentId, ...where }
    // The goal-word index rows go with their trajectories (cascade).
    out.trajectories = (await db.trajectory.deleteMany({ where: base })).count
    out.runSessions = (await db.runSession.deleteMany({ where: base })).count
    await db.runContribution.deleteMany({ where: base })
    out.facts = (await db.appFact.deleteMany({ where: base })).count
    out.selectors = (await db.knownSelector.deleteMany({ where: base })).count
    if (hints && where.domain === undefined)
      out.hints = (
        await db.runHint.deleteMany({ where: { agentId, ...(where.scope ? { scope: where.scope } : {}) } })
      ).count
    return out
  }

  const repository: TrajectoryMemoryRepository = {
    // --- the run registry ---------------------------------------------------------------------
    insertRun: async (agentId, run) => {
      const existing = await db.agentRun.findUnique({
        where: { agentId_runId: { agentId, runId: run.id } },
        select: { runId: true },
      })
      if (existing) throw new ConflictError(`run ${run.id} already exists`, 'runId')
      try {
        return toRun(await db.agentRun.create({ data: runData(agentId, run) }))
      } catch (error) {
        // Two starts of one run id at once (Postgres writers run together): the loser is told so.
        if ((error as { code?: string }).code === 'P2002')
          throw new ConflictError(`run ${run.id} already exists`, 'runId')
        throw error
      }
    },
    findRun: async (agentId, id) => {
      const row = await db.agentRun.findUnique({ where: { agentId_runId: { agentId, runId: id } } })
      return row ? toRun(row) : null
    },
    updateRun: async (agentId, id, changes) => {
      const found = await db.agentRun.findUnique({
        where: { agentId_runId: { agentId, runId: id } },
        select: { runId: true },
      })
      if (!found) throw new NotFoundError('Run', id)
      const { artifactPaths, extra, ...rest } = changes
      const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined))
      const row = await db.agentRun.update({
        where: { agentId_runId: { agentId, runId: id } },
        data: {
          ...defined,
          ...(artifactPaths !== undefined ? { artifactPaths: JSON.stringify(artifactPaths) } : {}),
          ...(extra !== undefined ? { extra: extraText(extra) } : {}),
        },
      })
      return toRun(row)
    },
    listRuns: async (agentId, filter, after, limit) => {
      const where = runWhere(agentId, filter)
      const rows = await db.agentRun.findMany({
        where: after
          ? {
              ...where,
              OR: [
                { updatedAt: { lt: after.updatedAt } },
                { updatedAt: after.updatedAt, runId: { lt: after.id } },
              ],
            }
          : where,
        orderBy: NEWEST_RUN_FIRST,
        take: limit,
      })
      return rows.map(toRun)
    },
    countRuns: (agentId, filter) => db.agentRun.count({ where: runWhere(agentId, filter) }),
    childRuns: async (agentId, parentIds, limit) => {
      const rows: RunRow[] = []
      for (const part of chunks([...new Set(parentIds)]))
        rows.push(
          ...(await db.agentRun.findMany({
            where: { agentId, parentRunId: { in: part } },
            orderBy: [{ startedAt: 'asc' }, { runId: 'asc' }],
            take: limit,
          })),
        )
      return rows
        .map(toRun)
        .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || byId(a, b))
        .slice(0, limit)
    },
    forgetRun: async (agentId, id) => {
      const where = { agentId_runId: { agentId, runId: id } }
      if (!(await db.agentRun.findUnique({ where, select: { runId: true } }))) return null
      await db.agentRun.delete({ where })
      const out = { ...emptyForget(), runs: 1 }
      out.trajectories = (await db.trajectory.deleteMany({ where: { agentId, runId: id } })).count
      out.runSessions = (await db.runSession.deleteMany({ where: { agentId, runId: id } })).count
      const given = await db.runContribution.findMany({
        where: { agentId, runId: id },
        orderBy: { id: 'asc' },
      })
      await db.runContribution.deleteMany({ where: { agentId, runId: id } })
      for (const c of given) {
        if (c.kind === 'FACT') {
          const fact = await db.appFact.findUnique({ where: { agentId_id: { agentId, id: c.targetId } } })
          if (!fact) continue
          const sources = fact.sources - c.successes
          if (sources <= 0) {
            await dropFacts(agentId, [fact.id])
            out.facts++
          } else
            await db.appFact.update({ where: { agentId_id: { agentId, id: fact.id } }, data: { sources } })
        } else {
          const sel = await db.knownSelector.findUnique({
            where: { agentId_id: { agentId, id: c.targetId } },
          })
          if (!sel) continue
          const successCount = Math.max(0, sel.successCount - c.successes)
          const failureCount = Math.max(0, sel.failureCount - c.failures)
          if (successCount === 0 && failureCount === 0) {
            await dropSelectors(agentId, [sel.id])
            out.selectors++
          } else
            await db.knownSelector.update({
              where: { agentId_id: { agentId, id: sel.id } },
              data: {
                successCount,
                failureCount,
                consecutiveFailures: Math.min(sel.consecutiveFailures, failureCount),
              },
            })
        }
      }
      return out
    },

    // --- trajectories -------------------------------------------------------------------------
    insertTrajectory: async (agentId, trajectory, keepPerDomain) => {
      const row = await db.trajectory.create({ data: trajectoryData(agentId, trajectory) })
      const words = wordRows(agentId, trajectory)
      if (words.length) await db.trajectoryWord.createMany({ data: words })
      const old = await db.trajectory.findMany({
        where: { agentId, scope: trajectory.scope, domain: trajectory.domain },
        orderBy: NEWEST_TRAJECTORY_FIRST,
        skip: keepPerDomain,
        select: { id: true },
      })
      for (const part of chunks(beyond(old)))
        await db.trajectory.deleteMany({ where: { agentId, id: { in: part } } })
      return toTrajectory(row)
    },
    findTrajectory: async (agentId, id) => {
      const row = await db.trajectory.findUnique({ where: { agentId_id: { agentId, id } } })
      return row ? toTrajectory(row) : null
    },
    listTrajectories: async (agentId, filter, window) =>
      (
        await db.trajectory.findMany({
          where: trajectoryWhere(agentId, filter),
          orderBy: NEWEST_TRAJECTORY_FIRST,
          skip: window.offset,
          take: window.limit,
        })
      ).map(toTrajectory),
    countTrajectories: (agentId, filter) => db.trajectory.count({ where: trajectoryWhere(agentId, filter) }),
    trajectoryCandidates: async (agentId, query, limit) => {
      const words = [...new Set(query.words)]
      if (limit <= 0) return []
      const where = { agentId, scope: query.scope, domain: query.domain }
      if (query.minShared <= 0) {
        // Every successful trajectory qualifies: nothing for the word index to narrow.
        const rows = await db.trajectory.findMany({
          where: { ...where, success: true, recordedAt: { gte: query.since } },
          select: CANDIDATE_FIELDS,
        })
        const asked = new Set(words)
        return rows
          .map((r) => ({
            r: toCandidate(r),
            shared: parseStrings(r.words).filter((w) => asked.has(w)).length,
          }))
          .sort(
            (a, b) =>
              b.shared - a.shared || b.r.recordedAt.getTime() - a.r.recordedAt.getTime() || byId(b.r, a.r),
          )
          .slice(0, limit)
          .map(({ r }) => r)
      }
      if (words.length === 0 || words.length > IDS_PER_STATEMENT) return []
      // Index seeks on (agentId, scope, domain, word, success, recordedAt, trajectoryId), one per
      // word, read from the index alone; grouped by trajectory, kept when enough words are shared.
      const groups = await db.trajectoryWord.groupBy({
        by: ['trajectoryId', 'recordedAt'],
        where: { ...where, word: { in: words }, success: true, recordedAt: { gte: query.since } },
        having: { trajectoryId: { _count: { gte: query.minShared } } },
        orderBy: [{ _count: { trajectoryId: 'desc' } }, { recordedAt: 'desc' }, { trajectoryId: 'desc' }],
        take: limit,
      })
      if (groups.length === 0) return []
      const rows = await db.trajectory.findMany({
        where: { agentId, id: { in: groups.map((g) => g.trajectoryId) } },
        select: CANDIDATE_FIELDS,
      })
      const byTrajectory = new Map(rows.map((r) => [r.id, r]))
      return groups.flatMap((g) => {
        const row = byTrajectory.get(g.trajectoryId)
        return row ? [toCandidate(row)] : []
      })
    },
    deleteTrajectory: async (agentId, id) =>
      (await db.trajectory.deleteMany({ where: { agentId, id } })).count > 0,

    // --- run session history ------------------------------------------------------------------
    insertRunSession: async (agentId, entry, keepLast) => {
      const row = await db.runSession.create({
        data: { ...entry, id: randomUUID(), agentId, extra: extraText(entry.extra) },
      })
      const old = await db.runSession.findMany({
        where: { agentId, scope: entry.scope, domain: entry.domain },
        orderBy: NEWEST_SESSION_FIRST,
        skip: keepLast,
        select: { id: true },
      })
      for (const part of chunks(beyond(old)))
        await db.runSession.deleteMany({ where: { agentId, id: { in: part } } })
      return toRunSession(row)
    },
    runSessions: async (agentId, scope, domain, limit) =>
      (
        await db.runSession.findMany({
          where: { agentId, scope, domain },
          orderBy: NEWEST_SESSION_FIRST,
          take: limit,
        })
      ).map(toRunSession),

    // --- app knowledge ------------------------------------------------------------------------
    observeFact: async (agentId, o, at, rules, runId) => {
      const sameKey = { agentId, scope: o.scope, domain: o.domain, type: o.type, key: o.key }
      // A write that changes nothing, to lock the key's rows first: concurrent observations of the
      // same key (Postgres runs writers together) then read and write one after the other, so no
      // confirmation is lost. SQLite's single writer already orders them.
      // The lock holds only rows that existed when it ran: when another writer's first sighting
      // committed in between, the read sees a row this transaction has not locked, so lock again
      // (and read again) until what was read is what is held.
      let locked = (await db.appFact.updateMany({ where: sameKey, data: { sources: { increment: 0 } } }))
        .count
      let rows = await db.appFact.findMany({ where: sameKey, orderBy: { id: 'asc' } })
      while (rows.length > locked) {
        locked = (await db.appFact.updateMany({ where: sameKey, data: { sources: { increment: 0 } } })).count
        rows = await db.appFact.findMany({ where: sameKey, orderBy: { id: 'asc' } })
      }
      const known = rows.map(toAppFact)
      const change = observeFact(known, o, rules)
      for (const u of change.updates) {
        const fact = known.find((f) => f.id === u.id) as AppFactRecord
        await db.appFact.update({
          where: { agentId_id: { agentId, id: u.id } },
          // A confirmation is a sighting; a contradiction only lowers the others' confidence.
          data:
            u.sources !== fact.sources
              ? { confidence: u.confidence, sources: u.sources, lastSeenAt: at }
              : { confidence: u.confidence },
        })
      }
      await dropFacts(agentId, change.prune)
      let id = known.find((f) => f.value === o.value)?.id
      if (change.insert) {
        id = randomUUID()
        await db.appFact.create({
          data: {
            ...change.insert,
            id,
            agentId,
            scope: o.scope,
            domain: o.domain,
            lastSeenAt: at,
            createdAt: at,
            extra: null,
          },
        })
      }
      const fact = toAppFact(
        await db.appFact.findUniqueOrThrow({ where: { agentId_id: { agentId, id: id as string } } }),
      )
      if (runId)
        await contribute(
          agentId,
          runId,
          { kind: 'FACT', id: fact.id, scope: o.scope, domain: o.domain },
          1,
          0,
        )
      return fact
    },
    listFacts: async (agentId, filter, window) =>
      (
        await db.appFact.findMany({
          where: factWhere(agentId, filter),
          orderBy: FACT_ORDER,
          skip: window.offset,
          take: window.limit,
        })
      ).map(toAppFact),
    countFacts: (agentId, filter) => db.appFact.count({ where: factWhere(agentId, filter) }),
    putFact: async (agentId, fact) => {
      const { scope, domain, type, key, value } = fact
      const data = { ...fact, agentId, extra: extraText(fact.extra) }
      const row = await db.appFact.upsert({
        where: { agentId_scope_domain_type_key_value: { agentId, scope, domain, type, key, value } },
        create: { ...data, id: randomUUID() },
        update: data,
      })
      return toAppFact(row)
    },
    deleteFact: async (agentId, id) => {
      const found = await db.appFact.findUnique({
        where: { agentId_id: { agentId, id } },
        select: { id: true },
      })
      if (!found) return false
      await dropFacts(agentId, [id])
      return true
    },

    // --- selectors ----------------------------------------------------------------------------
    observeSelector: async (agentId, o, at, runId) => {
      const unique = {
        agentId_scope_domain_element_selector: {
          agentId,
          scope: o.scope,
          domain: o.domain,
          element: o.element,
          selector: o.selector,
        },
      }
      // Locks the entry first (a write that changes nothing), as observeFact does its key's.
      const lock = async () =>
        (
          await db.knownSelector.updateMany({
            where: unique.agentId_scope_domain_element_selector,
            data: { successCount: { increment: 0 } },
          })
        ).count
      let locked = await lock()
      let row = await db.knownSelector.findUnique({ where: unique })
      // A row another writer created after the lock ran is read but not held: lock it, read again.
      if (row && locked === 0) {
        locked = await lock()
        row = await db.knownSelector.findUnique({ where: unique })
      }
      const current: SelectorRecord = row
        ? toSelector(row)
        : {
            id: randomUUID(),
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
      const next = observeSelector(current, o.outcome, at)
      const counters = {
        successCount: next.successCount,
        failureCount: next.failureCount,
        consecutiveFailures: next.consecutiveFailures,
        lastUsedAt: next.lastUsedAt,
      }
      const written = row
        ? await db.knownSelector.update({ where: unique, data: counters })
        : await db.knownSelector.create({ data: { ...next, extra: extraText(next.extra) } })
      if (runId)
        await contribute(
          agentId,
          runId,
          { kind: 'SELECTOR', id: written.id, scope: o.scope, domain: o.domain },
          o.outcome === 'SUCCESS' ? 1 : 0,
          o.outcome === 'FAILURE' ? 1 : 0,
        )
      return toSelector(written)
    },
    listSelectors: async (agentId, filter, window) =>
      // Ranked by core's order (volatile refs after stable ones), which SQL does not express: a
      // domain's selectors are few.
      (await db.knownSelector.findMany({ where: selectorWhere(agentId, filter) }))
        .map(toSelector)
        .sort(compareSelectors)
        .slice(window.offset, window.offset + window.limit),
    countSelectors: (agentId, filter) => db.knownSelector.count({ where: selectorWhere(agentId, filter) }),
    putSelector: async (agentId, selector) => {
      const { scope, domain, element } = selector
      const data = { ...selector, agentId, extra: extraText(selector.extra) }
      const row = await db.knownSelector.upsert({
        where: {
          agentId_scope_domain_element_selector: {
            agentId,
            scope,
            domain,
            element,
            selector: selector.selector,
          },
        },
        create: { ...data, id: randomUUID() },
        update: data,
      })
      return toSelector(row)
    },
    deleteSelector: async (agentId, id) => {
      const found = await db.knownSelector.findUnique({
        where: { agentId_id: { agentId, id } },
        select: { id: true },
      })
      if (!found) return false
      await dropSelectors(agentId, [id])
      return true
    },

    // --- hints --------------------------------------------------------------------------------
    listHints: async (agentId, scope) =>
      (
        await db.runHint.findMany({
          where: { agentId, scope },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        })
      )
        .map(toHint)
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || byId(a, b)),
    addHint: async (agentId, hint) =>
      toHint(
        await db.runHint.create({
          data: { ...hint, id: randomUUID(), agentId, extra: extraText(hint.extra) },
        }),
      ),
    updateHint: async (agentId, id, changes) => {
      const found = await db.runHint.findUnique({
        where: { agentId_id: { agentId, id } },
        select: { id: true },
      })
      if (!found) throw new NotFoundError('Hint', id)
      const row = await db.runHint.update({
        where: { agentId_id: { agentId, id } },
        data: {
          updatedAt: changes.updatedAt,
          ...(changes.text !== undefined ? { text: changes.text } : {}),
          ...(changes.extra !== undefined ? { extra: extraText(changes.extra) } : {}),
        },
      })
      return toHint(row)
    },
    deleteHint: async (agentId, id) => (await db.runHint.deleteMany({ where: { agentId, id } })).count > 0,

    // --- domains, scopes, the whole agent -----------------------------------------------------
    domains: async (agentId, scope) => {
      const inScope = scope === undefined ? {} : { scope }
      const summaries = new Map<string, RunDomainSummary>()
      const add = (
        s: string | null,
        domain: string,
        kind: 'runs' | 'trajectories' | 'runSessions' | 'facts' | 'selectors',
        count: number,
        at: Date | null,
      ) => {
        if (s === null || at === null) return
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
        summary[kind] += count
        if (at > summary.lastActivityAt) summary.lastActivityAt = at
        summaries.set(key, summary)
      }
      for (const g of await db.agentRun.groupBy({
        by: ['scope', 'domain'],
        where: { agentId, ...(scope === undefined ? { scope: { not: null } } : { scope }) },
        _count: { _all: true },
        _max: { updatedAt: true },
      }))
        add(g.scope, g.domain, 'runs', g._count._all, g._max.updatedAt)
      for (const g of await db.trajectory.groupBy({
        by: ['scope', 'domain'],
        where: { agentId, ...inScope },
        _count: { _all: true },
        _max: { recordedAt: true },
      }))
        add(g.scope, g.domain, 'trajectories', g._count._all, g._max.recordedAt)
      for (const g of await db.runSession.groupBy({
        by: ['scope', 'domain'],
        where: { agentId, ...inScope },
        _count: { _all: true },
        _max: { endedAt: true },
      }))
        add(g.scope, g.domain, 'runSessions', g._count._all, g._max.endedAt)
      for (const g of await db.appFact.groupBy({
        by: ['scope', 'domain'],
        where: { agentId, ...inScope },
        _count: { _all: true },
        _max: { lastSeenAt: true },
      }))
        add(g.scope, g.domain, 'facts', g._count._all, g._max.lastSeenAt)
      for (const g of await db.knownSelector.groupBy({
        by: ['scope', 'domain'],
        where: { agentId, ...inScope },
        _count: { _all: true },
        _max: { lastUsedAt: true },
      }))
        add(g.scope, g.domain, 'selectors', g._count._all, g._max.lastUsedAt)
      return [...summaries.values()].sort(
        (a, b) =>
          b.lastActivityAt.getTime() - a.lastActivityAt.getTime() ||
          (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0),
      )
    },
    forgetDomain: async (agentId, scope, domain) => {
      const runs = (await db.agentRun.deleteMany({ where: { agentId, scope, domain } })).count
      return { ...(await forgetMemory(agentId, { scope, domain }, false)), runs }
    },
    forgetScope: (agentId, scope) => forgetMemory(agentId, { scope }, true),
    snapshot: async (agentId, scope) => {
      const inScope = scope === undefined ? {} : { scope }
      const [runs, runSessions, trajectories, facts, selectors, hints] = await Promise.all([
        db.agentRun.findMany({ where: { agentId, ...inScope } }),
        db.runSession.findMany({ where: { agentId, ...inScope } }),
        db.trajectory.findMany({ where: { agentId, ...inScope } }),
        db.appFact.findMany({ where: { agentId, ...inScope } }),
        db.knownSelector.findMany({ where: { agentId, ...inScope } }),
        db.runHint.findMany({ where: { agentId, ...inScope } }),
      ])
      return {
        runs: runs.map(toRun).sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime() || byId(a, b)),
        runSessions: runSessions.map(toRunSession).sort(byId),
        trajectories: trajectories.map(toTrajectory).sort(byId),
        facts: facts.map(toAppFact).sort(byId),
        selectors: selectors.map(toSelector).sort(byId),
        hints: hints.map(toHint).sort(byId),
      } satisfies TrajectoryMemorySnapshot
    },
    restore: async (agentId, snapshot) => {
      // Records with the same id (or the same natural key) are replaced, as the in-memory store's are.
      for (const part of chunks(snapshot.runs)) {
        await db.agentRun.deleteMany({ where: { agentId, runId: { in: part.map((r) => r.id) } } })
        await db.agentRun.createMany({ data: part.map((r) => runData(agentId, r)) })
      }
      for (const part of chunks(snapshot.runSessions)) {
        await db.runSession.deleteMany({ where: { agentId, id: { in: part.map((e) => e.id) } } })
        await db.runSession.createMany({
          data: part.map(({ agentId: _, ...e }) => ({ ...e, agentId, extra: extraText(e.extra) })),
        })
      }
      for (const part of chunks(snapshot.trajectories)) {
        await db.trajectory.deleteMany({ where: { agentId, id: { in: part.map((t) => t.id) } } })
        await db.trajectory.createMany({
          data: part.map(({ agentId: _, ...t }) => trajectoryData(agentId, t)),
        })
        const words = part.flatMap(({ agentId: _, ...t }) => wordRows(agentId, t))
        for (const rows of chunks(words)) await db.trajectoryWord.createMany({ data: rows })
      }
      for (const f of snapshot.facts) {
        const { agentId: _, ...fact } = f
        await db.appFact.deleteMany({
          where: {
            agentId,
            OR: [
              { id: fact.id },
              { scope: fact.scope, domain: fact.domain, type: fact.type, key: fact.key, value: fact.value },
            ],
          },
        })
        await db.appFact.create({ data: { ...fact, agentId, extra: extraText(fact.extra) } })
      }
      for (const s of snapshot.selectors) {
        const { agentId: _, ...sel } = s
        await db.knownSelector.deleteMany({
          where: {
            agentId,
            OR: [
              { id: sel.id },
              { scope: sel.scope, domain: sel.domain, element: sel.element, selector: sel.selector },
            ],
          },
        })
        await db.knownSelector.create({ data: { ...sel, agentId, extra: extraText(sel.extra) } })
      }
      for (const part of chunks(snapshot.hints)) {
        await db.runHint.deleteMany({ where: { agentId, id: { in: part.map((h) => h.id) } } })
        await db.runHint.createMany({
          data: part.map(({ agentId: _, ...h }) => ({ ...h, agentId, extra: extraText(h.extra) })),
        })
      }
    },
    clear: async (agentId) => {
      const runs = (await db.agentRun.deleteMany({ where: { agentId } })).count
      return { ...(await forgetMemory(agentId, {}, true)), runs }
    },
  }
  return repository
}
