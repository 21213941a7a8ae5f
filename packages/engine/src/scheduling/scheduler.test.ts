import { type Clock, ManualTimerClock } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { repeat, schedulerOf, sleep, systemScheduler, withScheduler } from './scheduler.ts'

describe("the engine's scheduler", () => {
  it('sleeps until the clock has moved by the delay, not before', async () => {
    const clock = new ManualTimerClock()
    let woke = false
    const slept = sleep(clock, 100).then(() => {
      woke = true
    })
    clock.advance(99)
    await Promise.resolve()
    expect(woke).toBe(false)
    clock.advance(1)
    await slept
    expect(woke).toBe(true)
  })

  it('repeats once a period, each tick seeing the clock at its due time, until cancelled', () => {
    const clock = new ManualTimerClock('2026-01-15T10:00:00.000Z')
    const ticks: string[] = []
    const cancel = repeat(clock, 1_000, () => ticks.push(clock.now().toISOString().slice(11, 19)))
    clock.advance(3_500)
    expect(ticks).toEqual(['10:00:01', '10:00:02', '10:00:03'])
    cancel()
    clock.advance(10_000)
    expect(ticks).toHaveLength(3)
    expect(clock.pendingDelays()).toEqual([])
  })

  it('stops a repetition cancelled from its own tick', () => {
    const clock = new ManualTimerClock()
    let ticks = 0
    const cancel = repeat(clock, 10, () => {
      ticks++
      if (ticks === 2) cancel()
    })
    clock.advance(100)
    expect(ticks).toBe(2)
  })

  it('takes the delays of a clock that has timers, and real ones for a plain clock', () => {
    const manual = new ManualTimerClock()
    const plain: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
    expect(schedulerOf(manual)).toBe(manual)
    expect(schedulerOf(plain)).toBe(systemScheduler)
    expect(withScheduler(manual)).toBe(manual)
    // A plain clock with a test's scheduler: time from the one, delays on the other.
    const combined = withScheduler(plain, manual)
    let woke = false
    combined.setTimer(5, () => {
      woke = true
    })
    expect(manual.pendingDelays()).toEqual([5])
    manual.advance(5)
    expect(woke).toBe(true)
    expect(combined.now().toISOString()).toBe('2026-01-15T10:00:00.000Z')
  })

  it('fires and cancels real timers (the server’s; a few ms)', async () => {
    const fired: number[] = []
    systemScheduler.setTimer(1, () => fired.push(1))
    const cancel = systemScheduler.setTimer(2, () => fired.push(2))
    cancel()
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fired).toEqual([1])
  })
})
