import {
  type Catalog,
  catalog,
  type EngramClient,
  type EngramFailure,
  type EngramSubscription,
  ERROR_CODES,
  type OperationName,
  type OperationSpec,
  parseInput,
  type Result,
} from '@engram/contract'
import { documentOf, settle, variablesFor } from '../operations.ts'
import type { EmbeddedRuntime, ExecutionAnswer, Principal } from './runtime.ts'

/**
 * The embedded client: the engine in this process, on one SQLite file. An `EngramClient` like the
 * remote one, acting for one principal; `forAgent` and `operator` give clients for others on the
 * same engine (one engine per file and process: its caches and indexes are shared, not duplicated).
 */
export interface EmbeddedEngram extends EngramClient {
  /** A client acting for this agent (created on first use), on the same engine. */
  forAgent(agentId: string): EmbeddedEngram
  /** A client acting as the operator (an admin key's rights), on the same engine. */
  operator(): EmbeddedEngram
  /**
   * Waits until what was written so far is searchable by vector and background index work is
   * done (the job worker does this by itself; a search of an agent does it for that agent).
   * For tests, benchmarks and a clean shutdown.
   */
  settled(): Promise<void>
  /** The agent this client acts for; null for the operator. */
  readonly agentId: string | null
}

function unexpected(error: unknown): EngramFailure {
  return { code: ERROR_CODES.INTERNAL, message: error instanceof Error ? error.message : String(error) }
}

/**
 * Builds the client of one principal over a runtime. `owner` is true for the client `open`
 * returned: closing it stops the engine; closing a derived client ends only its subscriptions.
 */
export function embeddedClient(
  runtime: EmbeddedRuntime,
  principal: Principal,
  owner: boolean,
): EmbeddedEngram {
  const open = new Set<EngramSubscription<unknown>>()
  let closed = false
  const ready = runtime.ensure(principal)
  // An unhandled rejection here would crash the process; the first call reports it instead.
  ready.catch(() => {})

  async function execute(name: OperationName, rawInput: unknown): Promise<Result<unknown>> {
    if (closed)
      return { ok: false, error: { code: ERROR_CODES.UNAVAILABLE, message: 'the client is closed' } }
    const spec = catalog[name] as OperationSpec
    const input = parseInput(name, rawInput)
    if (!input.ok) return input
    try {
      await ready
      const answer = await runtime.execute(
        documentOf(name),
        variablesFor(spec, input.data as Record<string, unknown>),
        principal,
      )
      return plain(settle(name, answer, 200))
    } catch (error) {
      return { ok: false, error: unexpected(error) }
    }
  }

  function subscribe(name: OperationName, rawInput: unknown): EngramSubscription<unknown> {
    const spec = catalog[name] as OperationSpec
    const input = parseInput(name, rawInput)
    let finished = false
    let pendingFailure: EngramFailure | null = input.ok ? null : input.error
    type Source = Exclude<Awaited<ReturnType<EmbeddedRuntime['subscribe']>>, ExecutionAnswer>
    // Registered at once (as remote registers on the socket), so an event published right after
    // the call is not missed.
    const source: Promise<Source | ExecutionAnswer> | null = input.ok
      ? ready.then(() =>
          runtime.subscribe(
            documentOf(name),
            variablesFor(spec, input.data as Record<string, unknown>),
            principal,
          ),
        )
      : null
    source?.catch(() => {})

    const subscription: EngramSubscription<unknown> = {
      async next(): Promise<IteratorResult<Result<unknown>>> {
        if (finished) return { done: true, value: undefined }
        if (pendingFailure) {
          const error = pendingFailure
          pendingFailure = null
          await subscription.close()
          return { done: false, value: { ok: false, error } }
        }
        try {
          const stream = await source
          if (!stream) throw new Error('no subscription source')
          if (!('next' in stream)) {
            const refused = settle(name, stream, 200)
            pendingFailure = refused.ok
              ? { code: ERROR_CODES.INTERNAL, message: 'the subscription answered no stream' }
              : refused.error
            return subscription.next()
          }
          const step = await stream.next()
          if (finished) return { done: true, value: undefined }
          if (step.done) {
            await subscription.close()
            return { done: true, value: undefined }
          }
          const event = settle(name, step.value, 200)
          if (!event.ok) {
            pendingFailure = event.error
            return subscription.next()
          }
          return { done: false, value: plain(event) }
        } catch (error) {
          pendingFailure = unexpected(error)
          return subscription.next()
        }
      },
      async return(): Promise<IteratorResult<Result<unknown>>> {
        await subscription.close()
        return { done: true, value: undefined }
      },
      async close() {
        if (finished) return
        finished = true
        open.delete(subscription)
        const stream = await source?.catch(() => null)
        if (stream && 'return' in stream) await stream.return()
      },
      [Symbol.asyncIterator]() {
        return subscription
      },
    }
    open.add(subscription)
    return subscription
  }

  const client: Record<string, unknown> = {
    agentId: principal.kind === 'agent' ? principal.agentId : null,
    forAgent: (agentId: string) => embeddedClient(runtime, { kind: 'agent', agentId }, false),
    operator: () => embeddedClient(runtime, { kind: 'operator' }, false),
    settled: () => runtime.settle(principal.kind === 'agent' ? principal.agentId : null),
    async close() {
      if (closed) return
      closed = true
      await Promise.all([...open].map((s) => s.close()))
      if (owner) await runtime.close()
    },
  }
  for (const name of Object.keys(catalog) as OperationName[]) {
    const spec = (catalog as Catalog)[name] as OperationSpec
    client[name] =
      spec.kind === 'subscription'
        ? (input?: unknown) => subscribe(name, input)
        : (input?: unknown) => execute(name, input)
  }
  return client as unknown as EmbeddedEngram
}

/**
 * graphql-js builds its answers on null-prototype objects; the remote client's come from
 * JSON.parse. Copied into plain objects and arrays, so both clients' answers print and compare the
 * same.
 */
function plain<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) return value.map(plain) as T
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[key] = plain((value as Record<string, unknown>)[key])
  return out as T
}
