import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  DEFAULT_DIALOGUE_OPTIONS,
  EPISODE_GAP_MS,
  episodeContext,
  episodes,
  neighbourContext,
} from './dialogue.ts'

const MINUTE = 60_000
const at = (minutes: number) => new Date(Date.UTC(2023, 4, 8, 13, 0) + minutes * MINUTE)

describe('DEFAULT_DIALOGUE_OPTIONS', () => {
  it('spreads to two turns each side and a fifth of the episode’s best', () => {
    expect(DEFAULT_DIALOGUE_OPTIONS).toEqual({ neighbourDistance: 2, episodeShare: 0.2 })
    expect(EPISODE_GAP_MS).toBe(3_600_000)
  })
})

describe('neighbourContext', () => {
  // Turns t1..t5 of one episode; t3 matched the query.
  const around = (centre: number, ids: number[]) =>
    ids.map((i) => ({ id: `t${i}`, distance: Math.abs(i - centre) }))
  const neighbours = new Map([
    ['t3', around(3, [1, 2, 4, 5])],
    ['t4', around(4, [2, 3, 5, 6])],
  ])

  it('gives a neighbour at distance d the candidate’s score over d', () => {
    const gained = neighbourContext(new Map([['t3', 0.9]]), neighbours)
    expect(gained).toEqual(
      new Map([
        ['t1', 0.45],
        ['t2', 0.9],
        ['t4', 0.9],
        ['t5', 0.45],
      ]),
    )
    // The candidate does not gain from itself.
    expect(gained.has('t3')).toBe(false)
  })

  it('sums over candidates, and a neighbour that is a candidate still gains', () => {
    const gained = neighbourContext(
      new Map([
        ['t3', 1],
        ['t4', 0.5],
      ]),
      neighbours,
    )
    expect(gained.get('t3')).toBe(0.5) // from t4 at distance 1
    expect(gained.get('t4')).toBe(1) // from t3 at distance 1
    expect(gained.get('t2')).toBe(1 + 0.25) // t3 at 1, t4 at 2
    expect(gained.get('t5')).toBe(0.5 + 0.5) // t3 at 2, t4 at 1
    expect(gained.get('t6')).toBe(0.25) // t4 at 2
    expect(gained.get('t1')).toBe(0.5) // t3 at 2
  })

  it('ignores neighbours past neighbourDistance and distances that are not 1..neighbourDistance', () => {
    const odd = new Map([
      [
        'c',
        [
          { id: 'far', distance: 3 },
          { id: 'zero', distance: 0 },
          { id: 'negative', distance: -1 },
          { id: 'half', distance: 1.5 },
          { id: 'nan', distance: Number.NaN },
          { id: 'c', distance: 1 },
          { id: 'near', distance: 1 },
        ],
      ],
    ])
    expect(neighbourContext(new Map([['c', 2]]), odd)).toEqual(new Map([['near', 2]]))
    expect(neighbourContext(new Map([['c', 2]]), odd, { neighbourDistance: 3 })).toEqual(
      new Map([
        ['far', 2 / 3],
        ['near', 2],
      ]),
    )
  })

  it('counts a neighbour listed twice once, at its smaller distance', () => {
    const twice = new Map([
      [
        'c',
        [
          { id: 'n', distance: 2 },
          { id: 'n', distance: 1 },
        ],
      ],
    ])
    expect(neighbourContext(new Map([['c', 1]]), twice)).toEqual(new Map([['n', 1]]))
  })

  it('spreads nothing from scores that are zero, negative or not finite, or at distance 0', () => {
    const lone = (score: number) => neighbourContext(new Map([['t3', score]]), neighbours)
    expect(lone(0).size).toBe(0)
    expect(lone(-1).size).toBe(0)
    expect(lone(Number.NaN).size).toBe(0)
    expect(lone(Number.POSITIVE_INFINITY).size).toBe(0)
    expect(neighbourContext(new Map([['t3', 1]]), neighbours, { neighbourDistance: 0 }).size).toBe(0)
  })

  it('returns nothing for no candidates or a candidate without neighbours', () => {
    expect(neighbourContext(new Map(), neighbours).size).toBe(0)
    expect(neighbourContext(new Map([['alone', 1]]), neighbours).size).toBe(0)
  })

  it('rejects options out of range, naming the field and limit', () => {
    const thrown = (run: () => unknown) => {
      try {
        run()
      } catch (error) {
        return error as ValidationError
      }
      throw new Error('did not throw')
    }
    expect(
      thrown(() => neighbourContext(new Map(), new Map(), { neighbourDistance: 51 })).issues[0],
    ).toMatchObject({
      field: 'neighbourDistance',
      limit: 50,
    })
    expect(thrown(() => neighbourContext(new Map(), new Map(), { neighbourDistance: 1.5 }))).toBeInstanceOf(
      ValidationError,
    )
    expect(thrown(() => episodeContext(new Map(), new Map(), { episodeShare: 2 })).issues[0]).toMatchObject({
      field: 'episodeShare',
      limit: 1,
    })
  })
})

