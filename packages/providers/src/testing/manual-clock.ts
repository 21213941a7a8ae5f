import type { TimerClock } from '../resilience.ts'

interface PendingTimer {
  id: number
  dueAt: number
  ms: number
  wake: () => void
}

/**
 * A clock that moves only when the test says so. Timers set on it (retry delays, attempt
 * timeouts) fire inside `advance`, in the order they fall due, so a 60 s timeout takes no time.
 */
export class ManualTimerClock implements TimerClock {
  private ms: number
  private nextId = 0
  private timers: PendingTimer[] = []

  constructor(start = Date.parse('2026-01-15T10:00:00.000Z')) {
    this.ms = start
  }

  now(): Date {
    return new Date(this.ms)
  }

  setTimer(ms: number, wake: () => void): () => void {
    const timer = { id: this.nextId++, dueAt: this.ms + ms, ms, wake }
    this.timers.push(timer)
    return () => {
      this.timers = this.timers.filter((pending) => pending.id !== timer.id)
    }
  }

  /** The lengths asked for by the timers still pending (e.g. [60000] while an attempt runs). */
  pendingDelays(): number[] {
    return this.timers.map((timer) => timer.ms)
  }

  advance(ms: number): void {
    const target = this.ms + ms
    for (;;) {
      const due = this.timers
        .filter((timer) => timer.dueAt <= target)
        .sort((a, b) => a.dueAt - b.dueAt || a.id - b.id)[0]
      if (!due) break
      this.timers = this.timers.filter((timer) => timer.id !== due.id)
      this.ms = due.dueAt
      due.wake()
    }
    this.ms = target
  }

  /**
   * Waits (in real time, a second at most) until a timer of `ms` is pending: the code under test
   * reaches its next delay after some network round trips, which take real time.
   */
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
