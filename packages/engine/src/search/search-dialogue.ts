import { EPISODE_GAP_MS, episodes } from '@engram/core'
import type { RecallSources } from '../ports/recall-sources.ts'

/** Candidates' turns, as the dialogue reads need them. */
export interface DialogueTurn {
  id: string
  sessionId?: string
  timestamp: Date
}

/** Episodes are split within this many of a conversation's turns around the candidates at most. */
const MAX_EPISODE_SCAN = 5_000

/**
 * Each candidate turn's neighbours up to `reach` each side, nearest first, stopping at a pause
 * longer than EPISODE_GAP_MS: the store reads `reach` turns each side of each candidate (on SQLite
 * two seeks per candidate in one statement), not a window over whole conversations.
 */
export async function neighbours(
  recall: RecallSources,
  turns: DialogueTurn[],
  reach: number,
): Promise<Map<string, { id: string; distance: number; time: number }[]>> {
  const rows = await recall.turnsBeside(
    turns.map((c) => c.id),
    reach,
  )
  const timeOf = new Map(turns.map((c) => [c.id, c.timestamp.getTime()]))
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
  const out = new Map<string, { id: string; distance: number; time: number }[]>()
  for (const [origin, { before, after }] of grouped) {
    const start = timeOf.get(origin) ?? 0
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
    out.set(origin, list)
  }
  return out
}

/**
 * The episode of each turn in the span the points cover, per conversation: split at pauses
 * longer than EPISODE_GAP_MS, read over that span (at most MAX_EPISODE_SCAN turns per
 * conversation; a turn past it is its own episode). Every conversation's span in one read.
 */
export async function episodesOf(
  recall: RecallSources,
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
