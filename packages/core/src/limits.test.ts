import { describe, expect, it } from 'vitest'
import { jsonDepth, LimitsSchema } from './limits.ts'
import { validateMetadata } from './sessions/session-manager.ts'

describe('jsonDepth', () => {
  it('counts nesting of objects and arrays, scalars being 0', () => {
    expect(jsonDepth('x')).toBe(0)
    expect(jsonDepth({})).toBe(1)
    expect(jsonDepth({ a: [1, { b: null }] })).toBe(3)
  })

  it('walks hostile nesting without recursion and stops once past the bound', () => {
    let deep: unknown = 1
    for (let i = 0; i < 200_000; i++) deep = [deep]
    expect(jsonDepth(deep)).toBe(200_000)
    expect(jsonDepth(deep, 32)).toBe(33)
  })
})

describe('validateMetadata', () => {
  it('refuses metadata nested past maxMetadataDepth, naming the field and the limit', () => {
    let deep: Record<string, unknown> = { leaf: 1 }
    for (let i = 1; i < 4; i++) deep = { d: deep }
    const limits = LimitsSchema.parse({ maxMetadataDepth: 3 })
    expect(validateMetadata(deep, 'metadata', limits)).toEqual([
      { field: 'metadata', message: 'must nest at most 3 levels deep (got 4 or more)', limit: 3 },
    ])
    expect(validateMetadata({ d: { d: { leaf: 1 } } }, 'metadata', limits)).toEqual([])
  })

  it('refuses 3,000 levels (6 KB, under the byte limit) with the default depth of 32', () => {
    let deep: Record<string, unknown> = { leaf: 1 }
    for (let i = 0; i < 3_000; i++) deep = { d: deep }
    expect(validateMetadata(deep, 'metadata')[0]?.limit).toBe(32)
  })
})
