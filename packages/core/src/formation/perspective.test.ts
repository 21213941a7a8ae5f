import { describe, expect, it } from 'vitest'
import { displayName, thirdPersonVerb, toThirdPerson } from './perspective.ts'

describe('first person restated about the speaker', () => {
  it.each([
    ['I work at Acme', 'Dana works at Acme'],
    ["I'm from Porto and my sister lives here.", "Dana is from Porto and Dana's sister lives here."],
    ['I really love hiking.', 'Dana really loves hiking.'],
    ['I usually prefer trains.', 'Dana usually prefers trains.'],
    ['I have two kids and I watch them.', 'Dana has two kids and Dana watches them.'],
    ["I don't like cilantro.", "Dana doesn't like cilantro."],
    ["I've been painting for years.", 'Dana has been painting for years.'],
    ['I went camping yesterday.', 'Dana went camping yesterday.'],
    ['I will send it.', 'Dana will send it.'],
    ["I'm gonna try.", 'Dana is gonna try.'],
    ['I try to go and I study.', 'Dana tries to go and Dana studies.'],
    ['Grandma taught me to knit.', 'Grandma taught Dana to knit.'],
    ['We decided to use Postgres.', 'Dana and others decided to use Postgres.'],
    ['The build is green.', 'The build is green.'],
  ])('%s → %s', (input, expected) => {
    expect(toThirdPerson(input, 'dana')).toBe(expected)
  })

  it('handles curly apostrophes and multi-part handles', () => {
    expect(toThirdPerson('I’m a nurse', 'jon_smith')).toBe('Jon Smith is a nurse')
    expect(displayName('maria.lopez')).toBe('Maria Lopez')
  })

  it('conjugates regular and irregular verbs for the third person', () => {
    expect(
      ['go', 'do', 'watch', 'fix', 'carry', 'play', 'have', 'was', 'walked', 'can'].map(thirdPersonVerb),
    ).toEqual(['goes', 'does', 'watches', 'fixes', 'carries', 'plays', 'has', 'was', 'walked', 'can'])
  })
})
