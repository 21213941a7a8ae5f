import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  compressMessage,
  DEFAULT_COMPRESSOR_CONFIG,
  extractPreservedFacts,
  parseCompressorConfig,
  summarizeMessages,
} from './compressor.ts'

describe('preserved facts', () => {
  it('keeps each pattern of the spec', () => {
    const facts = extractPreservedFacts(
      [
        'Went to https://example.com/login and mailed user@example.com.',
        "Error: element not found while waiting for selector: '#login-form'",
        'The button has class="btn-primary" and id="submit-button".',
        'Server 192.168.1.100 listens on port 9100; job 120000 queued.',
      ].join('\n'),
    )
    expect(facts).toEqual(
      expect.arrayContaining([
        'https://example.com/login',
        'user@example.com',
        "Error: element not found while waiting for selector: '#login-form'",
        '#login-form',
        '.btn-primary',
        '#submit-button',
        '192.168.1.100',
        '9100',
        '120000',
      ]),
    )
  })

  it('does not repeat numbers inside a kept URL or IP, and ignores single digits', () => {
    const facts = extractPreservedFacts('see http://host.test:8080/a and 10.0.0.1, then 8080 again; 7 items')
    expect(facts).toEqual(['http://host.test:8080/a', '10.0.0.1'])
  })

  it('deduplicates in order of appearance', () => {
    expect(extractPreservedFacts('https://a.io then https://b.io then https://a.io')).toEqual([
      'https://a.io',
      'https://b.io',
    ])
  })
})

describe('single-message compression', () => {
  it('keeps messages of up to 200 characters as they are', () => {
    const text = 'x'.repeat(200)
    expect(compressMessage({ role: 'user', content: text })).toEqual({
      content: text,
      compressed: false,
      preserved: [],
    })
  })

  it('compresses at 201 characters', () => {
    expect(DEFAULT_COMPRESSOR_CONFIG.compressAboveChars).toBe(200)
    const result = compressMessage({ role: 'tool', content: `port 9100 ${'y'.repeat(191)}` })
    expect(result.compressed).toBe(true)
    // One line only: no "..." line; the number is preserved.
    expect(result.content).toBe(`[tool] port 9100 ${'y'.repeat(189)}…\n[preserved: 9100]`)
    expect(result.preserved).toEqual(['9100'])
  })

  it('omits the preserved line when nothing is worth preserving', () => {
    const first = 'word '.repeat(39).trim() // 194 characters: kept whole
    const result = compressMessage({ role: 'user', content: `${first}\nthe end of the line` })
    expect(result.content).toBe(`[user] ${first}\n... the end of the line`)
  })

  it('rejects out-of-range settings, naming the field and the limit', () => {
    try {
      parseCompressorConfig({ maxLineChars: 5 })
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError)
      expect((e as ValidationError).issues[0]).toMatchObject({ field: 'compressor.maxLineChars', limit: 10 })
    }
  })

  it('compresses past 200 characters into first line, last line and preserved facts', () => {
    const content = [
      'Navigate to https://example.com/login',
      'filler line '.repeat(30),
      'Done: clicked #submit-button',
    ].join('\n')
    const result = compressMessage({ role: 'assistant', content })
    expect(result.compressed).toBe(true)
    expect(result.content).toBe(
      '[assistant] Navigate to https://example.com/login\n... Done: clicked #submit-button\n[preserved: https://example.com/login, #submit-button]',
    )
  })

  it('caps each kept line at 200 characters', () => {
    const result = compressMessage({ role: 'user', content: `${'a'.repeat(300)}\n${'b'.repeat(300)}` })
    const [first, last] = result.content.split('\n')
    expect(first).toBe(`[user] ${'a'.repeat(199)}…`)
    expect(last).toBe(`... ${'b'.repeat(199)}…`)
  })

  it('follows the configured threshold', () => {
    expect(
      compressMessage({ role: 'user', content: 'x'.repeat(60) }, { compressAboveChars: 50 }).compressed,
    ).toBe(true)
  })
})

describe('batch summary', () => {
  it('follows the spec format', () => {
    const summary = summarizeMessages([
      { role: 'user', content: 'Navigate to https://example.com' },
      { role: 'assistant', content: 'Successfully navigated' },
      { role: 'user', content: 'Click the login button #login' },
      { role: 'tool', content: 'Error: timeout after 3000 ms' },
    ])
    expect(summary).toBe(
      [
        '[Summary of 4 messages]',
        'Actions: User: Navigate to https://example.com | User: Click the login button #login',
        'Results: Agent: Successfully navigated | Tool: Error: timeout after 3000 ms',
        'Key facts: https://example.com, #login, Error: timeout after 3000 ms',
      ].join('\n'),
    )
  })

  it('caps items at the configured count, and leaves out empty sections', () => {
    const messages = Array.from({ length: 3 }, (_, i) => ({
      role: 'assistant' as const,
      content: `reply ${i}`,
    }))
    expect(summarizeMessages(messages, { maxSummaryItems: 2 })).toBe(
      '[Summary of 3 messages]\nResults: Agent: reply 0 | Agent: reply 1 | (+1 more)',
    )
    expect(summarizeMessages(messages, { maxSummaryItems: 3 })).not.toContain('more')
  })

  it('stays bounded for large batches', () => {
    const messages = Array.from({ length: 100 }, (_, i) => ({
      role: 'user' as const,
      content: `request ${i} ${'x'.repeat(500)}`,
    }))
    const summary = summarizeMessages(messages)
    expect(summary).toContain('(+90 more)')
    expect(summary.length).toBeLessThan(1_500)
  })
})
