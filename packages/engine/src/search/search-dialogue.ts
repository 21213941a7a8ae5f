import { type ConversationTimeline, EPISODE_GAP_MS, episodes, type TimelineNeighbours } from '@engram/core'
import type { RecallSources, SpanTurn, TurnBeside } from '../ports/recall-sources.ts'

/** What dialogue context reads: the turns beside candidates, and stretches of conversations. */
export type DialogueSources = Pick<RecallSources, 'turnsBeside' | 'turnSpans'> & {
  /**
   * Each turn's neighbours as the timeline holds them, nearest first each side, with no row
   * objects or dates in between (turnsNear reads them directly); null when the timeline is not
   * held or does not hold one of the turns (turnsBeside then answers).
   */
  nearby?: (turnIds: readonly string[], reach: number) => Map<string, TimelineNeighbours> | null
}

/**
 * Dialogue context's reads answered from the agent's timeline, held beside its messages' lexical
 * index and brought up to date with it when search found its candidates (issue 18): no statement,
 * where the store's answer was a seek per candidate and side. A read naming a turn the timeline
 * does not hold (written after that catch-up) goes to the store whole, so the answer is the same.
 */
export function timelineSources(
  store: DialogueSources,
  timelineOf: () => ConversationTimeline | null,
  /** Offer `nearby` (hybridmsg18's path; CandidateRows `pool`), or only the store's two reads. */
  direct = false,
): DialogueSources {
  return {
    ...(direct
      ? {
          nearby(turnIds: readonly string[], reach: number) {
            const timeline = timelineOf()
            if (!timeline) return null
            const out = new Map<string, TimelineNeighbours>()
            for (const id of turnIds) {
              const near = timeline.beside(id, reach)
              if (!near) return null
              out.set(id, near)
            }
            return out
          },
        }
      : {}),
    async turnsBeside(turnIds, reach) {
      const timeline = timelineOf()
      if (!timeline) return store.turnsBeside(turnIds, reach)
      const out: TurnBeside[] = []
      for (const origin of turnIds) {
        const near = timeline.beside(origin, reach)
        if (!near) return store.turnsBeside(turnIds, reach)
        for (const turn of near.before)
          out.push({ origin, id: turn.id, timestamp: new Date(turn.time), side: 'before' })
        for (const turn of near.after)
          out.push({ origin, id: turn.id, timestamp: new Date(turn.time), side: 'after' })
      }
      return out
    },
    async turnSpans(spans, limit) {
      const timeline = timelineOf()
      if (!timeline) return store.turnSpans(spans, limit)
      const out: SpanTurn[] = []
      for (const { sessionId, fromTurnId, toTurnId } of spans) {
        const turns = timeline.span(sessionId, fromTurnId, toTurnId, limit)
        if (!turns) return store.turnSpans(spans, limit)
        for (const turn of turns) out.push({ sessionId, id: turn.id, timestamp: new Date(turn.time) })
      }
      return out
    },
  }
}

/** Candidates' turns, as the dialogue reads need them. */
export interface DialogueTurn {
  id: string
  sessionId?: string
  timestamp: Date
}

/** Episodes are split within this many of a conversation's turns around the candidates at most. */
const MAX_EPISODE_SCAN = 5_000

/** Turns read around candidates: consecutive in their conversation, earliest first, with their times. */
interface TimedTurn {
  id: string
  time: number
}

/** Each candidate's neighbours, and the runs of consecutive turns those reads saw. */
export interface TurnsNear {
  /** Candidate id → its neighbours up to `reach` each side, nearest first, stopping at a long pause. */
  near: Map<string, { id: string; distance: number; time: number }[]>
  /**
   * Per candidate, the turns read around it with it, in conversation order (the turn past a long
   * pause included): each two in a row are next to each other in the conversation, so the pause
   * between them is known without reading the conversation again (episodesAround).
   */
  runs: { sessionId: string; turns: TimedTurn[] }[]
}

/**
 * Each candidate turn's neighbours up to `reach` each side, nearest first, stopping at a pause
 * longer than EPISODE_GAP_MS: the store reads `reach` turns each side of each candidate (on SQLite
 * two seeks per candidate in one statement), not a window over whole conversations.
 */
export async function neighbours(
  recall: DialogueSources,
  turns: DialogueTurn[],
  reach: number,
): Promise<Map<string, { id: string; distance: number; time: number }[]>> {
  return (await turnsNear(recall, turns, reach)).near
}

/** The turns beside some ids, read ahead (SearchService starts it while the candidates' rows are read). */
export interface BesideRead {
  ids: ReadonlySet<string>
  reach: number
  rows: Promise<TurnBeside[]>
}

/**
 * neighbours(), with the runs of consecutive turns its read saw (what episodesAround needs). A
 * read already started for every one of the turns at this reach is used instead of a new one.
 */
