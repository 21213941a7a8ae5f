import { describe, expect, it } from 'vitest'
import { createTokenCounter } from '../budget/tokenizer.ts'
import { ValidationError } from '../errors.ts'
import { DEFAULT_TRAJECTORY_RULES as R } from './rules.ts'
import {
  type AppFactLine,
  assembleRunContext,
  contextSelectors,
  describeStep,
  formatAppKnowledge,
  formatHints,
  formatKnownSelectors,
  formatReferenceTrajectory,
  formatSessionHistory,
  RUN_CONTEXT_SEPARATOR,
  type RunContextMaterial,
  type RunSessionLine,
} from './run-context.ts'

const counter = createTokenCounter('o200k_base')
const count = (text: string) => counter.count(text)

const session = (i: number, more: Partial<RunSessionLine> = {}): RunSessionLine => ({
  goal: `Goal number ${i}`,
  outcome: `Did thing ${i}`,
  success: i % 2 === 0,
  finalUrl: `https://shop.example.com/page/${i}`,
  turnsUsed: 3 + i,
  durationMs: 12_400 + i * 1_000,
  endedAt: new Date(Date.UTC(2026, 4, 31 - i, 14, 2, 59)),
  ...more,
})

const material = (): RunContextMaterial => ({
  sessions: [0, 1, 2, 3, 4].map((i) => session(i)),
  reference: {
    goal: 'Search for smart watch reviews',
    steps: Array.from({ length: 8 }, (_, i) => ({
      action: i % 2 ? 'type' : 'click',
      selector: `#field-${i}`,
      value: i % 2 ? `text ${i}` : null,
      url: 'https://shop.example.com/',
      verified: i % 3 === 0,
    })),
  },
  facts: Array.from({ length: 6 }, (_, i) => ({
    type: (['TIMING', 'QUIRK'] as const)[i % 2] as AppFactLine['type'],
    key: `key-${i}`,
    value: `value number ${i}`,
    confidence: 0.95 - i * 0.05,
    sources: 6 - i,
  })),
  selectors: Array.from({ length: 5 }, (_, i) => ({
    element: `button "Action ${i}"`,
    selector: `[data-testid='action-${i}']`,
    successCount: 10 - i,
  })),
  hints: ['Dismiss the cookie banner first', 'Prefer the search box\nover the menu'],
})

