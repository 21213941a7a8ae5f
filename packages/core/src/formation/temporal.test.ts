import { describe, expect, it } from 'vitest'
import { extractValidity } from './temporal.ts'

// A Wednesday.
const said = new Date('2026-03-04T10:00:00Z')

describe('temporal validity from the text, relative to the message time', () => {
  it('reads "until Friday" as valid until the end of that Friday', () => {
    expect(extractValidity("I'm on call until Friday", said)).toEqual({
      validFrom: null,
      validUntil: new Date('2026-03-06T23:59:59.999Z'),
    })
  })

  it('reads "since 2019" as valid from that year', () => {
    const { validFrom, validUntil } = extractValidity('I have lived in Lisbon since 2019', said)
    expect(validFrom?.getUTCFullYear()).toBe(2019)
    expect(validUntil).toBeNull()
  })

  it('reads a range "from March 10 to March 20"', () => {
    const { validFrom, validUntil } = extractValidity('I am in Tokyo from March 10 to March 20', said)
    expect(validFrom?.toISOString().slice(0, 10)).toBe('2026-03-10')
    expect(validUntil?.toISOString().slice(0, 10)).toBe('2026-03-20')
  })

  it('gives no validity for a date that only says when something happened', () => {
    expect(extractValidity('I went camping last week', said)).toEqual({ validFrom: null, validUntil: null })
  })

  it('depends on the message time, not on when it is read', () => {
    const later = extractValidity('on call until Friday', new Date('2026-04-01T10:00:00Z'))
    expect(later.validUntil?.toISOString().slice(0, 10)).toBe('2026-04-03')
  })
})
