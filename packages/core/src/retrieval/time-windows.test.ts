import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  BEGINNING_OF_TIME,
  DEFAULT_TIME_WINDOW_OPTIONS,
  END_OF_TIME,
  inTimeWindows,
  MAX_MENTION_TEXT_CHARS,
  MAX_TIME_WINDOWS,
  mentionedTimes,
  type TimeWindow,
  timeWindows,
} from './time-windows.ts'

// Thursday 10 August 2023, 14:00 UTC: the agent's newest message.
const reference = new Date('2023-08-10T14:00:00Z')
const utc = (iso: string) => new Date(`${iso}T00:00:00Z`)
/** Windows as [start day, end day, relation] in UTC, for exact comparison. */
const days = (windows: TimeWindow[]) =>
  windows.map((w) => [w.start.toISOString().slice(0, 10), w.end.toISOString().slice(0, 10), w.relation])

describe('timeWindows: named periods', () => {
  it('reads a full date as that day, extended 14 days past it', () => {
    const [w] = timeWindows('What happened on 7 May 2023?', reference)
    expect(w?.start).toEqual(utc('2023-05-07'))
    expect(w?.end).toEqual(utc('2023-05-22'))
    expect(w?.text).toBe('on 7 May 2023')
    expect(days(timeWindows('May 7, 2023', reference))).toEqual([['2023-05-07', '2023-05-22', 'during']])
    expect(days(timeWindows('on 1 February, 2023', reference))).toEqual([
      ['2023-02-01', '2023-02-16', 'during'],
    ])
  })

  it('reads a month and year as the month', () => {
    expect(days(timeWindows('What did Caroline do in May 2023?', reference))).toEqual([
      ['2023-05-01', '2023-06-15', 'during'],
    ])
  })

  it('places a month alone in the latest year where it starts at or before the reference', () => {
    expect(days(timeWindows('When did Melanie go camping in June?', reference))).toEqual([
      ['2023-06-01', '2023-07-15', 'during'],
    ])
    // August 2023 has begun by 10 August: it is this year's.
    expect(days(timeWindows('a pride parade in August', reference))).toEqual([
      ['2023-08-01', '2023-09-15', 'during'],
    ])
    // December 2023 is still ahead: the question is about last December.
    expect(days(timeWindows('What did Jon do in December?', reference))).toEqual([
      ['2022-12-01', '2023-01-15', 'during'],
    ])
    // A day and month without a year follow the same rule.
    expect(days(timeWindows('on 24 December', reference))).toEqual([['2022-12-24', '2023-01-08', 'during']])
  })

  it('reads a year alone after a preposition as the year', () => {
    expect(days(timeWindows('How many times has Melanie gone to the beach in 2022?', reference))).toEqual([
      ['2022-01-01', '2023-01-15', 'during'],
    ])
  })

  it('reads the week before a date as the seven days before it (LoCoMo answers are worded so)', () => {
    const [w] = timeWindows('What did Jon do the week before 1 August 2023?', reference)
    expect(w?.start).toEqual(utc('2023-07-25'))
    expect(w?.end).toEqual(utc('2023-08-15'))
    expect(w?.text).toBe('the week before 1 August 2023')
    expect(days(timeWindows('the week after 1 August 2023', reference))).toEqual([
      ['2023-08-02', '2023-08-23', 'during'],
    ])
  })

  it('reads "the Friday before X" and "the weekend before X" from X', () => {
    // 9 June 2023 is a Friday: the Friday before it is 2 June.
    expect(days(timeWindows('the Friday before 9 June 2023', reference))).toEqual([
      ['2023-06-02', '2023-06-17', 'during'],
    ])
    // 20 May 2023 is a Saturday: the weekend before it is 13-14 May.
    const [weekend] = timeWindows('What did she do the weekend before 20 May 2023?', reference)
    expect([weekend?.start, weekend?.end]).toEqual([utc('2023-05-13'), utc('2023-05-29')])
    expect(weekend?.text).toBe('the weekend before 20 May 2023')
  })

  it('reads ranges from the start of the first period to the end of the last', () => {
    expect(days(timeWindows('from March to May 2023', reference))).toEqual([
      ['2023-03-01', '2023-06-15', 'during'],
    ])
    expect(days(timeWindows('from 3 to 5 May 2023', reference))).toEqual([
      ['2023-05-03', '2023-05-20', 'during'],
    ])
  })

  it('reads seasons with a preposition, a modifier or a year', () => {
    expect(days(timeWindows('a pride parade during the summer', reference))).toEqual([
      ['2023-06-01', '2023-09-15', 'during'],
    ])
    // Summer 2023 has not ended on 10 August: last summer is 2022's.
    expect(days(timeWindows('last summer', reference))).toEqual([['2022-06-01', '2022-09-15', 'during']])
    expect(days(timeWindows('in the winter of 2022', reference))).toEqual([
      ['2022-12-01', '2023-03-15', 'during'],
    ])
  })

  it('honours extendDays, including none', () => {
    expect(days(timeWindows('in May 2023', reference, { extendDays: 0 }))).toEqual([
      ['2023-05-01', '2023-06-01', 'during'],
    ])
    expect(days(timeWindows('in May 2023', reference, { extendDays: 1 }))).toEqual([
      ['2023-05-01', '2023-06-02', 'during'],
    ])
    expect(DEFAULT_TIME_WINDOW_OPTIONS.extendDays).toBe(14)
  })

  it('rejects options out of range with a ValidationError naming the field and limit', () => {
    const error = (() => {
      try {
        timeWindows('in May', reference, { extendDays: -1 })
      } catch (e) {
        return e
      }
    })() as ValidationError
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.issues[0]).toMatchObject({ field: 'extendDays', limit: 0 })
  })
})

