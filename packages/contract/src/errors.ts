/**
 * The error codes every door speaks. The API's typed errors (ValidationError, NotFoundError,
 * ForbiddenError) keep their codes; the rest name what a client can do about a failure that never
 * reached an operation: a missing key, a refused request, a server that cannot be reached.
 */
export const ERROR_CODES = {
  /** Input broke a rule or a limit: see issues. */
  VALIDATION: 'VALIDATION',
  /** The thing named does not exist (for this agent). */
  NOT_FOUND: 'NOT_FOUND',
  /** The key may not do this (another agent's data, an admin operation). */
  FORBIDDEN: 'FORBIDDEN',
  /** The state changed under the request (a conversation that already exists on import). */
  CONFLICT: 'CONFLICT',
  /** No key, or a key that is unknown or revoked. */
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  /** The server refused the request itself (too deep, too large, not GraphQL it knows). */
  BAD_REQUEST: 'BAD_REQUEST',
  /** The server could not be reached or did not answer. */
  UNAVAILABLE: 'UNAVAILABLE',
  /** The server failed: its log has the detail. */
  INTERNAL: 'INTERNAL',
} as const
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES]

/** One rejected input: its path (e.g. `messages.3.content`), what is wrong, and the limit broken. */
export interface FieldIssue {
  field: string
  message: string
  limit?: number | string | null
}

/** A failure as data: what every client method returns instead of throwing. */
export interface EngramFailure {
  code: ErrorCode
  message: string
  /** VALIDATION: every rejected field. */
  issues?: FieldIssue[]
  /** NOT_FOUND: what was looked for. */
  resource?: string
  id?: string
}

export type Result<T> = { ok: true; data: T } | { ok: false; error: EngramFailure }

export function ok<T>(data: T): Result<T> {
  return { ok: true, data }
}

export function failure<T = never>(error: EngramFailure): Result<T> {
  return { ok: false, error }
}

/** The thrown form, for callers who prefer exceptions: `unwrap(await client.search(...))`. */
export class EngramError extends Error {
  readonly code: ErrorCode
  readonly issues: FieldIssue[]
  constructor(readonly failure: EngramFailure) {
    super(failure.message)
    this.name = 'EngramError'
    this.code = failure.code
    this.issues = failure.issues ?? []
  }
}

export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.data
  throw new EngramError(result.error)
}

/** One line for a terminal or a tool result: "VALIDATION: content: at most 100000 characters". */
export function describeFailure(error: EngramFailure): string {
  if (error.issues && error.issues.length > 0) {
    const issues = error.issues
      .map(
        (issue) => `${issue.field}: ${issue.message}${issue.limit == null ? '' : ` (limit ${issue.limit})`}`,
      )
      .join('; ')
    return `${error.code}: ${issues}`
  }
  return `${error.code}: ${error.message}`
}
