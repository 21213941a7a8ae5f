import { type DocumentNode, type GraphQLSchema, getOperationAST, Kind } from 'graphql'
import type { Plugin } from 'graphql-yoga'
import { boundedLabel, type MetricsRegistry } from './registry.ts'

interface OperationLabels {
  operation: string
  type: string
}

const UNKNOWN: OperationLabels = { operation: 'unknown', type: 'unknown' }

/**
 * The labels of one document: its root field when it selects one (`search`, `addMessage`: the
 * catalog's operation names), `multiple` when it selects several, `unknown` when none of the
 * schema's. Never the client's operation name: that is free text a caller chooses (an agent could
 * name its queries after its own id), while root fields are the schema's own closed set.
 */
export function operationLabels(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationLabels {
  const operation = getOperationAST(document, operationName ?? undefined)
  if (!operation) return UNKNOWN
  const root =
    operation.operation === 'query'
      ? schema.getQueryType()
      : operation.operation === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType()
  const fields = new Set<string>()
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) return { operation: 'multiple', type: operation.operation }
    if (selection.name.value !== '__typename') fields.add(selection.name.value)
  }
  if (fields.size > 1) return { operation: 'multiple', type: operation.operation }
  const [field] = fields
  const known =
    field !== undefined &&
    (root?.getFields()[field] !== undefined || field === '__schema' || field === '__type')
  return { operation: known ? field : 'unknown', type: operation.operation }
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value

/**
 * Counts GraphQL requests over HTTP (and SSE) with their duration and their errors by code. Times
 * are real (a monotonic timer): they measure the server, not the injectable clock.
 */
export function graphqlMetrics(
  metrics: MetricsRegistry,
  schema: GraphQLSchema,
  graphqlEndpoint: string,
): Plugin {
  const started = new WeakMap<Request, number>()
  const labels = new WeakMap<Request, OperationLabels>()
  const codes = new Set<string>()
  return {
    onRequest({ request, url }) {
      if (url.pathname === graphqlEndpoint) started.set(request, performance.now())
    },
    onParse({ context }) {
      const { request, params } = context as { request?: Request; params?: { operationName?: string } }
      if (!request || !started.has(request)) return
      return ({ result }) => {
        if (!result || result instanceof Error) return
        labels.set(request, operationLabels(schema, result as DocumentNode, params?.operationName))
      }
    },
    onResultProcess({ request, result }) {
      const start = started.get(request)
      if (start === undefined) return
      started.delete(request)
      const { operation, type } = labels.get(request) ?? UNKNOWN
      metrics.requests.inc({ operation, type })
      // A stream (a subscription over SSE) lasts as long as the client listens: no duration.
      if (isAsyncIterable(result)) return
      metrics.requestDuration.observe({ operation, type }, (performance.now() - start) / 1000)
      for (const single of Array.isArray(result) ? result : [result]) {
        for (const error of single?.errors ?? []) {
          const code = (error as { extensions?: { code?: unknown } }).extensions?.code
          metrics.errors.inc({
            operation,
            code: boundedLabel(codes, typeof code === 'string' ? code : 'INTERNAL', 64, 'OTHER'),
          })
        }
      }
    },
  }
}
