import { RE2JS } from 're2js'
import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  compilePrivacyPatterns,
  findSensitiveData,
  guardTexts,
  luhnValid,
  MAX_PRIVACY_PATTERN_PROGRAM_SIZE,
  MAX_PRIVACY_POLICY_PROGRAM_SIZE,
  PrivacyScanTimeoutError,
  SensitiveDataError,
} from './privacy-guard.ts'

function thrown<E>(fn: () => unknown): E | undefined {
  try {
    fn()
  } catch (e) {
    return e as E
  }
  return undefined
}

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

  it('runs custom patterns on RE2, so a catastrophic pattern scans 100,000 characters in linear time', () => {
    const [evil] = compilePrivacyPatterns([{ name: 'evil', pattern: '(a+)+$' }])
    // Compiled by RE2, not V8's backtracking engine, where this input takes exponential time.
    expect(evil?.regex).toBeInstanceOf(RE2JS)
    expect(evil?.programSize).toBeLessThanOrEqual(MAX_PRIVACY_PATTERN_PROGRAM_SIZE)
    const attack = `${'a'.repeat(100_000)}!`
    expect(findSensitiveData(attack, evil ? [evil] : [])).toEqual([])
    expect(guardTexts([{ field: 'content', text: attack }], { mode: 'reject', patterns: [evil!] })).toEqual([
      attack,
    ])
    // The same answers V8 gives where V8 is fast: RE2 changes the cost, not the meaning.
    for (const text of ['aaa', 'xx aaaa', 'aaa!', '']) {
      const expected = [...text.matchAll(/(a+)+$/g)].map((m) => ({
        kind: 'evil',
        start: m.index,
        end: m.index + m[0].length,
      }))
      expect(findSensitiveData(text, [evil!])).toEqual(expected.filter((f) => f.end > f.start))
    }
  })

  it('keeps JavaScript pattern syntax and reports UTF-16 offsets', () => {
    const custom = compilePrivacyPatterns([
      { name: 'accented', pattern: '\\u00e9t\\u00e9' },
      { name: 'employee', pattern: '(?<prefix>EMP)-\\d{5}' },
      { name: 'empty', pattern: 'x*' },
      // An escaped backslash before a digit, and (?= inside a class, are neither backreference
      // nor lookahead.
      { name: 'path', pattern: 'C:\\\\1[(?=]' },
    ])
    expect(findSensitiveData('😀 été EMP-12345 C:\\1(', custom)).toEqual([
      { kind: 'accented', start: 3, end: 6 },
      { kind: 'employee', start: 7, end: 16 },
      { kind: 'path', start: 17, end: 22 },
    ])
    // `\q` would be read as a plain q by the translation: refused as JavaScript (unicode mode) does.
    expect(() => compilePrivacyPatterns([{ name: 'q', pattern: '\\q' }])).toThrow(
      /"q" is not a valid regular expression/,
    )
  })

  it('refuses patterns RE2 cannot run in linear time, naming the pattern and why', () => {
    const error = thrown<ValidationError>(() =>
      compilePrivacyPatterns([
        { name: 'backref', pattern: '(a)\\1' },
        { name: 'named_backref', pattern: '(?<x>a)\\k<x>' },
        { name: 'ahead', pattern: 'foo(?=bar)' },
        { name: 'behind', pattern: '(?<!x)y' },
        { name: 'fine', pattern: 'EMP-\\d{5}' },
      ]),
    )
    expect(error).toBeInstanceOf(ValidationError)
    expect(error?.issues.map((i) => i.field)).toEqual([
      'patterns.0.pattern',
      'patterns.1.pattern',
      'patterns.2.pattern',
      'patterns.3.pattern',
    ])
    expect(error?.issues[0]?.message).toMatch(/"backref".*linear-time \(RE2\).*backreferences/)
    expect(error?.issues[1]?.message).toMatch(/"named_backref".*backreferences/)
    expect(error?.issues[2]?.message).toMatch(/"ahead".*lookahead and lookbehind/)
    expect(error?.issues[3]?.message).toMatch(/"behind".*lookahead and lookbehind/)
  })

  it('bounds the compiled size of each pattern and of the whole policy', () => {
    const large = thrown<ValidationError>(() =>
      compilePrivacyPatterns([{ name: 'wide', pattern: '[^!]{500}!' }]),
    )
    expect(large?.issues).toEqual([
      expect.objectContaining({
        field: 'patterns.0.pattern',
        limit: MAX_PRIVACY_PATTERN_PROGRAM_SIZE,
        message: expect.stringMatching(/"wide" compiles to 50\d instructions, more than 200/),
      }),
    ])
    const many = Array.from({ length: 6 }, (_, i) => ({ name: `p${i}`, pattern: '\\w{190}' }))
    const total = thrown<ValidationError>(() => compilePrivacyPatterns(many))
    expect(total?.issues).toEqual([
      expect.objectContaining({ field: 'patterns', limit: MAX_PRIVACY_POLICY_PROGRAM_SIZE }),
    ])
    expect(compilePrivacyPatterns(many.slice(0, 5))).toHaveLength(5)
  })

  it('refuses a write whose scan runs past the time limit, naming the field', () => {
    const patterns = compilePrivacyPatterns([
      { name: 'one', pattern: 'x' },
      { name: 'two', pattern: 'y' },
    ])
    let tick = 0
    // Each reading of the injected clock is 400 ms later: the third scan starts past 1 s.
    const deadline = { now: () => tick++ * 400, timeLimitMs: 1_000 }
    const texts = [
      { field: 'content', text: 'plain' },
      { field: 'metadata.note', text: 'plain' },
    ]
    const error = thrown<PrivacyScanTimeoutError>(() =>
      guardTexts(texts, { mode: 'redact', patterns }, deadline),
    )
    expect(error).toBeInstanceOf(PrivacyScanTimeoutError)
    expect(error).toBeInstanceOf(ValidationError)
    expect(error?.issues).toEqual([
      expect.objectContaining({
        field: 'metadata.note',
        limit: 1_000,
        message: expect.stringMatching(/more than 1000 ms/),
      }),
    ])
    // Under the limit nothing changes.
    expect(guardTexts(texts, { mode: 'redact', patterns }, { now: () => 0, timeLimitMs: 1_000 })).toEqual([
      'plain',
      'plain',
    ])
  })
})
