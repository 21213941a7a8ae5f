import {
  type EngramError,
  ForbiddenError,
  jsonDepth,
  MAX_JSON_DEPTH,
  NotFoundError,
  ValidationError,
} from '@engram/core'
import SchemaBuilder from '@pothos/core'
import ErrorsPlugin from '@pothos/plugin-errors'
import RelayPlugin from '@pothos/plugin-relay'
import { GraphQLError, Kind, valueFromASTUntyped } from 'graphql'
import type { Context } from './context.ts'

export const builder = new SchemaBuilder<{
  Context: Context
  DefaultFieldNullability: false
  Scalars: {
    // Output: a Date from the services, or the ISO string an operation of the catalog answers.
    DateTime: { Input: Date; Output: Date | string }
    JSON: { Input: Record<string, unknown>; Output: Record<string, unknown> }
    ID: { Input: string; Output: string | number }
  }
}>({
  plugins: [ErrorsPlugin, RelayPlugin],
  defaultFieldNullability: false,
  relay: { cursorType: 'String', clientMutationId: 'omit' },
  errors: { defaultTypes: [ValidationError, NotFoundError, ForbiddenError], directResult: true },
})

builder.queryType({})
builder.mutationType({})
builder.subscriptionType({})

builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time, e.g. 2025-01-15T10:36:00.000Z',
  serialize: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  parseValue: (value) => parseDateTime(value),
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string')
    return parseDateTime(ast.value)
  },
})

function parseDateTime(value: unknown): Date {
  // Only full ISO 8601 date-times: Date.parse would also accept "1" or "May 8", silently.
  if (
    typeof value !== 'string' ||
    !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(value)
  ) {
    throw new GraphQLError('DateTime must be an ISO 8601 date-time such as 2025-01-15T10:36:00.000Z')
  }
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) throw new GraphQLError(`DateTime "${value}" is not a valid date`)
  return date
}

builder.scalarType('JSON', {
  description: `A JSON object, nested at most ${MAX_JSON_DEPTH} levels deep`,
  serialize: (value) => value,
  parseValue: (value) => parseJsonObject(value),
  // The document's own nesting is bounded before parsing (document-limits.ts), so the recursive
  // valueFromASTUntyped cannot overflow here.
  parseLiteral: (ast, variables) => parseJsonObject(valueFromASTUntyped(ast, variables)),
})

function parseJsonObject(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new GraphQLError('JSON must be an object')
  }
  if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new GraphQLError(`JSON must nest at most ${MAX_JSON_DEPTH} levels deep`)
  }
  return value as Record<string, unknown>
}

export const ErrorInterface = builder.interfaceRef<EngramError>('Error').implement({
  description: 'Every expected failure is returned as data implementing Error.',
  fields: (t) => ({
    message: t.exposeString('message'),
    code: t.exposeString('code'),
  }),
})

const FieldIssue = builder
  .objectRef<{ field: string; message: string; limit?: number | string }>('FieldIssue')
  .implement({
    description: 'One rejected field: its path in the input, what is wrong, and the limit it broke.',
    fields: (t) => ({
      field: t.exposeString('field'),
      message: t.exposeString('message'),
      limit: t.string({
        nullable: true,
        resolve: (issue) => (issue.limit == null ? null : String(issue.limit)),
      }),
    }),
  })

builder.objectType(ValidationError, {
  name: 'ValidationError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ValidationError,
  fields: (t) => ({ issues: t.field({ type: [FieldIssue], resolve: (error) => error.issues }) }),
})

builder.objectType(NotFoundError, {
  name: 'NotFoundError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof NotFoundError,
  fields: (t) => ({ resource: t.exposeString('resource'), id: t.exposeString('id') }),
})

builder.objectType(ForbiddenError, {
  name: 'ForbiddenError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ForbiddenError,
  fields: () => ({}),
})

/**
 * An enum's values named by the domain's lower-case values upper-cased (`past_conversation` is
 * PAST_CONVERSATION): every enum of the schema that mirrors a list of core's is built this way.
 */
export function upperCaseValues<V extends string>(values: readonly V[]): Record<Uppercase<V>, { value: V }> {
  return Object.fromEntries(values.map((value) => [value.toUpperCase(), { value }])) as Record<
    Uppercase<V>,
    { value: V }
  >
}
