import { describe, expect, it } from 'vitest'
import { extractGraphOffline } from './extract.ts'
import { lookupWords, restoreKnownNames } from './known-names.ts'

describe('restoreKnownNames', () => {
  it('writes a known name back in its capitals where the text wrote it in lower case', () => {
    expect(restoreKnownNames('dana moved to Lisbon in March 2025.', ['Dana Kim', 'Dana'])).toBe(
      'Dana moved to Lisbon in March 2025.',
    )
    expect(restoreKnownNames('i met dana kim at acme corp.', ['Dana Kim', 'Acme Corp'])).toBe(
      'i met Dana Kim at Acme Corp.',
    )
  })

  it('leaves lower-case entities, parts of words and deliberate capitals alone', () => {
    expect(restoreKnownNames('she loves her pottery class', ['pottery class'])).toBe(
      'she loves her pottery class',
    )
    expect(restoreKnownNames('the danaides were daughters', ['Dana'])).toBe('the danaides were daughters')
    expect(restoreKnownNames('DANA called', ['Dana'])).toBe('DANA called')
    expect(restoreKnownNames('nothing here', [])).toBe('nothing here')
  })

  it('lets the offline extractor read a lower-case mention of a known person', () => {
    const reference = new Date('2026-01-01T00:00:00Z')
    const plain = extractGraphOffline('dana moved to Lisbon in March 2025.', { reference })
    expect(plain.relations).toHaveLength(0)
    const restored = extractGraphOffline(restoreKnownNames('dana moved to Lisbon in March 2025.', ['Dana']), {
      reference,
    })
    expect(restored.relations.map((r) => `${r.source} ${r.relation} ${r.target}`)).toEqual([
      'Dana lives in Lisbon',
    ])
  })

  it('stays linear on a long text of repeated first words', () => {
    const text = 'dana '.repeat(20_000)
    const started = performance.now()
    const names = ['Dana', ...Array.from({ length: 199 }, (_, i) => `Dana ${'X'.repeat((i % 5) + 1)} Kim`)]
    const out = restoreKnownNames(text, names)
    expect(out.startsWith('Dana Dana')).toBe(true)
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  it('looks names up by the distinct words of the text', () => {
    expect(lookupWords('Dana met dana at Acme; a b')).toEqual(['dana', 'met', 'at', 'acme'])
  })
})
