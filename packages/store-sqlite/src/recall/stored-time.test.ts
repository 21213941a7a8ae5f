import { describe, expect, it } from 'vitest'
import { storedDate } from '../db/stored-time.ts'
import { storedTime } from './sqlite-recall-sources.ts'

describe('storedTime', () => {
  it("reads Prisma's ISO text by position exactly as Date's parser reads it", () => {
    for (let i = 0; i < 2_000; i++) {
      // Times across centuries, leap days and every millisecond digit.
      const ms = Date.UTC(1970, 0, 1) + Math.floor((i * 7_919_993_333_111) % 8_000_000_000_000) + i
      const text = new Date(ms).toISOString().replace('Z', '+00:00')
      expect(storedTime(text)?.getTime()).toBe(ms)
    }
  })

  it('reads the other shapes through the parser, and refuses what is no time', () => {
    expect(storedTime('2026-03-01T09:00:00.000Z')?.getTime()).toBe(Date.UTC(2026, 2, 1, 9))
    expect(storedTime('2026-03-01T09:00:00+02:00')?.getTime()).toBe(Date.UTC(2026, 2, 1, 7))
    expect(storedTime(String(Date.UTC(2026, 2, 1)))?.getTime()).toBe(Date.UTC(2026, 2, 1))
    expect(storedTime(Date.UTC(2026, 2, 1))?.getTime()).toBe(Date.UTC(2026, 2, 1))
    // The right shape with a letter where a digit belongs is not read by position.
    expect(storedTime('2026-0x-01T09:00:00.000+00:00')).toBeNull()
    expect(storedTime('not a time')).toBeNull()
  })
})

describe('storedDate', () => {
  it('reads a DateTime column as new Date(value) does, on either backend', () => {
    for (const value of [
      '2026-03-01T09:00:00.000+00:00',
      '1999-12-31T23:59:59.999+00:00',
      '2026-03-01T09:00:00.000Z',
      '2026-03-01T09:00:00+02:00',
      new Date(Date.UTC(2026, 2, 1, 9)),
    ])
      expect(storedDate(value)).toEqual(new Date(value))
    expect(Number.isNaN(storedDate('not a time').getTime())).toBe(true)
  })
})
