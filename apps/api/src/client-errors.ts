import { failureOf, type Logger } from '@engram/engine'
import { PothosValidationError } from '@pothos/core'
import { GraphQLError } from 'graphql'

/**
 * Codes a client can act on. Anything else reaching the mask is a server fault: logged once with
 * its stack and answered "Unexpected error." (INTERNAL_SERVER_ERROR).
 */
export const CLIENT_ERROR_CODES = [
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'QUERY_TOO_DEEP',
  'QUERY_TOO_COMPLEX',
  'QUERY_TOO_NESTED',
  'TOO_MANY_ALIASES',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'PERSISTED_QUERY_NOT_FOUND',
] as const

/**
 * True when every error in the chain is a GraphQLError: graphql-js raised it about the request
 * itself (a variable of the wrong type, an unknown input field, a scalar's parse failure), never
 * code of ours failing. Duck-typed: the armor plugins load graphql's CommonJS build, whose
 * GraphQLError is not an instance of this one.
 */
function isRequestError(error: unknown): error is GraphQLError {
  let current: unknown = error
  for (let hops = 0; hops < 8 && current; hops++) {
    if ((current as Error).name !== 'GraphQLError') return false
    current = (current as GraphQLError).originalError
  }
  return !current
}

/**
 * yoga's maskError: expected failures reach the client typed and plain, unexpected ones masked.
 * Nothing the client got wrong is logged as an error.
 */
export function maskError(error: unknown, message: string, log: Logger): Error {
  const graphqlError = error as Partial<GraphQLError>
  const original = graphqlError.originalError ?? error
  // An expected error raised where no error union is declared (a nested field, an argument
  // check) still reaches the client typed, through extensions: the engine's one mapping.
  const failure = failureOf(original)
  if (failure) {
    return new GraphQLError(failure.message, {
      path: graphqlError.path,
      extensions: {
        code: failure.code,
        ...(failure.issues ? { issues: failure.issues } : {}),
        // The store is down: the request may be repeated; HTTP clients and balancers see 503.
        ...(failure.code === 'UNAVAILABLE' ? { http: { status: 503 } } : {}),
      },
    })
  }
  if (original instanceof PothosValidationError) {
    return new GraphQLError(original.message, {
      path: graphqlError.path,
      extensions: { code: 'BAD_USER_INPUT' },
    })
  }
  if (isRequestError(error)) {
    const code = (error.extensions?.code as string | undefined) ?? 'BAD_USER_INPUT'
    let http = error.extensions?.http as { status?: number; spec?: boolean } | undefined
    // A body that is not JSON is a bad request whatever the client accepts (yoga's `spec` flag
    // would answer it 200 to application/json clients).
    if (code === 'BAD_REQUEST' && http?.status) http = { status: http.status }
    // Only what the client needs: graphql-js and yoga attach the raw cause (a SyntaxError of
    // JSON.parse) as originalError, which must not be echoed.
    return new GraphQLError(error.message, {
      nodes: error.nodes,
      path: error.path,
      extensions: { code, ...(http ? { http } : {}) },
    })
  }
  log.error('[graphql] unexpected error:', original)
  return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } })
}
