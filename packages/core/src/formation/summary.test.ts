import { describe, expect, it } from 'vitest'
import { heuristicTokenCount } from '../budget/tokenizer.ts'
import { ValidationError } from '../errors.ts'
import {
  DEFAULT_SUMMARY_SETTINGS,
  extractiveSummary,
  parseSummarySettings,
  summaryDue,
  summaryExpiresAt,
} from './summary.ts'

const t0 = new Date('2026-03-04T10:00:00Z')
const plus = (seconds: number) => new Date(t0.getTime() + seconds * 1_000)
const activity = { lastTurnAt: t0, lastSummaryAt: null, unsummarisedTokens: 500, switchedAway: false }

describe('summary triggers', () => {
  it('waits for summaryDebounceSeconds without a new turn', () => {
    expect(summaryDue(activity, plus(59))).toEqual({ due: false, trigger: null, dueAt: plus(60) })
    expect(summaryDue(activity, plus(60))).toMatchObject({ due: true, trigger: 'debounce' })
  })

  it('is due at once on a switch to another conversation or past the token threshold', () => {
    expect(summaryDue({ ...activity, switchedAway: true }, plus(1)).trigger).toBe('switch')
    expect(summaryDue({ ...activity, unsummarisedTokens: 50_000 }, plus(1)).trigger).toBe('threshold')
  })

  it('has nothing due when every turn is already summarised', () => {
    expect(summaryDue({ ...activity, lastSummaryAt: plus(5) }, plus(3_600)).due).toBe(false)
    expect(summaryDue({ ...activity, unsummarisedTokens: 0 }, plus(3_600)).due).toBe(false)
  })

  it('takes its numbers from settings, within their ranges', () => {
    const settings = parseSummarySettings({ summaryDebounceSeconds: 10, summarizationThresholdTokens: 1_000 })
    expect(summaryDue(activity, plus(10), settings).due).toBe(true)
    expect(summaryDue({ ...activity, unsummarisedTokens: 1_000 }, plus(1), settings).trigger).toBe(
      'threshold',
    )
    expect(() => parseSummarySettings({ summaryDebounceSeconds: 5 })).toThrow(ValidationError)
    expect(() => parseSummarySettings({ summaryRetentionDays: 366 })).toThrow(ValidationError)
    expect(DEFAULT_SUMMARY_SETTINGS).toMatchObject({
      summaryDebounceSeconds: 60,
      summaryRetentionDays: 7,
      summarizationThresholdTokens: 50_000,
      strategy: 'extractive',
    })
  })

  it('expires a summary summaryRetentionDays after Engram stored it', () => {
    expect(summaryExpiresAt(t0).toISOString()).toBe('2026-03-11T10:00:00.000Z')
  })
})

describe('extractive summary', () => {
  const turns = [
    { speaker: 'Dana', content: 'Hi! How are you?' },
    { speaker: 'Sam', content: 'Good. We need to migrate the billing service to Postgres before the audit.' },
    { speaker: 'Dana', content: 'The billing service migration to Postgres needs a schema freeze first.' },
    { speaker: 'Sam', content: 'Lunch was nice today. The runbook is at https://wiki.example.com/billing.' },
    {
      speaker: 'Dana',
      content: 'I will freeze the billing schema on Friday so the Postgres migration can start.',
    },
  ]
  const count = heuristicTokenCount

  it('keeps the central sentences in the order said, and the preserved facts', () => {
    const summary = extractiveSummary(turns, { maxTokens: 200, countTokens: count })
    const lines = summary.split('\n')
    expect(lines[0]).toMatch(/^Sam: We need to migrate the billing service/)
    expect(summary).toContain('Key facts: https://wiki.example.com/billing')
    expect(summary).not.toContain('How are you')
  })

  it('stays within its budget, dropping the least central first', () => {
    const summary = extractiveSummary(turns, { maxTokens: 40, countTokens: count })
    expect(count(summary)).toBeLessThanOrEqual(40)
    expect(summary).toContain('billing')
    expect(summary).not.toContain('Lunch')
  })

  it('keeps a short statement of who the user is, not short chit-chat', () => {
    const said = [
      { speaker: 'user', content: 'My name is John. Remember that I am allergic to peanuts.' },
      { speaker: 'assistant', content: 'Thanks John! Noted.' },
    ]
    const summary = extractiveSummary(said, { maxTokens: 200, countTokens: count })
    expect(summary.split('\n')).toEqual([
      'user: My name is John.',
      'user: Remember that I am allergic to peanuts.',
    ])
  })

  it('is deterministic', () => {
    expect(extractiveSummary(turns, { maxTokens: 100, countTokens: count })).toBe(
      extractiveSummary(turns, { maxTokens: 100, countTokens: count }),
    )
  })
})
