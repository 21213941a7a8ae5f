import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { initialImportance, scoreImportance } from './importance.ts'
import { DEFAULT_IMPORTANCE_WEIGHTS, parseImportanceWeights } from './settings.ts'

const now = new Date('2026-03-01T12:00:00Z')
const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3_600_000)

describe("spec 002's importance scorer", () => {
  it('starts at the 0.5 base with no signal and no recency left', () => {
    expect(scoreImportance({ content: 'the sky is blue', timestamp: hoursAgo(72) }, now).importance).toBe(0.5)
  })

  it('adds 0.3 for a profile signal and 0.2 for a decision or commitment, once each', () => {
    const old = hoursAgo(48)
    expect(scoreImportance({ content: 'My name is Dana', timestamp: old }, now).importance).toBeCloseTo(0.8)
    expect(
      scoreImportance({ content: 'I prefer tea. My name is Dana', timestamp: old }, now).importance,
    ).toBeCloseTo(0.8)
    expect(scoreImportance({ content: 'We decided to ship', timestamp: old }, now).importance).toBeCloseTo(
      0.7,
    )
    expect(scoreImportance({ content: "Let's do it, I will", timestamp: old }, now).importance).toBeCloseTo(
      0.7,
    )
  })

  it('adds 0.1 for a tool result', () => {
    const score = scoreImportance({ content: 'exit 0', kind: 'tool_result', timestamp: hoursAgo(48) }, now)
    expect(score.importance).toBeCloseTo(0.6)
    expect(score.reasons).toContain('tool result')
  })

  it('gives a recency bonus of max(0, 0.2 - hoursAgo/24 * 0.1), from the injected now', () => {
    const at = (hours: number) =>
      scoreImportance({ content: 'x', timestamp: hoursAgo(hours) }, now).importance
    expect(at(0)).toBeCloseTo(0.7)
    expect(at(12)).toBeCloseTo(0.65)
    expect(at(24)).toBeCloseTo(0.6)
    expect(at(47)).toBeCloseTo(0.5 + 0.2 - (47 / 24) * 0.1)
    expect(at(60)).toBe(0.5)
    // A timestamp ahead of the clock earns no more than a brand-new one.
    expect(at(-30)).toBeCloseTo(0.7)
  })

  it('adds min(0.1, accessCount * 0.02) and clamps to 1', () => {
    const old = hoursAgo(100)
    expect(scoreImportance({ content: 'x', timestamp: old, accessCount: 2 }, now).importance).toBeCloseTo(
      0.54,
    )
    expect(scoreImportance({ content: 'x', timestamp: old, accessCount: 50 }, now).importance).toBeCloseTo(
      0.6,
    )
    const everything = scoreImportance(
      { content: 'Remember that I will', kind: 'tool_result', timestamp: now, accessCount: 9 },
      now,
    )
    expect(everything.importance).toBe(1)
  })

  it('takes every weight from settings', () => {
    const weights = parseImportanceWeights({ base: 0.1, profileSignal: 0.5, recencyMax: 0 })
    expect(scoreImportance({ content: 'I prefer tea', timestamp: now }, now, weights).importance).toBeCloseTo(
      0.6,
    )
    expect(() => parseImportanceWeights({ base: 2 })).toThrow(ValidationError)
    expect(DEFAULT_IMPORTANCE_WEIGHTS).toMatchObject({ base: 0.5, profileSignal: 0.3, commitmentSignal: 0.2 })
  })
})

describe('initial importance of an explicit request', () => {
  it('is 0.8 for "remember that", "don\'t forget", "note that", whatever the other signals', () => {
    for (const content of [
      'Remember that I am allergic to peanuts',
      "Don't forget that the demo is on Friday",
      'Note that the subnet is 10.20.14.0/24',
      'Please remember: my name is Dana and I will call',
    ]) {
      expect(initialImportance({ content, timestamp: hoursAgo(100) }, now).importance).toBe(0.8)
    }
  })

  it('is not triggered by a sentence that merely starts with "remember"', () => {
    expect(
      initialImportance({ content: 'Remember the concert?', timestamp: hoursAgo(100) }, now).importance,
    ).toBe(0.5)
  })
})
