import { type Limits, ValidationError } from '@engram/core'

/**
 * Cursors for lists ordered by (timestamp, id): opaque to clients, stable when timestamps repeat
 * (imported histories often share one).
 */
export interface TimeIdCursor {
  timestamp: Date
  id: number
}

export function encodeCursor(item: { timestamp: Date; id: string | number }): string {
  return Buffer.from(`${item.timestamp.getTime()}:${item.id}`, 'utf8').toString('base64url')
}

export function decodeCursor(cursor: string, field: string): TimeIdCursor {
  const match = /^(-?\d{1,15}):(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!match) throw new ValidationError([{ field, message: 'is not a cursor returned by this API' }])
  return { timestamp: new Date(Number(match[1])), id: Number(match[2]) }
}

/** Prisma `where` for rows strictly after (or before) a cursor in (timestamp, id) order. */
export function beyondCursor(cursor: TimeIdCursor, direction: 'after' | 'before') {
  const cmp = direction === 'after' ? 'gt' : 'lt'
  return {
    OR: [
      { timestamp: { [cmp]: cursor.timestamp } },
      { timestamp: cursor.timestamp, id: { [cmp]: cursor.id } },
    ],
  }
}

export interface PageArgs {
  first?: number | null
  last?: number | null
  after?: string | null
  before?: string | null
}

/** Page sizes are bounded: an explicit, typed error rather than silently clamping. */
export function assertPageSize(args: PageArgs, limits: Limits): void {
  for (const field of ['first', 'last'] as const) {
    const value = args[field]
    if (value != null && (value < 0 || value > limits.maxPageSize)) {
      throw new ValidationError([
        { field, message: `must be between 0 and ${limits.maxPageSize}`, limit: limits.maxPageSize },
      ])
    }
  }
}

const OFFSET_CURSOR = /^OffsetConnection:(\d{1,9})$/

/**
 * Page sizes and offset cursors (Pothos' `OffsetConnection:N`, base64) of an offset-paged list. Checked
 * before Pothos decodes them: its own failure ("Invalid base64 string") is untyped and was masked.
 */
export function assertOffsetPage(args: PageArgs, limits: Limits): void {
  assertPageSize(args, limits)
  for (const field of ['after', 'before'] as const) {
    const cursor = args[field]
    if (cursor == null) continue
    const decoded = /^[A-Za-z0-9+/=_-]{1,64}$/.test(cursor)
      ? Buffer.from(cursor, 'base64').toString('utf8')
      : ''
    if (!OFFSET_CURSOR.test(decoded))
      throw new ValidationError([{ field, message: 'is not a cursor returned by this API' }])
  }
}

export type ListOrder = 'OLDEST_FIRST' | 'NEWEST_FIRST'

/**
 * Runs a (timestamp, id)-ordered page query for a Relay connection. `fetch` receives the extra
 * `where`, the sort direction and how many rows to take.
 */
export function timeIdPage<T>(
  params: { before?: string; after?: string; limit: number; inverted: boolean },
  order: ListOrder,
  fetch: (where: Record<string, unknown>, direction: 'asc' | 'desc', take: number) => Promise<T[]>,
): Promise<T[]> {
  const newestFirst = order === 'NEWEST_FIRST'
  const conditions: Record<string, unknown>[] = []
  if (params.after)
    conditions.push(beyondCursor(decodeCursor(params.after, 'after'), newestFirst ? 'before' : 'after'))
  if (params.before)
    conditions.push(beyondCursor(decodeCursor(params.before, 'before'), newestFirst ? 'after' : 'before'))
  const ascending = newestFirst === params.inverted
  return fetch(conditions.length ? { AND: conditions } : {}, ascending ? 'asc' : 'desc', params.limit)
}
