import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  DEFAULT_MAINTENANCE_RULES,
  dueMaintenanceSlot,
  effectiveRetentionDays,
  nextMaintenanceRun,
  parseMaintenanceRules,
  retentionCutoff,
} from './rules.ts'

describe('maintenance rules', () => {
  it("has spec 002's defaults", () => {
    expect(DEFAULT_MAINTENANCE_RULES).toMatchObject({
      enabled: true,
      retentionDays: 90,
      cleanupInterval: '0 3 * * *',
      compactionEnabled: true,
      vectorRebuildDeletedShare: 0.2,
    })
  })

  it('names the field of a bad cron expression and of a retention out of bounds', () => {
    const cron = (() => {
      try {
        parseMaintenanceRules({ cleanupInterval: 'every night' })
      } catch (error) {
        return error
      }
    })() as ValidationError
    expect(cron).toBeInstanceOf(ValidationError)
    expect(cron.issues[0]).toMatchObject({ field: 'maintenance.cleanupInterval' })
    expect(() => parseMaintenanceRules({ retentionDays: 0 })).toThrow(/retentionDays/)
    expect(() => parseMaintenanceRules({ retentionDays: 36_501 })).toThrow(/retentionDays/)
    expect(parseMaintenanceRules({ cleanupInterval: '*/15 * * * *' }).cleanupInterval).toBe('*/15 * * * *')
  })

  it("prefers the agent's own retention", () => {
    expect(effectiveRetentionDays(DEFAULT_MAINTENANCE_RULES, {})).toBe(90)
    expect(effectiveRetentionDays(DEFAULT_MAINTENANCE_RULES, { retentionDays: null })).toBe(90)
    expect(effectiveRetentionDays(DEFAULT_MAINTENANCE_RULES, { retentionDays: 7 })).toBe(7)
  })

  it('counts the cutoff in whole days back from now', () => {
    const now = new Date('2026-05-10T12:00:00Z')
    expect(retentionCutoff(now, 90).toISOString()).toBe('2026-02-09T12:00:00.000Z')
  })

  it('gives the next occurrence on UTC, strictly after the instant', () => {
    expect(nextMaintenanceRun('0 3 * * *', new Date('2026-05-10T02:59:00Z')).toISOString()).toBe(
      '2026-05-10T03:00:00.000Z',
    )
    expect(nextMaintenanceRun('0 3 * * *', new Date('2026-05-10T03:00:00Z')).toISOString()).toBe(
      '2026-05-11T03:00:00.000Z',
    )
  })

  it('finds the newest due slot since the last one handled, or none', () => {
    const since = new Date('2026-05-10T03:00:00Z')
    expect(dueMaintenanceSlot('0 3 * * *', since, new Date('2026-05-11T02:59:59Z'))).toBeNull()
    expect(dueMaintenanceSlot('0 3 * * *', since, new Date('2026-05-11T03:00:00Z'))?.toISOString()).toBe(
      '2026-05-11T03:00:00.000Z',
    )
    // Three nights missed: one run, for the newest.
    expect(dueMaintenanceSlot('0 3 * * *', since, new Date('2026-05-13T09:00:00Z'))?.toISOString()).toBe(
      '2026-05-13T03:00:00.000Z',
    )
  })
})
