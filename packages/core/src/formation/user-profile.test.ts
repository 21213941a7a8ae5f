import { describe, expect, it } from 'vitest'
import { heuristicTokenCount } from '../budget/tokenizer.ts'
import { ValidationError } from '../errors.ts'
import {
  buildExtractiveProfile,
  diffProfiles,
  type ProfileMemory,
  parseProfileSettings,
  profileRegenerationDue,
} from './user-profile.ts'

const at = (day: number) => new Date(Date.UTC(2026, 2, day))
const memory = (
  id: string,
  type: ProfileMemory['type'],
  content: string,
  importance = 0.5,
): ProfileMemory => ({
  id,
  type,
  content,
  importance,
  confidence: 0.8,
  updatedAt: at(1),
})
const memories = [
  memory('m1', 'fact', 'Dana works at Acme as a backend engineer', 0.8),
  memory('m2', 'preference', 'Dana prefers dark mode', 0.6),
  memory('m3', 'preference', 'Dana likes short answers', 0.9),
  memory('m4', 'decision', 'Dana and others decided to use Postgres', 1),
  memory('m5', 'relationship', "Dana's sister Lena is a doctor in Berlin"),
]
const options = { maxTokens: 2_000, countTokens: heuristicTokenCount }

describe('extractive user profile', () => {
  it('puts overrides first and the memories by section, most important first', () => {
    const profile = buildExtractiveProfile([{ id: 'o1', content: 'Call me Dee' }], memories, options)
    expect(profile.text.split('\n')).toEqual([
      '## Pinned',
      '- Call me Dee',
      '## About',
      '- Dana works at Acme as a backend engineer',
      '## Preferences',
      '- Dana likes short answers',
      '- Dana prefers dark mode',
      '## Relationships',
      "- Dana's sister Lena is a doctor in Berlin",
    ])
    expect(profile.sourceMemoryIds).toEqual(['m1', 'm3', 'm2', 'm5'])
    expect(profile.overrideIds).toEqual(['o1'])
  })

  it('stays within profileMaxTokens, never dropping an override', () => {
    const overrides = Array.from({ length: 3 }, (_, i) => ({
      id: `o${i}`,
      content: `Pinned fact number ${i}`,
    }))
    const small = buildExtractiveProfile(overrides, memories, { ...options, maxTokens: 30 })
    expect(small.overrideIds).toHaveLength(3)
    expect(small.tokens).toBeLessThanOrEqual(30)
    expect(small.sourceMemoryIds.length).toBeLessThan(4)
  })

  it('does not repeat a memory an override already states', () => {
    const profile = buildExtractiveProfile(
      [{ id: 'o1', content: 'Dana prefers dark mode' }],
      memories,
      options,
    )
    expect(profile.sourceMemoryIds).not.toContain('m2')
  })

  it('is due for regeneration after profileRegenerateThreshold contributions', () => {
    expect(profileRegenerationDue(9)).toBe(false)
    expect(profileRegenerationDue(10)).toBe(true)
    expect(profileRegenerationDue(1, parseProfileSettings({ profileRegenerateThreshold: 1 }))).toBe(true)
    expect(() => parseProfileSettings({ profileMaxTokens: 50 })).toThrow(ValidationError)
  })

  it('diffs two versions by line', () => {
    const before = buildExtractiveProfile([], memories, options).text
    const after = buildExtractiveProfile(
      [],
      [...memories.slice(1), memory('m6', 'skill', 'Dana speaks French')],
      options,
    ).text
    expect(diffProfiles(before, after)).toEqual({
      added: ['- Dana speaks French'],
      removed: ['- Dana works at Acme as a backend engineer'],
      unchanged: 3,
    })
  })
})
