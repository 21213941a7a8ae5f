import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  compilePrivacyPatterns,
  findSensitiveData,
  guardTexts,
  luhnValid,
  SensitiveDataError,
} from './privacy-guard.ts'

describe('privacy guard', () => {
  it('finds SSNs in dashed or spaced form, not impossible ones', () => {
    expect(findSensitiveData('my ssn is 123-45-6789.').map((f) => f.kind)).toEqual(['ssn'])
    expect(findSensitiveData('123 45 6789').map((f) => f.kind)).toEqual(['ssn'])
    for (const fake of [
      '000-12-3456',
      '666-12-3456',
      '923-12-3456',
      '123-00-4567',
      '123-45-0000',
      '123-45 6789',
      '123456789',
    ]) {
      expect(findSensitiveData(fake)).toEqual([])
    }
  })

  it('finds card numbers only when the Luhn checksum holds', () => {
    expect(luhnValid('4111111111111111')).toBe(true)
    expect(luhnValid('4111111111111112')).toBe(false)
    expect(findSensitiveData('card 4111 1111 1111 1111 exp 12/30').map((f) => f.kind)).toEqual([
      'payment_card',
    ])
    expect(findSensitiveData('card 4111-1111-1111-1111').map((f) => f.kind)).toEqual(['payment_card'])
    expect(findSensitiveData('order 4111 1111 1111 1112')).toEqual([])
    expect(findSensitiveData('phone 555 0100 call 12 times')).toEqual([])
  })

  it("takes an agent's own patterns, validated and bounded", () => {
    const custom = compilePrivacyPatterns([{ name: 'employee_id', pattern: 'EMP-\\d{5}' }])
    expect(findSensitiveData('ask EMP-12345 about it', custom)).toEqual([
      { kind: 'employee_id', start: 4, end: 13 },
    ])
    const error = (() => {
      try {
        compilePrivacyPatterns([
          { name: 'Bad Name', pattern: '(' },
          { name: 'ssn', pattern: 'x'.repeat(201) },
        ])
      } catch (e) {
        return e as ValidationError
      }
    })()
    expect(error?.issues.map((i) => i.field)).toEqual([
      'patterns.0.name',
      'patterns.0.pattern',
      'patterns.1.name',
      'patterns.1.pattern',
    ])
    expect(() =>
      compilePrivacyPatterns(Array.from({ length: 21 }, (_, i) => ({ name: `p${i}`, pattern: 'x' }))),
    ).toThrow(ValidationError)
  })

  it('rejects, naming every field and kind, or redacts, or allows', () => {
    const texts = [
      { field: 'content', text: 'SSN 123-45-6789 and card 4111111111111111' },
      { field: 'metadata.note', text: 'nothing here' },
    ]
    const rejected = (() => {
      try {
        guardTexts(texts, { mode: 'reject', patterns: [] })
      } catch (e) {
        return e as SensitiveDataError
      }
    })()
    expect(rejected).toBeInstanceOf(SensitiveDataError)
    expect(rejected?.issues).toEqual([
      { field: 'content', message: 'contains a US social security number', limit: 'ssn' },
      { field: 'content', message: 'contains a payment card number', limit: 'payment_card' },
    ])
    expect(guardTexts(texts, { mode: 'redact', patterns: [] })).toEqual([
      'SSN [REDACTED:ssn] and card [REDACTED:payment_card]',
      'nothing here',
    ])
    expect(guardTexts(texts, { mode: 'allow', patterns: [] })).toEqual(texts.map((t) => t.text))
  })
})
