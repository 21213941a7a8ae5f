import type { Catalog, InputOf, OperationName, OutputOf } from './catalog.ts'
import type { Result } from './errors.ts'

type QueryOrMutationName = {
  [N in OperationName]: Catalog[N]['kind'] extends 'subscription' ? never : N
}[OperationName]
type SubscriptionName = Exclude<OperationName, QueryOrMutationName>

/** An operation without required input may be called with none: `client.agents()`. */
type Call<N extends OperationName, R> =
  // biome-ignore lint/complexity/noBannedTypes: `{} extends X` asks whether X has no required key
  {} extends InputOf<N> ? (input?: InputOf<N>) => R : (input: InputOf<N>) => R

/**
 * A live stream of one subscription. Each event is a Result: a failure (the key was revoked, the
 * connection dropped) arrives as the last event. `close()` (or leaving a for-await loop) ends it.
 */
export interface EngramSubscription<T> extends AsyncIterableIterator<Result<T>> {
  close(): Promise<void>
}

/**
 * What an agent can do with its memory, whichever door it comes through: every operation of the
 * catalog as a method that takes the operation's input and answers a Result, never throwing for an
 * expected failure. The remote client (GraphQL) implements it now; the embedded one (engine in
 * process) will implement the same type, and the client contract suite runs against both.
 */
export type EngramClient = {
  [N in QueryOrMutationName]: Call<N, Promise<Result<OutputOf<N>>>>
} & {
  [N in SubscriptionName]: Call<N, EngramSubscription<OutputOf<N>>>
} & {
  /** Closes connections (the subscription socket); the client is unusable afterwards. */
  close(): Promise<void>
}
