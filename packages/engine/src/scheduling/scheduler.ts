import type { Clock, Scheduler, TimerClock } from '@engram/core'

/** Node's timers fire at once past this (a 32-bit delay); longer delays wait this long at most. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The server's scheduler: real timers, unref'd, so a pending catch-up, gather or flush never keeps
 * a process alive that has nothing else to do (shutdown runs what is pending itself).
 */
export const systemScheduler: Scheduler = {
  setTimer(ms, wake) {
    const timer = setTimeout(wake, Math.min(Math.max(0, ms), MAX_TIMER_MS))
    timer.unref()
    return () => clearTimeout(timer)
  },
}

function hasTimers(clock: Clock): clock is TimerClock {
  return typeof (clock as Partial<TimerClock>).setTimer === 'function'
}

/**
 * The scheduler that goes with a clock: the clock's own timers when it has them (the engine's
 * composition passes a TimerClock; a test's manual clock), the system's otherwise.
 */
export function schedulerOf(clock: Clock): Scheduler {
  return hasTimers(clock) ? clock : systemScheduler
}

/**
 * The engine's clock with the scheduler its delays run on: the one given, or the clock's own, or
 * the system's. Everything the engine composes reads time and sets timers through the result.
 */
export function withScheduler(clock: Clock, scheduler?: Scheduler): TimerClock {
  if (!scheduler && hasTimers(clock)) return clock
  const timers = scheduler ?? schedulerOf(clock)
  return { now: () => clock.now(), setTimer: (ms, wake) => timers.setTimer(ms, wake) }
}

/** Resolves once `ms` have passed on the scheduler. */
export function sleep(scheduler: Scheduler, ms: number): Promise<void> {
  return new Promise((resolve) => void scheduler.setTimer(ms, resolve))
}

/**
 * Calls `tick` every `ms` on the scheduler until the returned function is called. The next tick is
 * set before this one runs, so a slow tick does not stretch the period (a tick that must not
 * overlap its predecessor checks that itself, as the optimizer's cycle does).
 */
export function repeat(scheduler: Scheduler, ms: number, tick: () => void): () => void {
  // A period of 0 would fire forever within one turn of a manual clock.
  const period = Math.max(1, ms)
  let cancel: (() => void) | null = null
  const arm = () => {
    cancel = scheduler.setTimer(period, () => {
      arm()
      tick()
    })
  }
  arm()
  return () => {
    cancel?.()
    cancel = null
  }
}
