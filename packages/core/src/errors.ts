import type { z } from 'zod'

/** The error codes every adapter maps to its own protocol (GraphQL error types, HTTP status). */
export const ERROR_CODES = {
  VALIDATION: 'VALIDATION',
  NOT_FOUND: 'NOT_FOUND',
  FORBIDDEN: 'FORBIDDEN',
  CONFLICT: 'CONFLICT',
  UNAVAILABLE: 'UNAVAILABLE',
} as const
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES]

/** One rejected input: its path, what is wrong, and the limit it broke when there is one. */
export interface FieldIssue {
  field: string
  message: string
  limit?: number | string
}

export class EngramError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message)
    this.name = new.target.name
  }
}

export class ValidationError extends EngramError {
  constructor(
    readonly issues: FieldIssue[],
    message?: string,
  ) {
    super(
      ERROR_CODES.VALIDATION,
      message ?? issues.map((issue) => `${issue.field}: ${issue.message}`).join('; '),
    )
  }
}

export class NotFoundError extends EngramError {
  constructor(
    readonly resource: string,
    readonly id: string,
  ) {
    super(ERROR_CODES.NOT_FOUND, `${resource} ${id} was not found`)
  }
}

export class ForbiddenError extends EngramError {
  constructor(message = 'not allowed') {
    super(ERROR_CODES.FORBIDDEN, message)
  }
}

/** The request collides with what is stored (an id already taken, a run already ended). */
export class ConflictError extends EngramError {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(ERROR_CODES.CONFLICT, message)
  }
}

/**
 * The store cannot be reached (a Postgres server down or restarting, its connections all gone):
 * nothing was written, and the same request may succeed in a moment. Adapters raise it in place
 * of their driver's connection errors, so clients get a typed answer instead of a masked one.
 */
export class UnavailableError extends EngramError {
  constructor(message = 'the database is unavailable; try again shortly') {
    super(ERROR_CODES.UNAVAILABLE, message)
  }
}

/** Turns zod's issues into field issues, keeping the bound that was broken. */
export function validationErrorFromZod(error: z.ZodError, prefix?: string): ValidationError {
  return new ValidationError(
    error.issues.map((issue) => {
      const path = issue.path.map(String).join('.')
      const field = [prefix, path].filter(Boolean).join('.') || prefix || 'input'
      const bound =
        (issue as { maximum?: unknown; minimum?: unknown }).maximum ??
        (issue as { minimum?: unknown }).minimum
      return {
        field,
        message: issue.message,
        ...(typeof bound === 'number' || typeof bound === 'bigint' ? { limit: Number(bound) } : {}),
      }
    }),
  )
}

/** Parses a config with its zod schema, throwing a ValidationError that names field and limit. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown, prefix?: string): z.infer<S> {
  const parsed = schema.safeParse(input ?? {})
  if (!parsed.success) throw validationErrorFromZod(parsed.error, prefix)
  return parsed.data
}