describe('timeWindows: before and after', () => {
  it('reads "before X" as everything up to the start of X, without extension', () => {
    const [w] = timeWindows('What did Gina do before June 2023?', reference)
    expect(w).toEqual({
      start: BEGINNING_OF_TIME,
      end: utc('2023-06-01'),
      text: 'before June 2023',
      relation: 'before',
    })
  })

  it('reads "after X" as everything from the end of X, and "since X" as everything from its start', () => {
    expect(timeWindows('after 3 March 2023', reference)).toEqual([
      { start: utc('2023-03-04'), end: END_OF_TIME, text: 'after 3 March 2023', relation: 'after' },
    ])
    // "Since May" holds May.
    expect(days(timeWindows('since May 2023', reference))[0]?.slice(0, 1)).toEqual(['2023-05-01'])
    expect(timeWindows('since 2020', reference)[0]).toMatchObject({
      start: utc('2020-01-01'),
      relation: 'after',
    })
  })
})

describe('timeWindows: relative expressions against the reference', () => {
  it.each([
    ['yesterday', '2023-08-09', '2023-08-24'],
    ['two days ago', '2023-08-08', '2023-08-23'],
    ['a few days ago', '2023-08-07', '2023-08-22'],
    ['today', '2023-08-10', '2023-08-25'],
    // 10 August 2023 is a Thursday: last Friday is 4 August.
    ['last Friday', '2023-08-04', '2023-08-19'],
    // ISO weeks, Monday to Sunday.
    ['last week', '2023-07-31', '2023-08-21'],
    ['this week', '2023-08-07', '2023-08-28'],
    ['two weeks ago', '2023-07-24', '2023-08-14'],
    ['the past week', '2023-08-04', '2023-08-25'],
    ['last weekend', '2023-08-05', '2023-08-21'],
    ['last month', '2023-07-01', '2023-08-15'],
    ['two months ago', '2023-06-01', '2023-07-15'],
    ['last year', '2022-01-01', '2023-01-15'],
    ['earlier this year', '2023-01-01', '2024-01-15'],
  ])('%s', (expression, start, end) => {
    expect(days(timeWindows(`What did Melanie do ${expression}?`, reference))).toEqual([
      [start, end, 'during'],
    ])
  })

  it('does not depend on the machine time zone near midnight UTC', () => {
    // 02:00 UTC is still the 9th in America (the tests also run under TZ=America/Los_Angeles).
    const early = new Date('2023-08-10T02:00:00Z')
    expect(days(timeWindows('yesterday', early))).toEqual([['2023-08-09', '2023-08-24', 'during']])
    expect(days(timeWindows('last week', early))).toEqual([['2023-07-31', '2023-08-21', 'during']])
  })
})

describe('timeWindows: what is not a period', () => {
  it.each([
    // LoCoMo questions without a date: question words alone name nothing.
    'When did Caroline go to the LGBTQ support group?',
    'What did Melanie paint recently?',
    'How many children does Melanie have?',
    'How long has Caroline had her current group of friends for?',
    "How long ago was Caroline's 18th birthday?",
    "What are Melanie's 2 kids' names?",
    'She went there 3 times',
    // Times of day, durations, weekdays without context.
    'Did they meet at 3pm?',
    'She ran 5 miles in 3 hours',
    'What does he do on Monday?',
    'She sat on the Sun deck',
    'He has worked there for 3 years',
    "We haven't talked in a few days",
    'right now',
    // Numbers that look like dates, and month or season words that are names or verbs.
    'His store is open 24/7',
    'The score was 3/4',
    'They march in the parade',
    'You may go',
    'What did June say about April?',
    "What was Gina's fall collection?",
    'What did Summer paint?',
    'The 2022 model',
    'when',
  ])('%s', (query) => {
    expect(timeWindows(query, reference)).toEqual([])
  })

  it('keeps a listed month in its preposition’s context ("in May or June")', () => {
    expect(days(timeWindows('Did she go in May or June?', reference))).toEqual([
      ['2023-05-01', '2023-06-15', 'during'],
      ['2023-06-01', '2023-07-15', 'during'],
    ])
  })
})

