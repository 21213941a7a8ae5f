import type { EngramSubscription, Result } from '@engram/contract'

type Step = IteratorResult<Result<unknown>>

/**
 * A subscription as both clients hand it out: an async iterator of Results that can be closed.
 * Closing ends the source (`release`) and forgets the subscription in the client's `open` set,
 * once; a closed subscription answers done. `step` reads the next event; it gets the handle (to
 * close it or read again) and whether it was closed while the step waited.
 */
export function subscriptionOver(
  open: Set<EngramSubscription<unknown>>,
  step: (subscription: EngramSubscription<unknown>, closed: () => boolean) => Promise<Step>,
  release: () => Promise<unknown> | undefined,
): EngramSubscription<unknown> {
  let finished = false
  const closed = () => finished
  const subscription: EngramSubscription<unknown> = {
    next: async (): Promise<Step> =>
      finished ? { done: true, value: undefined } : step(subscription, closed),
    async return(): Promise<Step> {
      await subscription.close()
      return { done: true, value: undefined }
    },
    async close() {
      if (finished) return
      finished = true
      open.delete(subscription)
      await release()
    },
    [Symbol.asyncIterator]() {
      return subscription
    },
  }
  open.add(subscription)
  return subscription
}