describe('the sections as the documented system writes them', () => {
  it('SESSION HISTORY: the two most recent in full with their final URL, older ones on one line', () => {
    const long = `${'x'.repeat(79)}yz and more`
    const text = formatSessionHistory(
      [
        session(0, { outcome: 'Created the project\nwith a task list' }),
        session(1, { finalUrl: null }),
        session(2, { outcome: long, goal: 'A goal\nover two lines' }),
        session(3, { outcome: 'short' }),
      ],
      R,
    )
    expect(text).toBe(
      [
        'SESSION HISTORY (4 previous runs on this site):',
        '[2026-05-31 14:02] ✓ "Goal number 0" → Created the project\nwith a task list (3 turns, 12s)',
        '  Final URL: https://shop.example.com/page/0',
        '[2026-05-30 14:02] ✗ "Goal number 1" → Did thing 1 (4 turns, 13s)',
        `[2026-05-29 14:02] ✓ "A goal over two lines" → ${'x'.repeat(79)}y… (5 turns, 14s)`,
        '[2026-05-28 14:02] ✗ "Goal number 3" → short (6 turns, 15s)',
      ].join('\n'),
    )
    expect(formatSessionHistory([session(0)], { sessionHistoryFull: 0 })).toBe(
      'SESSION HISTORY (1 previous run on this site):\n[2026-05-31 14:02] ✓ "Goal number 0" → Did thing 0 (3 turns, 12s)',
    )
    expect(formatSessionHistory([], R)).toBe('')
  })

  it('REFERENCE TRAJECTORY: goal, numbered steps with their page and [verified], and what was left out', () => {
    const reference = {
      goal: 'Search for smart watch reviews',
      steps: [
        { action: 'click', selector: '@s3f51', value: null, url: 'https://aliexpress.com', verified: true },
        {
          action: 'type',
          selector: '@s3f51',
          value: 'smart watch',
          url: 'https://aliexpress.com',
          verified: true,
        },
        { action: 'press', selector: '@s3f51', value: 'Enter', url: null, verified: false },
      ],
    }
    expect(formatReferenceTrajectory(reference)).toBe(
      [
        'REFERENCE TRAJECTORY — A similar task was completed before:',
        'Goal: Search for smart watch reviews',
        'Steps (3 total):',
        '  1. click @s3f51 (on https://aliexpress.com) [verified]',
        '  2. type "smart watch" into @s3f51 (on https://aliexpress.com) [verified]',
        '  3. press Enter on @s3f51',
        'Use this as a guide, but adapt to the current page state.',
      ].join('\n'),
    )
    expect(formatReferenceTrajectory(reference, 1).split('\n').slice(3, 5)).toEqual([
      '  1. click @s3f51 (on https://aliexpress.com) [verified]',
      '  … 2 more steps not shown',
    ])
    expect(formatReferenceTrajectory(null)).toBe('')
  })

  it('describes steps of any acting agent', () => {
    const step = (action: string, selector: string | null, value: string | null) => ({
      action,
      selector,
      value,
      url: null,
      verified: null,
    })
    expect(describeStep(step('navigate', null, 'https://a.example/b'))).toBe(
      'navigate to https://a.example/b',
    )
    expect(describeStep(step('scroll', null, 'down'))).toBe('scroll down')
    expect(describeStep(step('wait', null, '500'))).toBe('wait 500ms')
    expect(describeStep(step('press', null, 'Escape'))).toBe('press Escape')
    expect(describeStep(step('run_tool', 'git', 'status --short'))).toBe('run_tool git "status --short"')
  })

  it('APP KNOWLEDGE grouped by type, KNOWN SELECTORS and HINTS', () => {
    expect(formatAppKnowledge(material().facts.slice(0, 3))).toBe(
      [
        'APP KNOWLEDGE (learned from previous runs):',
        '  TIMING:',
        '    - key-0: value number 0 (95% confidence, 6 observations)',
        '    - key-2: value number 2 (85% confidence, 4 observations)',
        '  QUIRK:',
        '    - key-1: value number 1 (90% confidence, 5 observations)',
      ].join('\n'),
    )
    expect(formatKnownSelectors(material().selectors.slice(0, 1))).toBe(
      `KNOWN SELECTORS (from previous runs):\n  - button "Action 0" → [data-testid='action-0'] (used 10x)`,
    )
    expect(formatHints(material().hints)).toBe(
      'HINTS (from previous runs):\n  - Dismiss the cookie banner first\n  - Prefer the search box\n    over the menu',
    )
  })

  it('offers the best known-good selector per element, stable before volatile, up to the limit', () => {
    const at = new Date('2026-05-01T00:00:00Z')
    const s = (element: string, selector: string, successCount: number, consecutiveFailures = 0) => ({
      element,
      selector,
      successCount,
      failureCount: consecutiveFailures,
      consecutiveFailures,
      lastUsedAt: at,
    })
    const chosen = contextSelectors(
      [
        s('button "Go"', '@e12', 4),
        s('button "Go"', '#go', 4),
        s('link "Home"', '#home', 9, 3),
        s('link "Home"', 'a.home', 2),
        s('input "Q"', '#q', 0),
        s('tab "Two"', '#two', 1),
      ],
      R,
      2,
    )
    expect(chosen.map((c) => c.selector)).toEqual(['#go', 'a.home'])
  })
})

