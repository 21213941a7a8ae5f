import type { EngramFailure } from '@engram/contract'
import { EngramError, NotFoundError, ValidationError } from '@engram/core'

/**
 * The one mapping of the engine's and core's errors to the contract's typed failures: every door
 * (the GraphQL mask, the operations layer the embedded SDK calls) answers a thrown EngramError
 * with its code, a ValidationError with its field issues (field and limit), a NotFoundError with
 * what was looked for. Anything else is not an expected failure: null, and the door masks it.
 */
export function failureOf(error: unknown): EngramFailure | null {
  if (!(error instanceof EngramError)) return null
  return {
    code: error.code,
    message: error.message,
    ...(error instanceof ValidationError ? { issues: error.issues } : {}),
    ...(error instanceof NotFoundError ? { resource: error.resource, id: error.id } : {}),
  }
}
