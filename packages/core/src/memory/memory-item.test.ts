import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  DEFAULT_MEMORY_SETTINGS,
  MEMORY_CATEGORIES,
  MemorySettingsSchema,
  parseMemorySettings,
} from './memory-item.ts'

const issues = (input: unknown) => {
  try {
    parseMemorySettings(input)
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError)
    return (e as ValidationError).issues
  }
  throw new Error('expected a ValidationError')
}

describe('memory settings', () => {
  it('has spec 003 defaults', () => {
    expect(DEFAULT_MEMORY_SETTINGS).toEqual({
      verificationEnabled: true,
      jaccardDedupThreshold: 0.6,
      contradictionThreshold: 0.3,
      semanticDedupThreshold: 0.85,
      maxEntriesPerAgent: 500,
      recallTopK: 10,
      temporalDecayHalfLifeDays: 30,
      mmrLambda: 0.7,
      mmrFetchMultiplier: 2,
      conversationWindowDays: 0,
    })
    expect(parseMemorySettings(undefined)).toEqual(DEFAULT_MEMORY_SETTINGS)
    expect(parseMemorySettings({ recallTopK: 25 }).recallTopK).toBe(25)
  })

  it('lists the nine categories', () => {
    expect(MEMORY_CATEGORIES).toHaveLength(9)
    expect(MEMORY_CATEGORIES).toContain('correction')
    expect(MEMORY_CATEGORIES).toContain('past_conversation')
  })

  it('names the field and the limit it broke', () => {
    expect(issues({ recallTopK: 101 })[0]).toMatchObject({ field: 'settings.recallTopK', limit: 100 })
    expect(issues({ recallTopK: 0 })[0]).toMatchObject({ field: 'settings.recallTopK', limit: 1 })
    expect(issues({ mmrLambda: 1.01 })[0]).toMatchObject({ field: 'settings.mmrLambda', limit: 1 })
    expect(issues({ temporalDecayHalfLifeDays: 0.5 })[0]).toMatchObject({
      field: 'settings.temporalDecayHalfLifeDays',
      limit: 1,
    })
    expect(issues({ maxEntriesPerAgent: -1 })[0]).toMatchObject({
      field: 'settings.maxEntriesPerAgent',
      limit: 0,
    })
    expect(issues({ conversationWindowDays: 36_501 })[0]).toMatchObject({
      field: 'settings.conversationWindowDays',
      limit: 36_500,
    })
    expect(issues({ mmrFetchMultiplier: 11 })[0]).toMatchObject({
      field: 'settings.mmrFetchMultiplier',
      limit: 10,
    })
  })

  it('accepts the bounds themselves', () => {
    const edges = parseMemorySettings({
      jaccardDedupThreshold: 1,
      contradictionThreshold: 0,
      semanticDedupThreshold: 0,
      maxEntriesPerAgent: 1_000_000,
      recallTopK: 100,
      temporalDecayHalfLifeDays: 365,
      mmrLambda: 0,
      mmrFetchMultiplier: 1,
      conversationWindowDays: 36_500,
    })
    expect(edges.maxEntriesPerAgent).toBe(1_000_000)
  })

  it('requires the contradiction band to be below the dedup threshold', () => {
    expect(issues({ contradictionThreshold: 0.6 })[0]).toMatchObject({
      field: 'settings.contradictionThreshold',
      limit: 0.6,
    })
    expect(issues({ jaccardDedupThreshold: 0.2 })[0]).toMatchObject({
      field: 'settings.contradictionThreshold',
      limit: 0.2,
    })
    expect(parseMemorySettings({ contradictionThreshold: 0.59 }).contradictionThreshold).toBe(0.59)
  })

  it('keeps the schema usable for partial update inputs', () => {
    expect(MemorySettingsSchema.partial().parse({ mmrLambda: 0.5 })).toMatchObject({ mmrLambda: 0.5 })
  })
})