describe('episodeContext', () => {
  const episodeOf = new Map([
    ['a1', 'a1'],
    ['a2', 'a1'],
    ['a3', 'a1'],
    ['b1', 'b1'],
    ['b2', 'b1'],
    ['c1', 'c1'],
  ])

  it('gives each turn its episode’s best score times episodeShare, its own included', () => {
    const base = new Map([
      ['a1', 0.5],
      ['a3', 1],
      ['b2', 0.4],
    ])
    expect(episodeContext(base, episodeOf)).toEqual(
      new Map([
        ['a1', 0.2],
        ['a2', 0.2],
        ['a3', 0.2],
        ['b1', 0.4 * 0.2],
        ['b2', 0.4 * 0.2],
      ]),
    )
    expect(episodeContext(base, episodeOf, { episodeShare: 1 }).get('a2')).toBe(1)
  })

  it('leaves out episodes where nothing scored, scores of unknown turns, and everything at share 0', () => {
    const base = new Map([
      ['c1', 0],
      ['elsewhere', 5],
      ['b1', Number.NaN],
    ])
    expect(episodeContext(base, episodeOf).size).toBe(0)
    expect(episodeContext(new Map([['a1', 1]]), episodeOf, { episodeShare: 0 }).size).toBe(0)
  })
})

describe('episodes', () => {
  it('starts a new episode after a pause longer than an hour, keyed by its first turn', () => {
    const turns = [
      { id: 'x1', timestamp: at(0) },
      { id: 'x2', timestamp: at(1) },
      // Exactly an hour later: still the same sitting.
      { id: 'x3', timestamp: at(61) },
      // An hour and a minute later: a new one.
      { id: 'y1', timestamp: at(122) },
      { id: 'y2', timestamp: at(123) },
    ]
    expect(episodes(turns)).toEqual(
      new Map([
        ['x1', 'x1'],
        ['x2', 'x1'],
        ['x3', 'x1'],
        ['y1', 'y1'],
        ['y2', 'y1'],
      ]),
    )
  })

  it('honours gapMs, 0 putting every pause into a new episode', () => {
    const turns = [
      { id: 'a', timestamp: at(0) },
      { id: 'b', timestamp: at(5) },
      { id: 'c', timestamp: at(5) },
    ]
    expect([...episodes(turns, 10 * MINUTE).values()]).toEqual(['a', 'a', 'a'])
    expect([...episodes(turns, 4 * MINUTE).values()]).toEqual(['a', 'b', 'b'])
    expect([...episodes(turns, 0).values()]).toEqual(['a', 'b', 'b'])
  })

  it('orders turns by time first and gives a turn without a valid time an episode of its own', () => {
    const turns = [
      { id: 'late', timestamp: at(200) },
      { id: 'early', timestamp: at(0) },
      { id: 'broken', timestamp: new Date(Number.NaN) },
      { id: 'early2', timestamp: at(30) },
    ]
    expect(episodes(turns)).toEqual(
      new Map([
        ['broken', 'broken'],
        ['early', 'early'],
        ['early2', 'early'],
        ['late', 'late'],
      ]),
    )
  })

  it('handles no turns, and rejects a gap that is negative or not finite', () => {
    expect(episodes([]).size).toBe(0)
    expect(() => episodes([], -1)).toThrow(ValidationError)
    expect(() => episodes([], Number.NaN)).toThrow(ValidationError)
    expect(() => episodes([], Number.POSITIVE_INFINITY)).toThrow(ValidationError)
  })
})
