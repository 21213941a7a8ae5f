import { ManualTimerClock as CoreManualTimerClock } from '@engram/core'

/**
 * Core's manual clock, plus a wait for the code under test to reach its next delay: that code
 * gets there after network round trips, which take real time.
 */
export class ManualTimerClock extends CoreManualTimerClock {
  /** Waits (in real time, a second at most) until a timer of `ms` is pending. */
  async waitForTimer(ms: number): Promise<void> {
    await eventually(() => this.pendingDelays().includes(ms), `a ${ms} ms timer`)
  }
}

/** Polls `condition` until it holds, failing after `withinMs` of real time instead of hanging. */
export async function eventually(condition: () => boolean, what = 'the condition', withinMs = 1_000) {
  const deadline = Date.now() + withinMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** The error a promise rejects with; fails the test when it resolves instead. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected the call to fail')
}
