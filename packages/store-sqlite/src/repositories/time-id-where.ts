import type { TimeIdCursor, TimeIdRange } from '@engram/engine'

/** Prisma `where` for rows strictly after (or before) a cursor in (timestamp, id) order. */
function beyond(cursor: TimeIdCursor, side: 'after' | 'before') {
  const cmp = side === 'after' ? 'gt' : 'lt'
  return {
    OR: [
      { timestamp: { [cmp]: cursor.timestamp } },
      { timestamp: cursor.timestamp, id: { [cmp]: cursor.id } },
    ],
  }
}

/** The engine's (timestamp, id) range as a Prisma `where` fragment to spread into a query. */
export function timeIdWhere(range: TimeIdRange): { AND?: ReturnType<typeof beyond>[] } {
  const conditions = [
    ...(range.after ? [beyond(range.after, 'after')] : []),
    ...(range.before ? [beyond(range.before, 'before')] : []),
  ]
  return conditions.length ? { AND: conditions } : {}
}
