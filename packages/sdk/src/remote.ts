import {
  type Catalog,
  catalog,
  type EngramClient,
  type EngramFailure,
  type EngramSubscription,
  ERROR_CODES,
  type OperationName,
  type OperationSpec,
  type OutputOf,
  parseInput,
  type Result,
} from '@engram/contract'
import { createClient as createWsClient, type Client as WsClient } from 'graphql-ws/client'
import WebSocket from 'ws'
import type * as documents from './generated/graphql.ts'
import {
  codeOf,
  type DataLists,
  documentOf,
  failureFromErrors,
  type GraphqlError,
  settle,
  shape,
  variablesFor,
} from './operations.ts'
import { subscriptionOver } from './subscription.ts'

export interface ConnectOptions {
  /** The server, e.g. `http://localhost:4000` (`/graphql` is added when the path does not end with it). */
  url: string
  /** An agent key (or an admin key, which then names the agent in each call's `agentId`). */
  apiKey: string
  /** Another fetch, e.g. a test's `yoga.fetch` to run in-process without a port. */
  fetch?: typeof globalThis.fetch
  /** Milliseconds before a request is abandoned as UNAVAILABLE (default 30 s). */
  timeoutMs?: number
}

export const DEFAULT_TIMEOUT_MS = 30_000

type Documents = typeof documents
type DocumentOf<N extends OperationName> = Documents[`${Capitalize<N>}Document` & keyof Documents]
type ResultOfDocument<D> = D extends documents.TypedDocumentString<infer R, infer _Variables> ? R : never
type ErrorTypename = 'ValidationError' | 'NotFoundError' | 'ForbiddenError' | 'ConflictError'
type Answer<N extends OperationName> = ResultOfDocument<DocumentOf<N>> extends { result: infer R } ? R : never
type Success<N extends OperationName> = Exclude<Answer<N>, { __typename: ErrorTypename }>

// What the server answers, reshaped as the client returns it: a connection's edges become a list
// named after the operation, a `{ data }` success object its list.
type Connections = 'sessions' | 'memories' | 'knowledge'
type Shaped<N extends OperationName> = N extends Connections
  ? Success<N> extends { edges: Array<{ node: infer Node }> }
    ? Omit<Success<N>, 'edges'> & { [K in N]: Node[] }
    : never
  : N extends DataLists
    ? Success<N> extends { data: infer List }
      ? List
      : never
    : Success<N>

/**
 * Drift caught by the compiler: the types GraphQL Code Generator writes from schema.graphql must
 * fit the catalog's outputs. An operation whose generated result does not fit is named here.
 */
type Misfits = { [N in OperationName]: Shaped<N> extends OutputOf<N> ? never : N }[OperationName]
const generatedTypesFitTheCatalog: [Misfits] extends [never] ? true : Misfits = true
void generatedTypesFitTheCatalog

interface SubscriptionEvent {
  data?: { result?: unknown } | null
  errors?: readonly GraphqlError[]
}

function graphqlEndpoint(url: string): URL {
  const endpoint = new URL(url)
  if (!endpoint.pathname.replace(/\/+$/, '').endsWith('/graphql'))
    endpoint.pathname = `${endpoint.pathname.replace(/\/+$/, '')}/graphql`
  return endpoint
}

/**
 * The remote client: one typed GraphQL document per catalog operation over HTTP, subscriptions
 * over graphql-ws. Inputs are checked against the catalog first (no round trip for input the
 * server would refuse); every failure is returned as a Result, never thrown.
 */
export function connect(options: ConnectOptions): EngramClient {
  const endpoint = graphqlEndpoint(options.url)
  const doFetch = options.fetch ?? globalThis.fetch
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const authorization = `Bearer ${options.apiKey}`
  let ws: WsClient | null = null
  const open = new Set<EngramSubscription<unknown>>()

  async function execute(name: OperationName, rawInput: unknown): Promise<Result<unknown>> {
    const spec = catalog[name] as OperationSpec
    const input = parseInput(name, rawInput)
    if (!input.ok) return input
    const document = documentOf(name)
    let response: Response
    try {
      response = await doFetch(endpoint.toString(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
        body: JSON.stringify({
          query: document,
          variables: variablesFor(spec, input.data as Record<string, unknown>),
        }),
        signal: AbortSignal.timeout(timeoutMs),
      })
    } catch (error) {
      return {
        ok: false,
        error: {
          code: ERROR_CODES.UNAVAILABLE,
          message: `${endpoint.origin} did not answer: ${String(error)}`,
        },
      }
    }
    let body: { data?: { result?: unknown } | null; errors?: GraphqlError[] }
    try {
      body = (await response.json()) as typeof body
    } catch {
      return {
        ok: false,
        error: {
          code: codeOf(null, response.status),
          message: `HTTP ${response.status} with no GraphQL answer`,
        },
      }
    }
    return settle(name, body, response.status)
  }

  function subscribe(name: OperationName, rawInput: unknown): EngramSubscription<unknown> {
    const spec = catalog[name] as OperationSpec
    const input = parseInput(name, rawInput)
    let source: AsyncIterableIterator<{
      data?: { result?: unknown } | null
      errors?: readonly GraphqlError[]
    }> | null = null
    let pendingFailure: EngramFailure | null = input.ok ? null : input.error

    if (input.ok) {
      ws ??= createWsClient({
        url: endpoint.toString().replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { authorization },
        lazy: true,
        retryAttempts: 0,
      })
      const document = documentOf(name)
      source = ws.iterate({
        query: document,
        variables: variablesFor(spec, input.data as Record<string, unknown>),
      }) as AsyncIterableIterator<SubscriptionEvent>
    }

    return subscriptionOver(
      open,
      async (subscription) => {
        if (pendingFailure) {
          const error = pendingFailure
          pendingFailure = null
          await subscription.close()
          return { done: false, value: { ok: false, error } }
        }
        try {
          if (!source) throw new Error('no subscription source')
          const step = await source.next()
          if (step.done) {
            await subscription.close()
            return { done: true, value: undefined }
          }
          if (step.value.errors?.length) {
            pendingFailure = failureFromErrors([...step.value.errors], 200)
            return subscription.next()
          }
          return {
            done: false,
            value: { ok: true, data: shape(spec, name, step.value.data?.result ?? null) },
          }
        } catch (error) {
          // graphql-ws rejects with a CloseEvent or the errors of a refused operation.
          const errors = Array.isArray(error) ? (error as GraphqlError[]) : null
          const closeCode = (error as { code?: number })?.code
          pendingFailure = errors
            ? failureFromErrors(errors, 200)
            : closeCode === 4403
              ? {
                  code: ERROR_CODES.UNAUTHENTICATED,
                  message: 'the server closed the subscription: key refused',
                }
              : { code: ERROR_CODES.UNAVAILABLE, message: `subscription ended: ${describe(error)}` }
          return subscription.next()
        }
      },
      () => source?.return?.(),
    )
  }

  const client: Record<string, unknown> = {
    async close() {
      await Promise.all([...open].map((s) => s.close()))
      await ws?.dispose()
      ws = null
    },
  }
  for (const name of Object.keys(catalog) as OperationName[]) {
    const spec = (catalog as Catalog)[name] as OperationSpec
    client[name] =
      spec.kind === 'subscription'
        ? (input?: unknown) => subscribe(name, input)
        : (input?: unknown) => execute(name, input)
  }
  return client as EngramClient
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message
  const event = error as { code?: number; reason?: string }
  if (typeof event?.code === 'number') return `closed ${event.code}${event.reason ? ` ${event.reason}` : ''}`
  return String(error)
}