describe('timeWindows: never throws, bounded work', () => {
  it('returns nothing for empty or odd input and an invalid reference', () => {
    expect(timeWindows('', reference)).toEqual([])
    expect(timeWindows('in May 2023', new Date(Number.NaN))).toEqual([])
    expect(timeWindows(undefined as unknown as string, reference)).toEqual([])
    expect(timeWindows('🙂\u0000'.repeat(500), reference)).toEqual([])
  })

  it('reads only the first 2,000 characters of a query', () => {
    expect(timeWindows(`${'x '.repeat(1_000)}in May 2023`, reference)).toEqual([])
    expect(timeWindows(`${'x '.repeat(990)}in May 2023`, reference)).toHaveLength(1)
  })

  it('returns at most MAX_TIME_WINDOWS windows, each period once', () => {
    const query = Array.from({ length: 40 }, (_, i) => `on ${(i % 28) + 1} May 2023`).join(', ')
    expect(timeWindows(query, reference)).toHaveLength(MAX_TIME_WINDOWS)
    expect(timeWindows('in May 2023 and again in May 2023', reference)).toHaveLength(1)
  })
})

describe('mentionedTimes', () => {
  const turnTime = new Date('2023-05-08T13:56:00Z')

  it('resolves relative expressions against the turn’s own time, without extension', () => {
    expect(
      mentionedTimes(
        'Caroline said, "I went to a LGBTQ support group yesterday and it was so powerful."',
        turnTime,
      ),
    ).toEqual([{ start: utc('2023-05-07'), end: utc('2023-05-08'), text: 'yesterday', relation: 'during' }])
    expect(days(mentionedTimes('I painted that lake sunrise last year!', turnTime))).toEqual([
      ['2022-01-01', '2023-01-01', 'during'],
    ])
    // 8 May 2023 is a Monday: last week is 1-7 May.
    expect(days(mentionedTimes('I went hiking last week', turnTime))).toEqual([
      ['2023-05-01', '2023-05-08', 'during'],
    ])
  })

  it('places a month without a year nearest the turn: plans are as common as memories', () => {
    expect(days(mentionedTimes("We're going camping in June", turnTime))).toEqual([
      ['2023-06-01', '2023-07-01', 'during'],
    ])
    expect(days(mentionedTimes('next month I have an art show', turnTime))).toEqual([
      ['2023-06-01', '2023-07-01', 'during'],
    ])
  })

  it('gives the period itself for "before X" and "since X"', () => {
    expect(mentionedTimes("I've been painting since 2020", turnTime)).toEqual([
      { start: utc('2020-01-01'), end: utc('2021-01-01'), text: '2020', relation: 'during' },
    ])
  })

  it('reads only the first MAX_MENTION_TEXT_CHARS characters of a turn', () => {
    expect(mentionedTimes(`${'x '.repeat(MAX_MENTION_TEXT_CHARS / 2)}yesterday`, turnTime)).toEqual([])
    expect(mentionedTimes(`${'x '.repeat(MAX_MENTION_TEXT_CHARS / 2 - 10)}yesterday`, turnTime)).toHaveLength(
      1,
    )
  })

  it('finds nothing in a turn without a period', () => {
    expect(
      mentionedTimes('Caroline said, "My 2 kids love painting, we do it 3 times a week."', turnTime),
    ).toEqual([])
    expect(mentionedTimes('', turnTime)).toEqual([])
  })
})

describe('inTimeWindows', () => {
  const windows = timeWindows('What did Caroline do in May 2023?', reference)

  it('is inclusive at the start and exclusive at the end', () => {
    expect(inTimeWindows(utc('2023-05-01'), windows)).toBe(true)
    expect(inTimeWindows(new Date('2023-06-14T23:59:59Z'), windows)).toBe(true)
    expect(inTimeWindows(utc('2023-06-15'), windows)).toBe(false)
    expect(inTimeWindows(new Date('2023-04-30T23:59:59Z'), windows)).toBe(false)
  })

  it('is false for no windows and for an invalid time', () => {
    expect(inTimeWindows(utc('2023-05-10'), [])).toBe(false)
    expect(inTimeWindows(new Date(Number.NaN), windows)).toBe(false)
  })

  it('holds any time before an open "before" window ends', () => {
    const before = timeWindows('before June 2023', reference)
    expect(inTimeWindows(utc('1990-01-01'), before)).toBe(true)
    expect(inTimeWindows(utc('2023-06-01'), before)).toBe(false)
  })
})
