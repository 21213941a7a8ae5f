import { describe, expect, it } from 'vitest'
import type { MemoryEntry, Role } from '../types.ts'
import { analyzeEntries } from './analyzer.ts'
import { findRedundantEntries, jaccardSimilarity, wordSet } from './redundancy.ts'
import { hasKeyFacts, keyFactKind, scoreRelevance } from './relevance.ts'

const NOW = new Date('2026-01-15T12:00:00.000Z')
const ago = (ms: number) => new Date(NOW.getTime() - ms)
const HOUR = 3_600_000
const DAY = 86_400_000
// 20+ characters, no signal words: scores base + recency only.
const NEUTRAL = 'the weather report for today'

const score = (content: string, role: Role = 'user', age = 0) =>
  scoreRelevance({ content, role, timestamp: ago(age) }, NOW)

let nextId = 1
function entry(content: string, over: Partial<MemoryEntry> = {}): MemoryEntry {
  return {
    id: String(nextId++),
    type: 'short_term',
    role: 'user',
    content,
    tokenCount: 10,
    relevance: 0.5,
    isCompressed: false,
    timestamp: NOW,
    sessionId: 's',
    ...over,
  }
}

describe('relevance score', () => {
  it('adds +0.2 within the last hour, +0.1 within the last day, -0.1 after', () => {
    expect(score(NEUTRAL, 'user', HOUR)).toBe(0.7)
    expect(score(NEUTRAL, 'user', HOUR + 1)).toBe(0.6)
    expect(score(NEUTRAL, 'user', DAY)).toBe(0.6)
    expect(score(NEUTRAL, 'user', DAY + 1)).toBe(0.4)
  })

  it('adds each content signal, and only when present', () => {
    const old = DAY + 1 // base 0.5 - 0.1 = 0.4
    expect(score(`${NEUTRAL} error`, 'user', old)).toBe(0.55)
    expect(score(`${NEUTRAL} failed`, 'user', old)).toBe(0.55)
    expect(score(`${NEUTRAL} errors`, 'user', old)).toBe(0.4) // a whole word only
    expect(score(`${NEUTRAL} https://x.io`, 'user', old)).toBe(0.5)
    expect(score(`${NEUTRAL} http://x.io`, 'user', old)).toBe(0.5)
    expect(score(`${NEUTRAL} selector`, 'user', old)).toBe(0.5)
    expect(score(`${NEUTRAL} xpath`, 'user', old)).toBe(0.5)
    expect(score(`${NEUTRAL} password`, 'user', old)).toBe(0.6)
    expect(score(`${NEUTRAL} credential`, 'user', old)).toBe(0.6)
    expect(score(`${NEUTRAL} important`, 'user', old)).toBe(0.55)
    expect(score(`${NEUTRAL} critical`, 'user', old)).toBe(0.55)
  })

  it('subtracts 0.2 for content under 20 characters, not at 20', () => {
    expect(score('a'.repeat(19), 'user', DAY + 1)).toBe(0.2)
    expect(score('a'.repeat(20), 'user', DAY + 1)).toBe(0.4)
  })

  it('subtracts 0.3 for filler openings, as whole words, any case', () => {
    for (const filler of ['ok', 'yes', 'no', 'sure', 'thanks', 'hi', 'hello']) {
      expect(score(`${filler.toUpperCase()} then, let us carry on`, 'user', DAY + 1)).toBe(0.1)
    }
    expect(score('nothing unusual happened here', 'user', DAY + 1)).toBe(0.4) // "no" inside a word
  })

  it('boosts system (+0.1) and tool (+0.15) roles only', () => {
    expect(score(NEUTRAL, 'system', DAY + 1)).toBe(0.5)
    expect(score(NEUTRAL, 'tool', DAY + 1)).toBe(0.55)
    expect(score(NEUTRAL, 'assistant', DAY + 1)).toBe(0.4)
  })

  it('clamps to [0, 1]', () => {
    expect(score('ok', 'user', DAY + 1)).toBe(0) // 0.5 - 0.1 - 0.2 - 0.3 = -0.1
    expect(score('important: error at https://x.io selector, password', 'tool', 0)).toBe(1)
  })
})

describe('key facts', () => {
  it('detects each kind of key fact', () => {
    expect(keyFactKind('see https://example.com/login')).toBe('URL')
    expect(keyFactKind('the upload failed')).toBe('error')
    expect(keyFactKind('TypeError exception thrown')).toBe('error')
    expect(keyFactKind('click #submit-button now')).toBe('selector')
    expect(keyFactKind('use the xpath //div[@id]')).toBe('selector')
    expect(keyFactKind('call GET /users/42 first')).toBe('API reference')
    expect(keyFactKind('the endpoint is slow')).toBe('API reference')
    expect(keyFactKind('rotate the api key')).toBe('API reference')
    expect(keyFactKind('my password is in the vault')).toBe('credential')
    expect(keyFactKind('now do step 2 of the plan')).toBe('step reference')
    expect(keyFactKind('phase 3 begins')).toBe('step reference')
  })

  it('finds none in plain chatter', () => {
    expect(hasKeyFacts('sounds good, talk to you tomorrow')).toBe(false)
    expect(hasKeyFacts('the next step is lunch')).toBe(false)
  })
})

