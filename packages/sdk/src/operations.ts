/**
 * What the remote client does with a catalog operation's GraphQL document: the variables it is
 * sent with, and its answer (data, a typed error of the operation's union, or GraphQL errors) as
 * the Result the catalog promises. The embedded client needs none of this: the engine's operations
 * layer answers in the catalog's shapes and failures directly.
 */
import {
  catalog,
  type EngramFailure,
  ERROR_CODES,
  type ErrorCode,
  type OperationName,
  type OperationSpec,
  type Result,
} from '@engram/contract'
import * as documents from './generated/graphql.ts'

type ErrorTypename = 'ValidationError' | 'NotFoundError' | 'ForbiddenError' | 'ConflictError'

const ERROR_TYPENAMES: Record<ErrorTypename, ErrorCode> = {
  ValidationError: ERROR_CODES.VALIDATION,
  NotFoundError: ERROR_CODES.NOT_FOUND,
  ForbiddenError: ERROR_CODES.FORBIDDEN,
  // The run registry's (issue 16): a run id already taken, a run already ended.
  ConflictError: ERROR_CODES.CONFLICT,
}

/** GraphQL error codes (extensions.code) as the codes every door speaks. */
export function codeOf(extensionCode: unknown, status: number): ErrorCode {
  switch (extensionCode) {
    case 'VALIDATION':
    case 'NOT_FOUND':
    case 'FORBIDDEN':
    case 'CONFLICT':
    case 'UNAUTHENTICATED':
      return extensionCode
    case 'INTERNAL_SERVER_ERROR':
      return ERROR_CODES.INTERNAL
  }
  if (status === 401) return ERROR_CODES.UNAUTHENTICATED
  if (status === 403) return ERROR_CODES.FORBIDDEN
  if (status >= 500) return ERROR_CODES.INTERNAL
  return ERROR_CODES.BAD_REQUEST
}

export interface GraphqlError {
  message: string
  extensions?: { code?: unknown; issues?: EngramFailure['issues'] }
}

export function failureFromErrors(errors: readonly GraphqlError[], status: number): EngramFailure {
  const first = errors[0] ?? { message: `HTTP ${status}` }
  const code = codeOf(first.extensions?.code, status)
  return {
    code,
    message: first.message,
    ...(first.extensions?.issues ? { issues: first.extensions.issues } : {}),
  }
}

/** A typed error of an operation's union (data, not an exception) as a failure. */
export function failureFromUnion(value: Record<string, unknown>): EngramFailure | null {
  const code = ERROR_TYPENAMES[value.__typename as ErrorTypename]
  if (!code) return null
  return {
    code,
    message: String(value.message ?? ''),
    ...(Array.isArray(value.issues)
      ? {
          issues: (value.issues as NonNullable<EngramFailure['issues']>).map((issue) => ({
            field: issue.field,
            message: issue.message,
            ...(issue.limit == null ? {} : { limit: issue.limit }),
          })),
        }
      : {}),
    ...(value.resource ? { resource: String(value.resource), id: String(value.notFoundId) } : {}),
  }
}

/** Operations answering a list, which GraphQL wraps in a `{ data }` success object (a union cannot hold a list). */
export const DATA_LISTS = [
  'apiKeys',
  'backups',
  'summaries',
  'matchTrajectories',
  'runSessions',
  'recordKnowledge',
  'recordSelector',
  'runHints',
  'runDomains',
  'pools',
] as const satisfies readonly OperationName[]
export type DataLists = (typeof DATA_LISTS)[number]

/** The answer reshaped as the client returns it: a connection's edges become a list named after the operation, a `{ data }` success object its list. */
export function shape(spec: OperationSpec, name: OperationName, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const { __typename: _typename, ...rest } = value as Record<string, unknown>
  if (spec.graphql.connection) {
    const { edges, ...page } = rest as { edges: { node: unknown }[] }
    return { ...page, [name]: edges.map((edge) => edge.node) }
  }
  if ((DATA_LISTS as readonly string[]).includes(name)) return (rest as { data: unknown }).data
  return rest
}

export function variablesFor(spec: OperationSpec, input: Record<string, unknown>) {
  const values = { ...input, ...spec.graphql.fixed }
  return spec.graphql.inputArg ? { input: values } : values
}

/** A document's answer (`{ data: { result }, errors }`) as the operation's Result. */
export function settle(
  name: OperationName,
  body: { data?: { result?: unknown } | null; errors?: readonly GraphqlError[] },
  status: number,
): Result<unknown> {
  const spec = catalog[name] as OperationSpec
  if (body.errors?.length) return { ok: false, error: failureFromErrors(body.errors, status) }
  const result = body.data?.result
  if (result && typeof result === 'object' && !Array.isArray(result)) {
    const failed = failureFromUnion(result as Record<string, unknown>)
    if (failed) return { ok: false, error: failed }
  }
  if (Array.isArray(result)) return { ok: true, data: result.map((item) => shape(spec, name, item)) }
  return { ok: true, data: shape(spec, name, result ?? null) }
}

// Each operation's document is exported as <Operation>Document (AddMessageDocument for addMessage).
const DOCUMENTS = new Map<string, unknown>(Object.entries(documents))
export function documentOf(name: OperationName): string {
  const document = DOCUMENTS.get(`${name.charAt(0).toUpperCase()}${name.slice(1)}Document`)
  if (!document) throw new Error(`no generated document for ${name}: run pnpm --filter @engram/sdk generate`)
  return String(document)
}
