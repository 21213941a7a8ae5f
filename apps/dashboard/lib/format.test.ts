import { describe, expect, it } from 'vitest'
import {
  fieldError,
  formatAverage,
  formatBytes,
  formatCount,
  formatExact,
  formatPercent,
  formatTokens,
  parseUtcDateTime,
  relativeTime,
} from './format'

describe('formatting for people', () => {
  it('shortens counts', () => {
    expect(formatCount(999)).toBe('999')
    expect(formatCount(1_200)).toBe('1.2K')
    expect(formatCount(1_000)).toBe('1K')
    expect(formatCount(2_500_000)).toBe('2.5M')
  })
  it('keeps fractions of averages, exact values and singular nouns', () => {
    expect(formatAverage(0.36)).toBe('0.36')
    expect(formatAverage(0)).toBe('0')
    expect(formatAverage(12.46)).toBe('12.5')
    expect(formatAverage(2_778)).toBe('2.8K')
    expect(formatExact(1_234)).toBe('1,234')
    expect(formatExact(1_249.5)).toBe('1,249.5')
    expect(formatTokens(1)).toBe('1 token')
    expect(formatTokens(0)).toBe('0 tokens')
    expect(formatTokens(2)).toBe('2 tokens')
  })
  it('shows sizes in B, KB and MB', () => {
    expect(formatBytes(512)).toBe('512 B')
    expect(formatBytes(1024)).toBe('1 KB')
    expect(formatBytes(6_200)).toBe('6.1 KB')
    expect(formatBytes(3_500_000)).toBe('3.3 MB')
  })
  it('formats ratios and relative times', () => {
    expect(formatPercent(0.65)).toBe('65%')
    expect(formatPercent(0.012)).toBe('1.2%')
    const now = new Date('2026-01-01T12:00:00Z')
    expect(relativeTime('2026-01-01T11:57:00Z', now)).toBe('3 minutes ago')
    expect(relativeTime('2026-01-13T12:00:00Z', now)).toBe('in 12 days')
  })
  it('finds the error of a field, also when nested', () => {
    const issues = [{ field: 'input.confidence', message: 'must be between 0.0 and 1.0' }]
    expect(fieldError(issues, 'confidence')).toBe('must be between 0.0 and 1.0')
    expect(fieldError(issues, 'key')).toBeUndefined()
  })
})

describe('parseUtcDateTime', () => {
  it('reads a datetime-local value as UTC, keeps an explicit offset, and tells empty from invalid', () => {
    expect(parseUtcDateTime('2026-01-15T10:30')?.toISOString()).toBe('2026-01-15T10:30:00.000Z')
    expect(parseUtcDateTime('2026-01-15T10:30+02:00')?.toISOString()).toBe('2026-01-15T08:30:00.000Z')
    expect(parseUtcDateTime('')).toBeNull()
    expect(parseUtcDateTime('  ')).toBeNull()
    expect(parseUtcDateTime(undefined)).toBeNull()
    expect(parseUtcDateTime('soon')).toBeUndefined()
  })
})
