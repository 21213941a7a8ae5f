import {
  catalog,
  type EngramClient,
  type EngramFailure,
  type EngramSubscription,
  ERROR_CODES,
  type OperationName,
  type Result,
} from '@engram/contract'
import { subscriptionOver } from '../subscription.ts'
import type { EmbeddedRuntime, Principal } from './runtime.ts'

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

/** What the runtime threw rather than answered: never an expected failure (those are Results). */
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

  async function execute(name: OperationName, input: unknown): Promise<Result<unknown>> {
    if (closed)
      return { ok: false, error: { code: ERROR_CODES.UNAVAILABLE, message: 'the client is closed' } }
    try {
      await ready
      return await runtime.call(name, principal, input)
    } catch (error) {
      return { ok: false, error: unexpected(error) }
    }
  }

  function subscribe(name: OperationName, input: unknown): EngramSubscription<unknown> {
    // Registered on the engine's bus at once (as remote registers on the socket), so an event
    // published right after the call is not missed.
    const source = runtime.subscribe(name, principal, input)
    return subscriptionOver(
      open,
      async (subscription, closed) => {
        try {
          await ready
          const step = await source.next()
          if (closed()) return { done: true, value: undefined }
          if (step.done) {
            await subscription.close()
            return { done: true, value: undefined }
          }
          // A failure is the stream's last event (a refusal, the end of access).
          if (!step.value.ok) await subscription.close()
          return { done: false, value: step.value }
        } catch (error) {
          await subscription.close()
          return { done: false, value: { ok: false, error: unexpected(error) } }
        }
      },
      () => source.return?.(),
    )
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
    client[name] =
      catalog[name].kind === 'subscription'
        ? (input?: unknown) => subscribe(name, input)
        : (input?: unknown) => execute(name, input)
  }
  return client as unknown as EmbeddedEngram
}
