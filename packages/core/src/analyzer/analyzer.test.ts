import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import type { MemoryEntry, Role } from '../types.ts'
import { analyzeEntries } from './analyzer.ts'
import { findRedundantEntries, jaccardSimilarity, wordSet } from './redundancy.ts'
import {
  actualError,
  DEFAULT_ANALYZER_CONFIG,
  hasKeyFacts,
  keyFactKind,
  keyFacts,
  parseAnalyzerConfig,
  scoreRelevance,
} from './relevance.ts'

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

  it('counts a timestamp ahead of now (clock skew) as the last hour', () => {
    expect(score(NEUTRAL, 'user', -HOUR)).toBe(0.7)
  })

  it('uses configured recency windows and weights', () => {
    const config = parseAnalyzerConfig({ lastHourMs: 10 * 60_000, lastDayMs: 2 * HOUR, olderPenalty: -0.2 })
    const at = (age: number) =>
      scoreRelevance({ content: NEUTRAL, role: 'user', timestamp: ago(age) }, NOW, config)
    expect(at(10 * 60_000)).toBe(0.7)
    expect(at(10 * 60_000 + 1)).toBe(0.6)
    expect(at(2 * HOUR)).toBe(0.6)
    expect(at(2 * HOUR + 1)).toBe(0.3)
  })

  it('rejects out-of-range settings, naming the field and the limit', () => {
    expect(DEFAULT_ANALYZER_CONFIG).toMatchObject({
      baseScore: 0.5,
      redundancyThreshold: 0.9,
      minRelevance: 0.3,
      promoteThreshold: 0.8,
      shortContentChars: 20,
    })
    try {
      parseAnalyzerConfig({ minRelevance: 1.5, errorBoost: -2 })
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError)
      expect((e as ValidationError).issues).toEqual([
        expect.objectContaining({ field: 'analyzer.errorBoost', limit: -1 }),
        expect.objectContaining({ field: 'analyzer.minRelevance', limit: 1 }),
      ])
    }
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

  it('marks at 27/30 = 0.9 but not at 26/29 just under it', () => {
    const base = (n: number) => entry(words(n), { timestamp: ago(1000) })
    expect(findRedundantEntries([base(30), entry(words(27))], 0.9)).toHaveLength(1)
    const justUnder = findRedundantEntries([base(29), entry(words(26))], 0.9)
    expect(26 / 29).toBeLessThan(0.9)
    expect(justUnder).toEqual([])
  })

  it('compares all pairs, marking each older duplicate once', () => {
    const text = 'open the settings page and wait'
    const a = entry(text, { timestamp: ago(3000) })
    const b = entry(text, { timestamp: ago(2000) })
    const c = entry(text, { timestamp: ago(1000) })
    const marked = findRedundantEntries([c, a, b], 0.9)
    expect(marked.map((m) => m.entryId).sort()).toEqual([a.id, b.id].sort())
    expect(marked.find((m) => m.entryId === b.id)?.duplicateOfId).toBe(c.id)
  })

  it('finds exactly the pairs an all-pairs scan finds, at any threshold', () => {
    let state = 12345
    const random = () => {
      state = (state * 1664525 + 1013904223) >>> 0
      return state / 2 ** 32
    }
    const vocabulary = Array.from({ length: 14 }, (_, i) => `v${i}`)
    const sample = Array.from({ length: 150 }, () =>
      entry(
        Array.from({ length: Math.floor(random() * 12) }, () => vocabulary[Math.floor(random() * 14)]).join(
          ' ',
        ),
        { timestamp: ago(Math.floor(random() * 5) * 1000) },
      ),
    )
    for (const threshold of [0.3, 0.5, 0.7, 0.75, 0.8, 0.9, 1]) {
      const sets = sample.map((e) => wordSet(e.content))
      const expected = new Set<string>()
      for (let i = 0; i < sample.length; i++)
        for (let j = i + 1; j < sample.length; j++)
          if (jaccardSimilarity(sets[i]!, sets[j]!) >= threshold) {
            const [ti, tj] = [sample[i]!.timestamp.getTime(), sample[j]!.timestamp.getTime()]
            expected.add(sample[ti < tj || (ti === tj && i < j) ? i : j]!.id)
          }
      const found = findRedundantEntries(sample, threshold)
      expect(found.map((r) => r.entryId).sort()).toEqual([...expected].sort())
      expect(found.length).toBeGreaterThan(0)
      for (const r of found) expect(r.similarity).toBeGreaterThanOrEqual(threshold)
    }
  })

  it('pairs entries with no words with each other only', () => {
    const a = entry('', { timestamp: ago(2000) })
    const b = entry('!!', { timestamp: ago(1000) })
    const c = entry('some words here')
    expect(findRedundantEntries([a, b, c], 0.9)).toEqual([
      { entryId: a.id, duplicateOfId: b.id, similarity: 1 },
    ])
  })

  it('marks an older entry as a duplicate of its most similar newer one', () => {
    const older = entry(words(20), { timestamp: ago(3000) })
    const close = entry(words(19), { timestamp: ago(2000) }) // 0.95
    const exact = entry(words(20), { timestamp: ago(1000) }) // 1.0
    const marked = findRedundantEntries([older, close, exact], 0.9)
    expect(marked.find((m) => m.entryId === older.id)).toEqual({
      entryId: older.id,
      duplicateOfId: exact.id,
      similarity: 1,
    })
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
        keyFacts: [{ kind: 'URL', text: 'https://example.com' }],
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

  it('gives low relevance precedence over redundancy, and redundancy over promotion', () => {
    const lowOld = entry('ok then, carry on please', { timestamp: ago(DAY + 3000) }) // 0.1
    const lowNew = entry('ok then, carry on please', { timestamp: ago(DAY + 1000) })
    const richOld = entry('fetched https://example.com/a done', { timestamp: ago(2000) }) // 0.8, URL
    const richNew = entry('fetched https://example.com/a done', { timestamp: ago(1000) })
    const { actions } = analyzeEntries([lowOld, lowNew, richOld, richNew], NOW)
    expect(actions.map((a) => [a.entryId, a.action, a.reason.split(' ')[0]])).toEqual([
      [lowOld.id, 'compress', 'relevance'],
      [lowNew.id, 'compress', 'relevance'],
      [richOld.id, 'compress', 'redundant'],
      [richNew.id, 'promote', 'short-term,'],
    ])
  })

  it('leaves an already compressed redundant entry alone', () => {
    const text = 'Opening the browser window and waiting for the page to load'
    const older = entry(text, { timestamp: ago(2000), isCompressed: true })
    const newer = entry(text, { timestamp: ago(1000) })
    expect(analyzeEntries([older, newer], NOW).actions).toEqual([])
  })

  it('follows the configured promotion bar', () => {
    const e = entry('loaded https://example.org fine', { timestamp: ago(2 * HOUR) }) // 0.7
    expect(analyzeEntries([e], NOW, { promoteThreshold: 0.7 }).actions[0]?.action).toBe('promote')
    expect(analyzeEntries([e], NOW, { promoteThreshold: 0.71 }).actions).toEqual([])
  })

  it('scores a long-term entry by its computed score when that is higher than the stored one', () => {
    const e = entry('visited https://example.com', { type: 'long_term', relevance: 0.1 })
    expect(analyzeEntries([e], NOW).scores[0]?.relevance).toBe(0.8)
    const stale = entry('a'.repeat(19), { type: 'long_term', relevance: 0.2, timestamp: old })
    expect(analyzeEntries([stale], NOW).actions[0]).toMatchObject({ action: 'compress', relevance: 0.2 })
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

describe('key-fact modes', () => {
  // Labelled messages: does the text carry an actual error (true) or only talk about errors (false)?
  const LABELLED: [string, boolean][] = [
    ['Error: connect ECONNREFUSED 127.0.0.1:5432', true],
    ["TypeError: Cannot read properties of undefined (reading 'id')", true],
    ['The build failed with exit code 137 after the test step', true],
    ['    at processTicksAndRejections (node:internal/process/task_queues:95:5)', true],
    ['Traceback (most recent call last):\n  File "etl.py", line 42, in <module>', true],
    ['the upload returned HTTP 503 twice this morning', true],
    ['java.lang.NullPointerException thrown in OrderService', true],
    ['error[E0382]: borrow of moved value: `config`', true],
    ['Support ticket says error code: 0x80070005 when installing', true],
    ['Sorry to hear that, Dana. Can you share the exact error message you see?', false],
    ['Did you get any error when you tried again?', false],
    ['If it failed, tell me and we will look at the logs together.', false],
    ['Errors are part of learning; no exception for anyone.', false],
    ['We should handle error cases better in the next sprint', false],
    ['Was there an error or did it just hang?', false],
  ]

  // Share of messages where the mode's "error" key fact agrees with the label.
  const measure = (mode: 'spec' | 'strict') => {
    let truePositives = 0
    let falsePositives = 0
    let falseNegatives = 0
    for (const [text, isError] of LABELLED) {
      const flagged = keyFacts(text, mode).some((fact) => fact.kind === 'error')
      if (flagged && isError) truePositives++
      else if (flagged) falsePositives++
      else if (isError) falseNegatives++
    }
    return {
      precision: truePositives / (truePositives + falsePositives),
      recall: truePositives / (truePositives + falseNegatives),
    }
  }

  it('spec mode (the default) counts the word; strict mode only an actual error', () => {
    const spec = measure('spec')
    const strict = measure('strict')
    // Spec 000 flags all 6 questions and remarks, and misses the errors spelt without its words
    // (TypeError, a stack frame, a traceback, HTTP 503, NullPointerException): 4 of 10 flagged
    // are errors, 4 of 9 errors are flagged.
    expect(spec).toEqual({ precision: 4 / 10, recall: 4 / 9 })
    expect(strict).toEqual({ precision: 1, recall: 1 })
  })

  it('names the text of the actual error it found', () => {
    expect(actualError('Error: connect ECONNREFUSED 127.0.0.1:5432\nnext line')).toBe(
      'Error: connect ECONNREFUSED 127.0.0.1:5432',
    )
    expect(actualError('the job exited with code 2 overnight')).toBe('exited with code 2')
    expect(actualError('Can you share the exact error message?')).toBeNull()
  })

  it('is off by default, and strict mode stops the question being promoted', () => {
    expect(DEFAULT_ANALYZER_CONFIG.keyFactMode).toBe('spec')
    const question = entry('Sorry to hear that, Dana. Can you share the exact error message you see?', {
      role: 'assistant',
    })
    const stackTrace = entry('Error: connect ECONNREFUSED 127.0.0.1:5432 when the worker starts')
    const byDefault = analyzeEntries([question, stackTrace], NOW).actions
    expect(byDefault.map((a) => [a.entryId, a.action])).toEqual([
      [question.id, 'promote'],
      [stackTrace.id, 'promote'],
    ])
    expect(byDefault[0]?.keyFacts).toEqual([{ kind: 'error', text: 'error' }])
    const strict = analyzeEntries([question, stackTrace], NOW, { keyFactMode: 'strict' }).actions
    expect(strict).toEqual([
      {
        entryId: stackTrace.id,
        action: 'promote',
        relevance: 0.85,
        reason: 'short-term, relevance 0.85 >= 0.80 and has key facts (error)',
        keyFacts: [
          { kind: 'error', text: 'Error: connect ECONNREFUSED 127.0.0.1:5432 when the worker starts' },
        ],
      },
    ])
    // Strict mode also withholds the relevance boost from the question: 0.5 + 0.2, no +0.15.
    expect(scoreRelevance(question, NOW, parseAnalyzerConfig({ keyFactMode: 'strict' }))).toBe(0.7)
    expect(() => parseAnalyzerConfig({ keyFactMode: 'loose' as 'spec' })).toThrow(ValidationError)
  })
})