export async function turnsNear(
  recall: DialogueSources,
  turns: DialogueTurn[],
  reach: number,
  ahead: BesideRead | null = null,
): Promise<TurnsNear> {
  const held = recall.nearby?.(
    turns.map((c) => c.id),
    reach,
  )
  if (held) return nearFromTimeline(turns, held)
  const origins = new Map(turns.map((c) => [c.id, c]))
  const rows =
    ahead && ahead.reach === reach && turns.every((c) => ahead.ids.has(c.id))
      ? (await ahead.rows).filter((row) => origins.has(row.origin))
      : await recall.turnsBeside(
          turns.map((c) => c.id),
          reach,
        )
  const grouped = new Map<
    string,
    { before: { id: string; t: number }[]; after: { id: string; t: number }[] }
  >()
  for (const row of rows) {
    const entry = grouped.get(row.origin) ?? { before: [], after: [] }
    grouped.set(row.origin, entry)
    const t = row.timestamp?.getTime() ?? 0
    ;(row.side === 'before' ? entry.before : entry.after).push({ id: row.id, t })
  }
  const near = new Map<string, { id: string; distance: number; time: number }[]>()
  const runs: TurnsNear['runs'] = []
  for (const [origin, { before, after }] of grouped) {
    const candidate = origins.get(origin)
    const start = candidate?.timestamp.getTime() ?? 0
    const list: { id: string; distance: number; time: number }[] = []
    // Nearest first on each side; a long pause ends the exchange.
    before.sort((a, b) => b.t - a.t || Number(b.id) - Number(a.id))
    after.sort((a, b) => a.t - b.t || Number(a.id) - Number(b.id))
    for (const sideTurns of [before, after]) {
      let previous = start
      for (const [index, turn] of sideTurns.entries()) {
        if (Math.abs(turn.t - previous) > EPISODE_GAP_MS) break
        previous = turn.t
        list.push({ id: turn.id, distance: index + 1, time: turn.t })
      }
    }
    near.set(origin, list)
    if (candidate?.sessionId)
      runs.push({
        sessionId: candidate.sessionId,
        turns: [
          ...before.map((b) => ({ id: b.id, time: b.t })).reverse(),
          { id: origin, time: start },
          ...after.map((a) => ({ id: a.id, time: a.t })),
        ],
      })
  }
  return { near, runs }
}

/**
 * turnsNear's answer from the timeline's neighbours: they come nearest first each side, in the
 * (time, id) order turnsNear sorts the store's rows into, so the lists are built as they are (a
 * candidate with no turn beside it has no entry, as no row named it).
 */
function nearFromTimeline(turns: DialogueTurn[], held: Map<string, TimelineNeighbours>): TurnsNear {
  const near: TurnsNear['near'] = new Map()
  const runs: TurnsNear['runs'] = []
  for (const candidate of turns) {
    const beside = held.get(candidate.id)
    if (!beside || beside.before.length + beside.after.length === 0 || near.has(candidate.id)) continue
    const start = candidate.timestamp.getTime()
    const list: { id: string; distance: number; time: number }[] = []
    for (const sideTurns of [beside.before, beside.after]) {
      let previous = start
      for (let index = 0; index < sideTurns.length; index++) {
        const turn = sideTurns[index] as { id: string; time: number }
        if (Math.abs(turn.time - previous) > EPISODE_GAP_MS) break
        previous = turn.time
        list.push({ id: turn.id, distance: index + 1, time: turn.time })
      }
    }
    near.set(candidate.id, list)
    if (candidate.sessionId)
      runs.push({
        sessionId: candidate.sessionId,
        turns: [...beside.before].reverse().concat({ id: candidate.id, time: start }, beside.after),
      })
  }
  return { near, runs }
}

/**
 * The episode of each turn in the span the points cover, per conversation: split at pauses
 * longer than EPISODE_GAP_MS, read over that span (at most MAX_EPISODE_SCAN turns per
 * conversation; a turn past it is its own episode). Every conversation's span in one read.
 * Search's path before episodesAround (which gives the points the same episodes from fewer
 * reads), kept as the reference it is checked and measured against.
 */
export async function episodesOf(
  recall: DialogueSources,
  points: { sessionId: string; id: string; time: number }[],
): Promise<Map<string, string>> {
  // Each conversation's span runs from its earliest point's turn to its latest's.
  const spans = new Map<string, { first: { id: string; time: number }; last: { id: string; time: number } }>()
  for (const point of points) {
    const span = spans.get(point.sessionId)
    if (!span) spans.set(point.sessionId, { first: point, last: point })
    else {
      if (point.time < span.first.time) span.first = point
      if (point.time > span.last.time) span.last = point
    }
  }
  const rows = await recall.turnSpans(
    [...spans].map(([sessionId, { first, last }]) => ({
      sessionId,
      fromTurnId: first.id,
      toTurnId: last.id,
    })),
    MAX_EPISODE_SCAN,
  )
  const bySession = new Map<string, { id: string; timestamp: Date }[]>()
  for (const row of rows) {
    const list = bySession.get(row.sessionId) ?? []
    list.push(row)
    bySession.set(row.sessionId, list)
  }
  const out = new Map<string, string>()
  for (const [sessionId, turns] of bySession) {
    // Oldest first per conversation, as the store returned each span (kept if it interleaved them).
    turns.sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime() || Number(a.id) - Number(b.id))
    for (const [id, key] of episodes(turns)) out.set(id, `${sessionId}\u0000${key}`)
  }
  return out
}

