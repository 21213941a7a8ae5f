import { describe, expect, it } from 'vitest'
import { DEFAULT_MEMORY_SETTINGS } from './memory-item.ts'
import { replacesStatement } from './replacement.ts'
import { type ExistingMemory, verifyMemory } from './verification.ts'

const T0 = new Date('2026-01-01T00:00:00.000Z')
const existing = (content: string): ExistingMemory[] => [
  { id: 'older', content, category: 'fact', createdAt: T0 },
]
const verify = (newer: string, older: string, rule: 'overlap' | 'replacement') =>
  verifyMemory({ content: newer, category: 'fact' }, existing(older), [], DEFAULT_MEMORY_SETTINGS, rule)

describe('replacesStatement', () => {
  it.each([
    ['a new value for the same attribute', 'Dana lives in Berlin', 'Dana lives in Paris'],
    ['a longer value', 'Dana works at Globex Corp', 'Dana works at Acme'],
    ['a value inside the frame', "Dana's favourite colour is green", "Dana's favourite colour is blue"],
    ['a time word around the value', 'The office is in York now', 'The office is in Leeds'],
    ['a state after a copula', 'Dana is married to Sam', 'Dana is married to Alex'],
    ['another role', 'Dana is a nurse', 'Dana is a teacher'],
    ['an explicit correction', 'Actually, Dana is vegetarian since March', 'Dana eats meat at every meal'],
    ['an end', 'Dana no longer plays tennis on weekends', 'Dana plays tennis on weekends'],
    ['a denial', "Dana doesn't drink coffee", 'Dana drinks coffee every morning'],
    ['a denial, curly apostrophe', 'Dana doesn’t drink coffee', 'Dana drinks coffee every morning'],
  ])('replaces: %s', (_, newer, older) => {
    expect(replacesStatement(newer, older)).toBe(true)
  })

  it.each([
    // What chat says about one speaker, in similar words, all of it still true.
    ['two tastes', 'Dana loves running her own studio', 'Dana loves all dances, but jazz is her top pick'],
    ['a taste with a new object', 'Dana loves painting', 'Dana loves dancing'],
    [
      'two past events',
      'Dana painted it after Dana visited the beach',
      'Dana painted this after Dana visited a centre',
    ],
    ['two plans', 'Dana is gonna open a bakery', 'Dana is gonna travel more'],
    ['a plan and a promise', 'Dana will keep going', 'Dana is gonna keep on going and never quit'],
    [
      'a negation about something else',
      'Running a shop is not easy, but Dana is determined to make it work',
      'Dana is determined to make it work',
    ],
    [
      'same topic, another statement',
      'Dana is aiming to turn the passion into a business',
      'Dana has been into dancing since childhood',
    ],
    ['only the name and a copula shared', 'Dana is tired', 'Dana is hungry'],
    [
      'a restatement with more words',
      'Dana lost the job at the bakery this month',
      'Since Dana lost the job at the bakery, things have been tough',
    ],
  ])('does not replace: %s', (_, newer, older) => {
    expect(replacesStatement(newer, older)).toBe(false)
  })
})

describe('verifyMemory with the replacement rule', () => {
  it('still supersedes an explicit update', () => {
    expect(verify('Dana lives in Berlin', 'Dana lives in Paris', 'replacement')).toEqual({
      kind: 'stored',
      supersedes: 'older',
      similarity: 0.5,
    })
  })

  it('keeps a distinct statement in the band that the overlap rule supersedes', () => {
    const newer = 'Dana loves painting landscapes'
    const older = 'Dana loves dancing'
    expect(verify(newer, older, 'overlap')).toMatchObject({ kind: 'stored', supersedes: 'older' })
    expect(verify(newer, older, 'replacement')).toEqual({
      kind: 'stored',
      supersedes: null,
      similarity: null,
    })
  })

  it('needs the band too: a correction sharing too few words replaces nothing', () => {
    expect(verify('Actually the meeting moved to Tuesday', 'Dana lives in Paris', 'replacement')).toEqual({
      kind: 'stored',
      supersedes: null,
      similarity: null,
    })
  })

  it('leaves duplicates to layer 1 whatever the rule', () => {
    expect(verify('Dana lives in Paris', 'Dana lives in Paris', 'replacement')).toMatchObject({
      kind: 'duplicate',
      of: 'older',
    })
  })
})
