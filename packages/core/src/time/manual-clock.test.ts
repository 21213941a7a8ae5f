import { describe, expect, it } from 'vitest'
import { ManualTimerClock } from './manual-clock.ts'

describe('ManualTimerClock', () => {
  it('fires timers in the order they fall due, each with the clock at its due time', () => {
    const clock = new ManualTimerClock('2026-01-15T10:00:00.000Z')
    const fired: string[] = []
    const at = (name: string) => () => fired.push(`${name}@${clock.now().getTime() % 100_000}`)
    clock.setTimer(300, at('c'))
    clock.setTimer(100, at('a'))
    clock.setTimer(100, at('b'))
    clock.advance(250)
    expect(fired).toEqual(['a@100', 'b@100'])
    expect(clock.pendingDelays()).toEqual([300])
    clock.advance(50)
    expect(fired).toEqual(['a@100', 'b@100', 'c@300'])
    expect(clock.now().toISOString()).toBe('2026-01-15T10:00:00.300Z')
  })

  it('fires a timer set by a firing one when it falls due within the same advance, and never a cancelled one', () => {
    const clock = new ManualTimerClock()
    const fired: string[] = []
    clock.setTimer(10, () => {
      fired.push('first')
      clock.setTimer(10, () => fired.push('second'))
      clock.setTimer(100, () => fired.push('too late'))
    })
    const cancel = clock.setTimer(5, () => fired.push('cancelled'))
    cancel()
    clock.advance(50)
    expect(fired).toEqual(['first', 'second'])
    clock.set('2030-01-01T00:00:00.000Z')
    expect(fired).toEqual(['first', 'second'])
  })
})
