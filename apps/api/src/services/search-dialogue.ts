import { EPISODE_GAP_MS, episodes } from '@engram/core'
import type { Database } from '@engram/store-sqlite'

/** Candidates' turns, as the dialogue reads need them. */
export interface DialogueTurn {
  id: string
  sessionId?: string
  timestamp: Date
}

/** Episodes are split within this many of a conversation's turns around the candidates at most. */
const MAX_EPISODE_SCAN = 5_000

/** A timestamp as SQLite holds it for Prisma (milliseconds, or ISO text), as a Date. */
export function storedTime(value: number | bigint | string): Date | null {
  const time = typeof value === 'string' && !/^\d+$/.test(value) ? new Date(value) : new Date(Number(value))
  return Number.isNaN(time.getTime()) ? null : time
}

/**
 * Each candidate turn's neighbours up to `reach` each side, nearest first, stopping at a pause
 * longer than EPISODE_GAP_MS: two seeks per candidate on the (sessionId, timestamp, id) index in
 * one statement, not a window over whole conversations.
 */
export async function neighbours(
  db: Database,
  turns: DialogueTurn[],
  reach: number,
): Promise<Map<string, { id: string; distance: number; time: number }[]>> {
  const ids = turns.map((c) => Number(c.id))
  const marks = ids.map(() => '?').join(',')
  const side = (direction: 'before' | 'after') => {
    const [cmp, order] = direction === 'before' ? ['<', 'DESC'] : ['>', 'ASC']
    return `SELECT c."id" AS origin, n."id" AS id, n."timestamp" AS ts, '${direction}' AS side
        FROM "Message" c JOIN "Message" n ON n."id" IN (
          SELECT p."id" FROM "Message" p WHERE p."sessionId" = c."sessionId"
            AND (p."timestamp", p."id") ${cmp} (c."timestamp", c."id")
            ORDER BY p."timestamp" ${order}, p."id" ${order} LIMIT ${reach})
       WHERE c."id" IN (${marks})`
  }
  const rows = await db.$queryRawUnsafe<
    { origin: number | bigint; id: number | bigint; ts: number | bigint | string; side: string }[]
  >(`${side('before')} UNION ALL ${side('after')}`, ...ids, ...ids)
  const timeOf = new Map(turns.map((c) => [c.id, c.timestamp.getTime()]))
  const grouped = new Map<
    string,
    { before: { id: string; t: number }[]; after: { id: string; t: number }[] }
  >()
  for (const row of rows) {
    const origin = String(row.origin)
    const entry = grouped.get(origin) ?? { before: [], after: [] }
    grouped.set(origin, entry)
    const t = storedTime(row.ts)?.getTime() ?? 0
    ;(row.side === 'before' ? entry.before : entry.after).push({ id: String(row.id), t })
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
 * conversation; a turn past it is its own episode).
 */
export async function episodesOf(
  db: Database,
  points: { sessionId: string; time: number }[],
): Promise<Map<string, string>> {
  const bySession = new Map<string, number[]>()
  for (const { sessionId, time } of points) {
    const list = bySession.get(sessionId) ?? []
    list.push(time)
    bySession.set(sessionId, list)
  }
  const out = new Map<string, string>()
  for (const [sessionId, times] of bySession) {
    const rows = await db.message.findMany({
      where: {
        sessionId,
        timestamp: { gte: new Date(Math.min(...times)), lte: new Date(Math.max(...times)) },
      },
      orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
      select: { id: true, timestamp: true },
      take: MAX_EPISODE_SCAN,
    })
    for (const [id, key] of episodes(rows.map((r) => ({ id: String(r.id), timestamp: r.timestamp }))))
      out.set(id, `${sessionId}\u0000${key}`)
  }
  return out
}
