import type { TimerClock } from '../types.ts'

interface PendingTimer {
  id: number
  dueAt: number
  ms: number
  wake: () => void
}

/**
 * A clock that moves only when the test says so. Timers set on it (retry delays, attempt
 * timeouts, catch-up and gather delays, lease polls, flush intervals) fire inside `advance`, in
 * the order they fall due, each with the clock reading its due time, so a 60 s timeout takes no
 * time. Pure (no system clock, no real timer): it lives in core so every package tests with one.
 */
export class ManualTimerClock implements TimerClock {
  private ms: number
  private nextId = 0
  private timers: PendingTimer[] = []

  constructor(start: Date | string | number = '2026-01-15T10:00:00.000Z') {
    this.ms = new Date(start).getTime()
  }

  now(): Date {
    return new Date(this.ms)
  }

  setTimer(ms: number, wake: () => void): () => void {
    const delay = Math.max(0, ms)
    const timer = { id: this.nextId++, dueAt: this.ms + delay, ms: delay, wake }
    this.timers.push(timer)
    return () => {
      this.timers = this.timers.filter((pending) => pending.id !== timer.id)
    }
  }

  /** The lengths asked for by the timers still pending (e.g. [60000] while an attempt runs). */
  pendingDelays(): number[] {
    return this.timers.map((timer) => timer.ms)
  }

  /**
   * Moves the clock by `ms`, firing every timer that falls due on the way (a timer set by one
   * that fires fires too when it falls due before the end: a repeating timer fires once a period).
   */
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

  /** Sets the clock to a time without firing anything (a test placing "now" at a date). */
  set(date: Date | string | number): void {
    this.ms = new Date(date).getTime()
  }
}