/** A turn search scores, in its conversation, at its stored time. */
export interface EpisodePoint {
  sessionId: string
  id: string
  time: number
}

/**
 * The episodes of the points, as episodesOf gives them, without reading whole spans. Two points
 * of a conversation, next in time order, share an episode unless a pause longer than gapMs lies
 * between them; when they are at most gapMs apart no pause between can be longer, and the turns
 * read beside the candidates (`runs`) show most other pauses. Only the stretches between points
 * that neither answers are read (turnSpans, one statement). `points` set each conversation's span
 * as in episodesOf (the candidates that scored and their neighbours); `others` (the other
 * candidates) get their episode when they fall inside a span, as the span's read gave them one.
 * Only the points' and others' episodes are returned: search scores no other turn. One difference
 * from episodesOf: a span longer than MAX_EPISODE_SCAN turns, whose turns past the limit episodesOf
 * left without an episode, gets the episodes of the stretches read.
 */
export async function episodesAround(
  recall: DialogueSources,
  points: readonly EpisodePoint[],
  runs: TurnsNear['runs'],
  others: readonly EpisodePoint[] = [],
  gapMs: number = EPISODE_GAP_MS,
): Promise<Map<string, string>> {
  const bySession = new Map<string, Map<string, EpisodePoint>>()
  for (const point of points) {
    if (!Number.isFinite(point.time)) continue
    const session = bySession.get(point.sessionId) ?? new Map<string, EpisodePoint>()
    bySession.set(point.sessionId, session)
    session.set(point.id, point)
  }
  const ordered = new Map<string, EpisodePoint[]>()
  for (const [sessionId, session] of bySession) {
    const list = [...session.values()]
    const first = Math.min(...list.map((p) => p.time))
    const last = Math.max(...list.map((p) => p.time))
    for (const other of others)
      if (
        other.sessionId === sessionId &&
        other.time >= first &&
        other.time <= last &&
        !session.has(other.id)
      )
        list.push(other)
    ordered.set(
      sessionId,
      list.sort((a, b) => a.time - b.time || Number(a.id) - Number(b.id)),
    )
  }
  // What the reads beside the candidates show: turns joined by short pauses (one run of the
  // conversation: union-find), and the long pauses' times per conversation.
  const parent = new Map<string, string>()
  const root = (id: string): string => {
    let at = id
    for (let up = parent.get(at); up !== undefined && up !== at; up = parent.get(at)) {
      parent.set(at, parent.get(up) ?? up)
      at = up
    }
    return at
  }
  const pauses = new Map<string, [number, number][]>()
  for (const { sessionId, turns } of runs)
    for (let i = 1; i < turns.length; i++) {
      const a = turns[i - 1] as TimedTurn
      const b = turns[i] as TimedTurn
      if (b.time - a.time > gapMs) {
        const list = pauses.get(sessionId) ?? []
        list.push([a.time, b.time])
        pauses.set(sessionId, list)
      } else parent.set(root(b.id), root(a.id))
    }
  // Whether a long pause lies between each point and the next: known, or to be read.
  const split = new Map<string, boolean>()
  const unknown: { sessionId: string; from: EpisodePoint; to: EpisodePoint }[] = []
  for (const [sessionId, list] of ordered)
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1] as EpisodePoint
      const b = list[i] as EpisodePoint
      if (b.time - a.time <= gapMs || root(a.id) === root(b.id)) split.set(b.id, false)
      else if ((pauses.get(sessionId) ?? []).some(([from, to]) => a.time <= from && to <= b.time))
        split.set(b.id, true)
      else unknown.push({ sessionId, from: a, to: b })
    }
  if (unknown.length > 0) {
    const read = await recall.turnSpans(
      unknown.map(({ sessionId, from, to }) => ({ sessionId, fromTurnId: from.id, toTurnId: to.id })),
      MAX_EPISODE_SCAN,
    )
    const times = new Map<string, Map<string, number>>()
    for (const row of read) {
      const session = times.get(row.sessionId) ?? new Map<string, number>()
      times.set(row.sessionId, session)
      session.set(row.id, row.timestamp.getTime())
    }
    for (const { sessionId, from, to } of unknown) {
      const between = [...(times.get(sessionId) ?? new Map<string, number>()).values()]
        .filter((t) => t >= from.time && t <= to.time)
        .sort((x, y) => x - y)
      let paused = false
      for (let i = 1; i < between.length && !paused; i++)
        paused = (between[i] as number) - (between[i - 1] as number) > gapMs
      split.set(to.id, paused)
    }
  }
  const out = new Map<string, string>()
  for (const [sessionId, list] of ordered) {
    let key: string | null = null
    for (const point of list) {
      if (key === null || split.get(point.id)) key = point.id
      out.set(point.id, `${sessionId}\u0000${key}`)
    }
  }
  return out
}
