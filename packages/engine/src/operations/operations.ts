import {
  catalog,
  type EngramFailure,
  ERROR_CODES,
  fieldIssues,
  OPERATION_NAMES,
  type OperationName,
  type OutputOf,
  type ParsedInputOf,
  type Result,
} from '@engram/contract'
import { ValidationError } from '@engram/core'
import type { Engine } from '../engine.ts'
import { failureOf } from './failures.ts'
import {
  type OperationCall,
  operationHandlers,
  type QueryOrMutationName,
  type SubscriptionName,
} from './handlers.ts'
import { agentScopeOf, listScopeOf, type Principal, requireOperator } from './principal.ts'

export {
  type OperationCall,
  type OperationHandlers,
  operationHandlers,
  type QueryOrMutationName,
  type SubscriptionName,
} from './handlers.ts'

/** The public form: `(principal, input) => output`, the input checked against the catalog first. */
export type Operations = {
  [N in QueryOrMutationName]: (principal: Principal, input?: unknown) => Promise<OutputOf<N>>
} & {
  [N in SubscriptionName]: (principal: Principal, input?: unknown) => AsyncIterableIterator<OutputOf<N>>
}

/** A thrown error as the failure a client gets: typed when expected, INTERNAL (and logged) otherwise. */
export function failureFrom(error: unknown, log?: { error(...args: unknown[]): void }): EngramFailure {
  const failure = failureOf(error)
  if (failure) return failure
  log?.error('[operations] unexpected error:', error)
  return { code: ERROR_CODES.INTERNAL, message: error instanceof Error ? error.message : String(error) }
}

/**
 * The operations layer: every catalog operation as `(principal, input) => output`. The input is
 * checked against the catalog's schema (VALIDATION naming field and limit, as the API answers bad
 * variables), admin operations refuse an agent (FORBIDDEN), a mutation's writes reach the caches
 * when it ends, and the answer has the catalog's output shape. Failures are thrown as core's
 * EngramError; `call` answers a Result instead.
 */
export function createOperations(engine: Engine) {
  const handlers = operationHandlers(engine)

  function callFor(name: OperationName, principal: Principal, touched: Set<string>): OperationCall {
    const mutation = catalog[name].kind === 'mutation'
    const record = (scope: string) => {
      if (!mutation) return
      // Before and after the write: a read between the two cannot cache the old state as new.
      touched.add(scope)
      engine.writes.touch(scope)
    }
    return {
      principal,
      async agentScope(agentId) {
        const scope = await agentScopeOf(engine.agents, principal, agentId)
        record(scope)
        return scope
      },
      async listScope(agentId) {
        const scope = await listScopeOf(engine.agents, principal, agentId)
        if (scope) record(scope)
        return scope
      },
    }
  }

  function prepare<N extends OperationName>(name: N, principal: Principal, raw: unknown): ParsedInputOf<N> {
    const spec = catalog[name]
    if (spec.admin) requireOperator(principal)
    const parsed = spec.input.safeParse(raw ?? {})
    if (!parsed.success) throw new ValidationError(fieldIssues(parsed.error) as ValidationError['issues'])
    return parsed.data as ParsedInputOf<N>
  }

  const operations: Record<string, unknown> = {}
  for (const name of OPERATION_NAMES) {
    const handler = handlers[name] as (call: OperationCall, input: unknown) => unknown
    if (catalog[name].kind === 'subscription') {
      operations[name] = (principal: Principal, raw?: unknown) => {
        try {
          const input = prepare(name, principal, raw)
          return handler(callFor(name, principal, new Set()), input)
        } catch (error) {
          return failedStream(error)
        }
      }
    } else {
      operations[name] = async (principal: Principal, raw?: unknown) => {
        const input = prepare(name, principal, raw)
        const touched = new Set<string>()
        try {
          return await handler(callFor(name, principal, touched), input)
        } finally {
          for (const scope of touched) engine.writes.touch(scope)
        }
      }
    }
  }
  const typed = operations as Operations

  return Object.assign(typed, {
    /** The operation's answer as a Result: the failure a door sends instead of throwing. */
    async call<N extends QueryOrMutationName>(
      name: N,
      principal: Principal,
      input?: unknown,
    ): Promise<Result<OutputOf<N>>> {
      try {
        const run = typed[name] as (principal: Principal, input?: unknown) => Promise<OutputOf<N>>
        return { ok: true, data: await run(principal, input) }
      } catch (error) {
        return { ok: false, error: failureFrom(error, engine.log) }
      }
    },
    /**
     * A subscription's events as Results: a refusal, or the end of access, arrives as a failure
     * event and the stream ends after it.
     */
    stream<N extends SubscriptionName>(
      name: N,
      principal: Principal,
      input?: unknown,
    ): AsyncIterableIterator<Result<OutputOf<N>>> {
      const source = (typed[name] as (p: Principal, i?: unknown) => AsyncIterableIterator<OutputOf<N>>)(
        principal,
        input,
      )
      let ended = false
      const stream: AsyncIterableIterator<Result<OutputOf<N>>> = {
        async next() {
          if (ended) return { done: true, value: undefined }
          try {
            const step = await source.next()
            if (step.done) ended = true
            return step.done
              ? { done: true, value: undefined }
              : { done: false, value: { ok: true, data: step.value } }
          } catch (error) {
            ended = true
            await source.return?.()
            return { done: false, value: { ok: false, error: failureFrom(error, engine.log) } }
          }
        },
        async return() {
          ended = true
          await source.return?.()
          return { done: true, value: undefined }
        },
        [Symbol.asyncIterator]() {
          return stream
        },
      }
      return stream
    },
  })
}

/** A stream refused before it started (bad input, an agent naming another): its first next() throws. */
function failedStream(error: unknown): AsyncIterableIterator<never> {
  let thrown = false
  const stream: AsyncIterableIterator<never> = {
    async next() {
      if (thrown) return { done: true, value: undefined }
      thrown = true
      throw error
    },
    async return() {
      thrown = true
      return { done: true, value: undefined }
    },
    [Symbol.asyncIterator]() {
      return stream
    },
  }
  return stream
}
