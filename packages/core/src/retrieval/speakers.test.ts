import { describe, expect, it } from 'vitest'
import {
  DEFAULT_SPEAKER_BOOST,
  MAX_PARTICIPANT_NAME_CHARS,
  MAX_PARTICIPANTS,
  namedParticipants,
  withoutParticipants,
} from './speakers.ts'

const locomo = ['Caroline', 'Melanie']

describe('namedParticipants', () => {
  it('finds whole-word, case-insensitive names, possessives included', () => {
    expect(namedParticipants('When did Caroline go to the LGBTQ support group?', locomo)).toEqual([
      'Caroline',
    ])
    expect(namedParticipants("When is melanie's daughter's birthday?", locomo)).toEqual(['Melanie'])
    expect(namedParticipants('What did CAROLINE’s friend say?', locomo)).toEqual(['Caroline'])
    expect(namedParticipants('Did Carolines go?', locomo)).toEqual([])
    expect(namedParticipants('What does Mel like?', locomo)).toEqual([])
  })

  it('returns the participants as given, in the order the query names them', () => {
    expect(namedParticipants('What did Melanie tell Caroline?', locomo)).toEqual(['Melanie', 'Caroline'])
    expect(namedParticipants('Caroline and Melanie', ['Melanie', 'Caroline'])).toEqual([
      'Caroline',
      'Melanie',
    ])
    // Named twice, returned once.
    expect(namedParticipants('Caroline, Caroline!', locomo)).toEqual(['Caroline'])
  })

  it('matches a first name to a participant of several words', () => {
    expect(namedParticipants('What did Dana buy?', ['Dana Kim', 'Jon'])).toEqual(['Dana Kim'])
    expect(namedParticipants("What is dana   kim's job?", ['Dana Kim'])).toEqual(['Dana Kim'])
    // A last name alone and an initial are not enough.
    expect(namedParticipants('What did Kim buy?', ['Dana Kim'])).toEqual([])
    expect(namedParticipants('Is J here?', ['J Smith'])).toEqual([])
  })

  it('gives a spelled-out full name to its participant only', () => {
    expect(namedParticipants('What did Dana Kim buy?', ['Dana Lee', 'Dana Kim'])).toEqual(['Dana Kim'])
    expect(namedParticipants('What did Dana buy?', ['Dana Lee', 'Dana Kim'])).toEqual([
      'Dana Lee',
      'Dana Kim',
    ])
    expect(namedParticipants('Dana said hi', ['Dana', 'Dana Kim'])).toEqual(['Dana'])
  })

  it('matches names in any script at word boundaries', () => {
    expect(namedParticipants('Was hat José gesagt?', ['José'])).toEqual(['José'])
    expect(namedParticipants('Joséphine kam', ['José'])).toEqual([])
    expect(namedParticipants('Wo wohnt Zoë?', ['zoë'])).toEqual(['zoë'])
  })

  it('treats names as data: regex characters match only themselves', () => {
    expect(namedParticipants('What did C++ Bot say?', ['C++ Bot'])).toEqual(['C++ Bot'])
    expect(namedParticipants('What did CCC Bot say?', ['C++ Bot'])).toEqual([])
    expect(namedParticipants('ask (ann)', ['(ann)'])).toEqual(['(ann)'])
    expect(namedParticipants('ask anything', ['.*'])).toEqual([])
    expect(namedParticipants('a|b', ['a|b'])).toEqual(['a|b'])
    expect(() => namedParticipants('x', ['[', '(?', '\\', '$1'])).not.toThrow()
  })

  it('skips empty and overlong names and considers at most MAX_PARTICIPANTS', () => {
    expect(namedParticipants('Caroline', ['', '   ', 'Caroline'])).toEqual(['Caroline'])
    const long = 'A'.repeat(MAX_PARTICIPANT_NAME_CHARS + 1)
    expect(namedParticipants(`Hi ${long}`, [long])).toEqual([])
    const many = [...Array.from({ length: MAX_PARTICIPANTS }, (_, i) => `Person${i}`), 'Zed']
    expect(namedParticipants('What did Zed and Person999 say?', many)).toEqual(['Person999'])
  })

  it('returns nothing for an empty query or no participants', () => {
    expect(namedParticipants('', locomo)).toEqual([])
    expect(namedParticipants('Caroline', [])).toEqual([])
  })
})

describe('withoutParticipants', () => {
  it('removes names and their possessives', () => {
    expect(withoutParticipants('When did Caroline go to the LGBTQ support group?', ['Caroline'])).toBe(
      'When did go to the LGBTQ support group?',
    )
    expect(withoutParticipants("When is Melanie's daughter's birthday?", ['Melanie'])).toBe(
      "When is daughter's birthday?",
    )
  })

  it('removes "did X say" and "X said" wording', () => {
    expect(withoutParticipants('What did Caroline say about the parade?', ['Caroline'])).toBe(
      'What about the parade?',
    )
    expect(withoutParticipants('Caroline said something about adoption', ['Caroline'])).toBe(
      'something about adoption',
    )
    expect(withoutParticipants('When did Gina mention Shia Labeouf?', ['Gina'])).toBe('When Shia Labeouf?')
    expect(withoutParticipants('According to Jon, who won?', ['Jon'])).toBe(', who won?')
  })

  it('removes full names before first names, and first names alone', () => {
    expect(withoutParticipants('What did Dana Kim say to Dana?', ['Dana Kim'])).toBe('What to?')
    expect(withoutParticipants('Why did dana leave?', ['Dana Kim'])).toBe('Why did leave?')
  })

  it('leaves other words alone, including words containing a name', () => {
    expect(withoutParticipants('Did Jonathan meet Jon?', ['Jon'])).toBe('Did Jonathan meet?')
    expect(withoutParticipants('the said name', ['Jon'])).toBe('the said name')
  })

  it('escapes names', () => {
    expect(withoutParticipants('Did C++ Bot reply? CCC Bot did.', ['C++ Bot'])).toBe(
      'Did reply? CCC Bot did.',
    )
  })

  it('returns the query unchanged without names', () => {
    expect(withoutParticipants('What did Caroline say?', [])).toBe('What did Caroline say?')
    expect(withoutParticipants('', ['Caroline'])).toBe('')
  })
})

describe('DEFAULT_SPEAKER_BOOST', () => {
  it('is a 20% boost', () => {
    expect(DEFAULT_SPEAKER_BOOST).toBe(0.2)
  })
})
