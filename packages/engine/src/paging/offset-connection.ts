import type { Limits } from '@engram/core'
import { assertOffsetPage, type PageArgs } from './cursor.ts'

const OFFSET_CURSOR_PREFIX = 'OffsetConnection:'

/** The cursor of the row at `offset`, spelled as the GraphQL door's Relay plugin spells it. */
export function offsetCursor(offset: number): string {
  return Buffer.from(`${OFFSET_CURSOR_PREFIX}${offset}`).toString('base64')
}

function offsetOf(cursor: string): number {
  return Number.parseInt(
    Buffer.from(cursor, 'base64').toString('utf8').slice(OFFSET_CURSOR_PREFIX.length),
    10,
  )
}

export interface OffsetConnection<T> {
  totalCount: number
  pageInfo: {
    hasNextPage: boolean
    hasPreviousPage: boolean
    startCursor: string | null
    endCursor: string | null
  }
  nodes: T[]
}

/**
 * One page of an offset-paged list (sessions, memories, knowledge): first/after/last/before as
 * Relay's offset connections read them, so a cursor from either door pages the other's list the
 * same. Arguments are checked first (page size at most maxPageSize, cursors this API returned).
 */
export async function offsetConnection<T>(
  args: PageArgs,
  limits: Limits,
  totalCount: number,
  fetch: (page: { offset: number; limit: number }) => Promise<T[]>,
  defaultSize = 50,
): Promise<OffsetConnection<T>> {
  assertOffsetPage(args, limits)
  const maxSize = limits.maxPageSize
  const { first, last, after, before } = args
  const beforeOffset = before ? offsetOf(before) : Number.POSITIVE_INFINITY
  let startOffset = after ? offsetOf(after) + 1 : 0
  let endOffset = Math.max(Math.min(beforeOffset, Math.max(totalCount, 0)), startOffset)
  if (first != null) endOffset = Math.min(endOffset, startOffset + first)
  if (last != null) startOffset = Math.max(startOffset, endOffset - Math.min(last, maxSize))
  const size = first == null && last == null ? defaultSize : endOffset - startOffset
  endOffset = Math.min(endOffset, startOffset + Math.min(size, maxSize))
  const expected = endOffset - startOffset
  // One row more than the page: whether there is a next page, without a second count.
  const rows = await fetch({ offset: startOffset, limit: expected + 1 })
  const nodes = rows.slice(0, expected)
  return {
    totalCount,
    pageInfo: {
      hasNextPage: rows.length > expected,
      hasPreviousPage: startOffset > 0,
      startCursor: offsetCursor(startOffset),
      endCursor: offsetCursor(startOffset + nodes.length - 1),
    },
    nodes,
  }
}
