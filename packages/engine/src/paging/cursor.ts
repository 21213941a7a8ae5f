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

/**
 * Which rows of a (timestamp, id)-ordered list a page may hold: strictly after `after` and strictly
 * before `before`, both in ascending (timestamp, id) order. Adapters turn it into their query.
 */
export interface TimeIdRange {
  after?: TimeIdCursor
  before?: TimeIdCursor
}

/** One page of a (timestamp, id)-ordered list, as a repository reads it. */
export interface TimeIdPageQuery {
  range: TimeIdRange
  direction: 'asc' | 'desc'
  take: number
}

function compareTimeId(a: TimeIdCursor, b: TimeIdCursor): number {
  return a.timestamp.getTime() - b.timestamp.getTime() || a.id - b.id
}

/** Whether a row lies inside a range (the in-memory adapters filter with it). */
export function inTimeIdRange(row: TimeIdCursor, range: TimeIdRange): boolean {
  return (
    (!range.after || compareTimeId(row, range.after) > 0) &&
    (!range.before || compareTimeId(row, range.before) < 0)
  )
}

/** Sorts rows in (timestamp, id) order, ascending or descending. */
export function sortByTimeId<T extends TimeIdCursor>(rows: T[], direction: 'asc' | 'desc'): T[] {
  return rows.sort((a, b) => (direction === 'asc' ? compareTimeId(a, b) : compareTimeId(b, a)))
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
 * Runs a (timestamp, id)-ordered page query for a Relay connection: the client's `after`/`before`
 * cursors (in the list's own order) become a range in ascending (timestamp, id) order, and `fetch`
 * reads that range in the direction and size the page needs.
 */
export function timeIdPage<T>(
  params: { before?: string; after?: string; limit: number; inverted: boolean },
  order: ListOrder,
  fetch: (query: TimeIdPageQuery) => Promise<T[]>,
): Promise<T[]> {
  const newestFirst = order === 'NEWEST_FIRST'
  const range: TimeIdRange = {}
  // Both cursors may bound the same side (after and before of a newest-first list): keep the tighter.
  const bound = (side: 'after' | 'before', cursor: TimeIdCursor) => {
    const current = range[side]
    const tighter =
      side === 'after'
        ? compareTimeId(cursor, current ?? cursor) >= 0
        : compareTimeId(cursor, current ?? cursor) <= 0
    if (!current || tighter) range[side] = cursor
  }
  if (params.after) bound(newestFirst ? 'before' : 'after', decodeCursor(params.after, 'after'))
  if (params.before) bound(newestFirst ? 'after' : 'before', decodeCursor(params.before, 'before'))
  const ascending = newestFirst === params.inverted
  return fetch({ range, direction: ascending ? 'asc' : 'desc', take: params.limit })
}
