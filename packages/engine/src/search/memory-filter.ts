import { type FieldIssue, type MemoryCategory, ValidationError } from '@engram/core'

// The memory filter search accepts, checked the way the memory items' own listing checks it (the
// same limits and messages), so a filter is refused alike whichever operation it reaches.

export const MAX_FILTER_TAGS = 20
export const MAX_FILTER_TAG_CHARS = 64
export const MAX_FILTER_USER_ID_CHARS = 128
/** A substring filter longer than any memory can match nothing; bounded like a search query. */
export const MAX_FILTER_SEARCH_CHARS = 2_000

export interface MemoryFilter {
  userId?: string | null
  categories?: MemoryCategory[] | null
  tags?: string[] | null
  minImportance?: number | null
  createdAfter?: Date | null
  createdBefore?: Date | null
  /** Valid at this time (default now). */
  asOf?: Date | null
  /** Superseded and expired items too. */
  includeSuperseded?: boolean | null
  pinned?: boolean | null
  search?: string | null
}

export function assertMemoryFilter(filter: MemoryFilter): void {
  const issues: FieldIssue[] = []
  if (filter.minImportance != null && !(filter.minImportance >= 0 && filter.minImportance <= 1))
    issues.push({ field: 'filter.minImportance', message: 'must be between 0 and 1', limit: '0..1' })
  if ((filter.tags?.length ?? 0) > MAX_FILTER_TAGS)
    issues.push({ field: 'filter.tags', message: `at most ${MAX_FILTER_TAGS} tags`, limit: MAX_FILTER_TAGS })
  for (const [i, tag] of (filter.tags ?? []).entries())
    if (tag.length > MAX_FILTER_TAG_CHARS)
      issues.push({
        field: `filter.tags.${i}`,
        message: `at most ${MAX_FILTER_TAG_CHARS} characters`,
        limit: MAX_FILTER_TAG_CHARS,
      })
  if ((filter.search?.length ?? 0) > MAX_FILTER_SEARCH_CHARS)
    issues.push({
      field: 'filter.search',
      message: `at most ${MAX_FILTER_SEARCH_CHARS} characters`,
      limit: MAX_FILTER_SEARCH_CHARS,
    })
  if ((filter.userId?.length ?? 0) > MAX_FILTER_USER_ID_CHARS)
    issues.push({
      field: 'filter.userId',
      message: `at most ${MAX_FILTER_USER_ID_CHARS} characters`,
      limit: MAX_FILTER_USER_ID_CHARS,
    })
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter > filter.createdBefore)
    issues.push({ field: 'filter.createdAfter', message: 'must not be after filter.createdBefore' })
  if (issues.length) throw new ValidationError(issues)
}