describe('redundancy', () => {
  it('computes Jaccard similarity on lowercase word sets', () => {
    expect(wordSet('The cat, the HAT!')).toEqual(new Set(['the', 'cat', 'hat']))
    expect(jaccardSimilarity(new Set(['a', 'b']), new Set(['b', 'c']))).toBeCloseTo(1 / 3)
    expect(jaccardSimilarity(new Set(), new Set())).toBe(1)
  })

  const words = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `w${i + from}`).join(' ')

  it('marks the older of a pair at or above 0.9, not below', () => {
    const older = entry(words(20), { timestamp: ago(1000) })
    const at = entry(words(18)) // 18 / 20 = 0.9
    expect(findRedundantEntries([at, older], 0.9)).toEqual([
      { entryId: older.id, duplicateOfId: at.id, similarity: 0.9 },
    ])
    const below = entry(words(17)) // 17 / 20 = 0.85
    expect(findRedundantEntries([older, below], 0.9)).toEqual([])
  })

  it('uses the configured threshold', () => {
    const a = entry(words(20), { timestamp: ago(1000) })
    const b = entry(words(17))
    expect(findRedundantEntries([a, b], 0.85)).toHaveLength(1)
  })
})

describe('suggested actions', () => {
  const old = ago(DAY + 1)

  it('compresses below the minimum relevance, not at it', () => {
    const below = entry('a'.repeat(19), { timestamp: old }) // 0.2
    const at = entry('a'.repeat(19), { timestamp: old, role: 'system' }) // 0.3
    const { actions } = analyzeEntries([below, at], NOW)
    expect(actions).toEqual([
      {
        entryId: below.id,
        action: 'compress',
        relevance: 0.2,
        reason: 'relevance 0.20 < 0.30 and not yet compressed',
      },
    ])
  })

  it('drops what is below the minimum and already compressed', () => {
    const e = entry('a'.repeat(19), { timestamp: old, isCompressed: true })
    expect(analyzeEntries([e], NOW).actions[0]).toMatchObject({
      action: 'drop',
      reason: 'relevance 0.20 < 0.30 and already compressed',
    })
  })

  it('follows the optimizer-tuned minimum relevance', () => {
    const e = entry(NEUTRAL, { timestamp: old }) // 0.4
    expect(analyzeEntries([e], NOW, { minRelevance: 0.4 }).actions).toEqual([])
    expect(analyzeEntries([e], NOW, { minRelevance: 0.41 }).actions[0]?.action).toBe('compress')
  })

  it('promotes short-term entries at 0.8 with key facts, not at 0.7 or without facts', () => {
    const promoted = entry('fetched https://example.com ok') // 0.5 + 0.2 + 0.1 = 0.8, URL
    const tooLow = entry('loaded https://example.org fine', { timestamp: ago(2 * HOUR) }) // 0.7
    const noFacts = entry('this is important to remember') // 0.85, no key fact
    const longTerm = entry('opened https://example.net too', { type: 'long_term' })
    const { actions } = analyzeEntries([promoted, tooLow, noFacts, longTerm], NOW)
    expect(actions).toEqual([
      {
        entryId: promoted.id,
        action: 'promote',
        relevance: 0.8,
        reason: 'short-term, relevance 0.80 >= 0.80 and has key facts (URL)',
      },
    ])
  })

  it('compresses the older of redundant entries, and gives one action per entry', () => {
    const first = entry('Opening the browser window and waiting for the page to load', {
      timestamp: ago(2000),
    })
    const second = entry('Opening the browser window and waiting for the page to load', {
      timestamp: ago(1000),
    })
    const { actions } = analyzeEntries([first, second], NOW)
    expect(actions).toHaveLength(1)
    expect(actions[0]).toMatchObject({ entryId: first.id, action: 'compress' })
    expect(actions[0]?.reason).toMatch(
      new RegExp(`^redundant with entry ${second.id} \\(similarity 1.00 >= 0.90\\)`),
    )
  })

  it('keeps a promoted long-term entry at its stored relevance as it ages', () => {
    const e = entry('visited https://example.com', {
      type: 'long_term',
      relevance: 1,
      timestamp: ago(10 * DAY),
    })
    const { scores, actions } = analyzeEntries([e], NOW)
    expect(scores[0]).toEqual({ entryId: e.id, relevance: 1, hasKeyFacts: true })
    expect(actions).toEqual([])
  })
})