describe('assembly under the token budget', () => {
  const everything = assembleRunContext({ material: material(), budgetTokens: 100_000 }, R, count)

  it('keeps everything under a large budget, in priority order, with per-section accounting', () => {
    expect(everything.sections.map((s) => s.section)).toEqual([
      'SESSION_HISTORY',
      'REFERENCE_TRAJECTORY',
      'APP_KNOWLEDGE',
      'KNOWN_SELECTORS',
      'HINTS',
    ])
    expect(everything.sections.map((s) => s.priority)).toEqual([50, 40, 30, 25, 20])
    expect(everything.text).toBe(everything.sections.map((s) => s.text).join(RUN_CONTEXT_SEPARATOR))
    expect(everything.totalTokens).toBe(count(everything.text))
    for (const s of everything.sections) {
      expect(s.tokens).toBe(count(s.text))
      expect(s.fullTokens).toBe(s.tokens)
      expect(s.items).toBe(s.availableItems)
      expect(s.included).toBe(true)
      expect(s.truncated).toBe(false)
    }
    expect(everything.sections.map((s) => s.availableItems)).toEqual([5, 8, 6, 5, 2])
  })

  it('fits at exactly its own size and trims the lowest section one token under', () => {
    const total = everything.totalTokens
    const exact = assembleRunContext({ material: material(), budgetTokens: total }, R, count)
    expect(exact.text).toBe(everything.text)
    const under = assembleRunContext({ material: material(), budgetTokens: total - 1 }, R, count)
    expect(under.totalTokens).toBeLessThanOrEqual(total - 1)
    expect(under.totalTokens).toBe(count(under.text))
    const hints = under.sections.find((s) => s.section === 'HINTS')
    expect(hints).toMatchObject({ items: 1, availableItems: 2, truncated: true, included: true })
    expect(hints?.text).toBe(formatHints(['Dismiss the cookie banner first']))
    expect(under.sections.slice(0, 4).every((s) => !s.truncated)).toBe(true)
  })

  it('drops items from the end of the lowest-priority section, then the section, before touching a higher one', () => {
    const full = everything.sections
    const tokensOf = (name: string) => full.find((s) => s.section === name)?.tokens as number
    const sep = count(RUN_CONTEXT_SEPARATOR)
    // Room for the first three sections and part of the selectors: hints gone, selectors trimmed.
    const top3 =
      tokensOf('SESSION_HISTORY') + tokensOf('REFERENCE_TRAJECTORY') + tokensOf('APP_KNOWLEDGE') + 2 * sep
    const partial = assembleRunContext(
      { material: material(), budgetTokens: top3 + sep + tokensOf('KNOWN_SELECTORS') - 10 },
      R,
      count,
    )
    const by = (name: string) => partial.sections.find((s) => s.section === name)
    expect(by('HINTS')).toMatchObject({ items: 0, included: false, truncated: true, tokens: 0, text: '' })
    expect(by('KNOWN_SELECTORS')?.truncated).toBe(true)
    expect(by('KNOWN_SELECTORS')?.included).toBe(true)
    // The dropped selectors are the last ones (the least used).
    expect(by('KNOWN_SELECTORS')?.text).toContain('Action 0')
    expect(by('KNOWN_SELECTORS')?.text).not.toContain('Action 4')
    for (const name of ['SESSION_HISTORY', 'REFERENCE_TRAJECTORY', 'APP_KNOWLEDGE'])
      expect(by(name)?.truncated).toBe(false)

    // Room for less than the session history: everything below it is gone and its oldest entries go first.
    const small = assembleRunContext(
      { material: material(), budgetTokens: tokensOf('SESSION_HISTORY') - 5 },
      R,
      count,
    )
    expect(small.sections.slice(1).every((s) => !s.included)).toBe(true)
    const history = small.sections[0]
    expect(history?.truncated).toBe(true)
    expect(history?.text).toContain('Goal number 0')
    expect(history?.text).not.toContain('Goal number 4')
    expect(small.totalTokens).toBeLessThanOrEqual(tokensOf('SESSION_HISTORY') - 5)
    expect(small.text).toBe(history?.text)
  })

  it('trims the reference from its last steps and says how many it left out', () => {
    const m = { ...material(), sessions: [], facts: [], selectors: [], hints: [] }
    const whole = assembleRunContext({ material: m, budgetTokens: 100_000 }, R, count)
    const cut = assembleRunContext({ material: m, budgetTokens: whole.totalTokens - 20 }, R, count)
    const ref = cut.sections.find((s) => s.section === 'REFERENCE_TRAJECTORY')
    expect(ref?.truncated).toBe(true)
    expect(ref?.text).toMatch(/… \d+ more steps? not shown/)
    expect(ref?.text).toContain('Steps (8 total):')
  })

  it('follows configured priorities and the asked sections', () => {
    const rules = { ...R, priorities: { ...R.priorities, HINTS: 99 } }
    const built = assembleRunContext(
      { material: material(), budgetTokens: 100_000, sections: ['APP_KNOWLEDGE', 'HINTS'] },
      rules,
      count,
    )
    expect(built.sections.map((s) => s.section)).toEqual(['HINTS', 'APP_KNOWLEDGE'])
    expect(built.text.startsWith('HINTS')).toBe(true)
    const tight = assembleRunContext(
      {
        material: material(),
        budgetTokens: built.sections[0]?.tokens as number,
        sections: ['APP_KNOWLEDGE', 'HINTS'],
      },
      rules,
      count,
    )
    expect(tight.sections.map((s) => s.included)).toEqual([true, false])
  })

  it('is empty with nothing to say, and names budgetTokens when it is out of range', () => {
    const empty = assembleRunContext(
      { material: { sessions: [], reference: null, facts: [], selectors: [], hints: [] }, budgetTokens: 50 },
      R,
      count,
    )
    expect(empty).toMatchObject({ text: '', totalTokens: 0 })
    expect(empty.sections.every((s) => !s.included && !s.truncated && s.availableItems === 0)).toBe(true)
    for (const budgetTokens of [0, 1.5, 200_001]) {
      const call = () => assembleRunContext({ material: material(), budgetTokens }, R, count)
      expect(call).toThrow(ValidationError)
      try {
        call()
      } catch (e) {
        expect((e as ValidationError).issues[0]).toMatchObject({ field: 'budgetTokens', limit: 200_000 })
      }
    }
  })
})
