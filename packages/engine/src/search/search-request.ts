import { type FieldIssue, type Limits, type MemorySettings, ValidationError } from '@engram/core'
import {
  DEFAULT_CONTEXT_TURNS,
  DEFAULT_MENTIONED_TIMES,
  DEFAULT_SEARCH_WEIGHTS,
  MAX_CONTEXT_TURNS,
  MAX_WINDOW_DAYS,
  type SearchOptions,
  type SearchScope,
  type SearchWeights,
} from './search-types.ts'

export const MAX_QUERY_CHARS = 2_000

/**
 * A search's options checked (every bad field reported at once) and completed with the agent's
 * settings: what the ranking runs on.
 */
export function searchRequest(
  query: string,
  options: SearchOptions,
  settings: MemorySettings,
  limits: Pick<Limits, 'maxSearchLimit'>,
) {
  const issues: FieldIssue[] = []
  if (query.trim().length === 0 || query.length > MAX_QUERY_CHARS)
    issues.push({
      field: 'query',
      message: `must be 1 to ${MAX_QUERY_CHARS} characters`,
      limit: MAX_QUERY_CHARS,
    })
  const limit = options.limit ?? settings.recallTopK
  if (!Number.isInteger(limit) || limit < 1 || limit > limits.maxSearchLimit)
    issues.push({
      field: 'limit',
      message: `must be an integer from 1 to ${limits.maxSearchLimit}`,
      limit: limits.maxSearchLimit,
    })
  const scopes = [...new Set(options.scopes?.length ? options.scopes : (['MESSAGES'] as SearchScope[]))]
  const weights: SearchWeights = {
    ...DEFAULT_SEARCH_WEIGHTS,
    ...Object.fromEntries(Object.entries(options.weights ?? {}).filter(([, v]) => v != null)),
  }
  for (const [field, value] of Object.entries(weights)) {
    if (!(value >= 0 && value <= 1))
      issues.push({ field: `weights.${field}`, message: 'must be between 0 and 1', limit: '0..1' })
  }
  const strategy = options.strategy ?? 'HYBRID'
  const mmrLambda = options.mmrLambda ?? (strategy === 'HYBRID' ? settings.mmrLambda : 1)
  if (!(mmrLambda >= 0 && mmrLambda <= 1))
    issues.push({ field: 'mmrLambda', message: 'must be between 0 and 1', limit: '0..1' })
  if (options.threshold != null && !Number.isFinite(options.threshold))
    issues.push({ field: 'threshold', message: 'must be a finite number' })
  if (options.since && options.until && options.since > options.until)
    issues.push({ field: 'filters.since', message: 'must not be after filters.until' })
  const contextTurns = options.contextTurns ?? DEFAULT_CONTEXT_TURNS
  if (!Number.isInteger(contextTurns) || contextTurns < 1 || contextTurns > MAX_CONTEXT_TURNS)
    issues.push({
      field: 'contextTurns',
      message: `must be an integer from 1 to ${MAX_CONTEXT_TURNS}`,
      limit: MAX_CONTEXT_TURNS,
    })
  const windowDays = options.windowDays ?? settings.conversationWindowDays
  if (!Number.isInteger(windowDays) || windowDays < 0 || windowDays > MAX_WINDOW_DAYS)
    issues.push({
      field: 'windowDays',
      message: `must be an integer from 0 (all history) to ${MAX_WINDOW_DAYS}`,
      limit: MAX_WINDOW_DAYS,
    })
  if (issues.length) throw new ValidationError(issues)
  return {
    limit,
    scopes,
    weights,
    strategy,
    mmrLambda,
    threshold: options.threshold ?? null,
    contextTurns,
    windowDays,
    mentionedTimes: options.mentionedTimes ?? DEFAULT_MENTIONED_TIMES,
  }
}

export type SearchRequest = ReturnType<typeof searchRequest>
