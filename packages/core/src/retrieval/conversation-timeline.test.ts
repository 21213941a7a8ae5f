import { describe, expect, it } from 'vitest'
import { ConversationTimeline, type TimelineTurn } from './conversation-timeline.ts'

interface Turn {
  id: number
  session: string
  time: number
}

/** The store's reads, by brute force over every turn: the timeline must answer exactly these. */
function inOrder(turns: readonly Turn[], session: string): Turn[] {
  return turns.filter((t) => t.session === session).sort((a, b) => a.time - b.time || a.id - b.id)
}
function besideReference(turns: readonly Turn[], id: number, reach: number) {
  const turn = turns.find((t) => t.id === id) as Turn
  const list = inOrder(turns, turn.session)
  const at = list.findIndex((t) => t.id === id)
  const view = (t: Turn): TimelineTurn => ({ id: String(t.id), time: t.time })
  return {
    before: list
      .slice(Math.max(0, at - reach), at)
      .reverse()
      .map(view),
    after: list.slice(at + 1, at + 1 + reach).map(view),
  }
}
function spanReference(turns: readonly Turn[], session: string, from: number, to: number, limit: number) {
  const start = (turns.find((t) => t.id === from) as Turn).time
  const end = (turns.find((t) => t.id === to) as Turn).time
  return inOrder(turns, session)
    .filter((t) => t.time >= start && t.time <= end)
    .slice(0, limit)
    .map((t) => ({ id: String(t.id), time: t.time }))
}

function seeded(seed: number) {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31
    return state / 2 ** 31
  }
}

describe('ConversationTimeline', () => {
  it('answers the turns beside a turn and a span exactly as the store orders them, through adds, edits and removals', () => {
    const random = seeded(7)
    const timeline = new ConversationTimeline()
    let turns: Turn[] = []
    let nextId = 1
    for (let step = 0; step < 3_000; step++) {
      const r = random()
      if (r < 0.7 || turns.length < 5) {
        // Few distinct times, so ties on time (ordered by id) are common; out-of-order times too.
        const turn = {
          id: nextId++,
          session: `s${Math.floor(random() * 6)}`,
          time: Math.floor(random() * 40),
        }
        turns.push(turn)
        timeline.add(String(turn.id), turn.session, turn.time)
      } else if (r < 0.85) {
        const gone = turns[Math.floor(random() * turns.length)] as Turn
        turns = turns.filter((t) => t !== gone)
        expect(timeline.remove(String(gone.id))).toBe(true)
      } else {
        // The same id added again (a replaced document) moves it.
        const moved = turns[Math.floor(random() * turns.length)] as Turn
        moved.time = Math.floor(random() * 40)
        timeline.add(String(moved.id), moved.session, moved.time)
      }
      if (step % 10 !== 0) continue
      expect(timeline.size).toBe(turns.length)
      const probe = turns[Math.floor(random() * turns.length)] as Turn
      const reach = 1 + Math.floor(random() * 4)
      expect(timeline.beside(String(probe.id), reach)).toEqual(besideReference(turns, probe.id, reach))
      const other = inOrder(turns, probe.session)[
        Math.floor(random() * inOrder(turns, probe.session).length)
      ] as Turn
      const [from, to] = probe.time <= other.time ? [probe, other] : [other, probe]
      const limit = 1 + Math.floor(random() * 30)
      expect(timeline.span(probe.session, String(from.id), String(to.id), limit)).toEqual(
        spanReference(turns, probe.session, from.id, to.id, limit),
      )
    }
  })

  it('answers null for a turn it does not hold, or a span whose turns are of another conversation', () => {
    const timeline = new ConversationTimeline()
    timeline.add('1', 'a', 10)
    timeline.add('2', 'a', 20)
    timeline.add('3', 'b', 15)
    expect(timeline.beside('9', 2)).toBeNull()
    expect(timeline.span('a', '1', '3', 10)).toBeNull()
    expect(timeline.span('a', '1', '9', 10)).toBeNull()
    expect(timeline.span('c', '1', '2', 10)).toBeNull()
    expect(timeline.span('a', '1', '2', 10)).toEqual([
      { id: '1', time: 10 },
      { id: '2', time: 20 },
    ])
  })

  it("tells a held turn's conversation, time and set, through growth, replacement and slot reuse", () => {
    const timeline = new ConversationTimeline()
    // Past the initial capacity (16), so the summary flags are carried through a grow.
    // Speakers: named (two names), none named (null), or not known (undefined).
    const speakerOf = (i: number) =>
      i % 4 === 0 ? undefined : i % 4 === 1 ? null : i % 4 === 2 ? 'Ann' : 'Bo'
    for (let i = 1; i <= 40; i++) timeline.add(String(i), `s${i % 3}`, i * 10, i % 5 === 0, speakerOf(i))
    expect(timeline.facts('5')).toEqual({ sessionId: 's2', time: 50, summary: true, speaker: null })
    expect(timeline.facts('6')).toEqual({ sessionId: 's0', time: 60, summary: false, speaker: 'Ann' })
    expect(timeline.facts('35')).toEqual({ sessionId: 's2', time: 350, summary: true, speaker: 'Bo' })
    expect(timeline.facts('36')).toEqual({ sessionId: 's0', time: 360, summary: false, speaker: undefined })
    expect(timeline.facts('99')).toBeNull()
    // A turn edited into (or out of) a summary, and moved: the new facts.
    timeline.add('5', 's9', 55, false, 'Cy')
    expect(timeline.facts('5')).toEqual({ sessionId: 's9', time: 55, summary: false, speaker: 'Cy' })
    // A removed summary's slot reused by an ordinary turn: no flag or speaker left behind.
    timeline.remove('10')
    expect(timeline.facts('10')).toBeNull()
    timeline.add('41', 's1', 410)
    expect(timeline.facts('41')).toEqual({ sessionId: 's1', time: 410, summary: false, speaker: undefined })
  })

  it('does not hold a turn without a conversation, a numeric id or a time', () => {
    const timeline = new ConversationTimeline()
    timeline.add('1', null, 10)
    timeline.add('x', 'a', 10)
    timeline.add('2', 'a', null)
    timeline.add('3', 'a', Number.NaN)
    expect(timeline.size).toBe(0)
    expect(timeline.beside('1', 1)).toBeNull()
  })

  it('lets go of a deleted conversation and reuses the slots of removed turns', () => {
    const timeline = new ConversationTimeline()
    for (let i = 1; i <= 2_000; i++) timeline.add(String(i), `s${i % 4}`, i)
    const full = timeline.bytes()
    for (let i = 1; i <= 2_000; i++) if (i % 4 !== 0) timeline.remove(String(i))
    expect(timeline.size).toBe(500)
    expect(timeline.turnIds()).toHaveLength(500)
    // 1,500 new turns take the removed turns' slots: the arrays do not grow.
    for (let i = 2_001; i <= 3_500; i++) timeline.add(String(i), 'new', i)
    expect(timeline.bytes()).toBeLessThanOrEqual(full + 1_500 * 8)
    expect(timeline.beside('2001', 1)).toEqual({ before: [], after: [{ id: '2002', time: 2_002 }] })
    expect(timeline.beside('4', 2)).toEqual({
      before: [],
      after: [
        { id: '8', time: 8 },
        { id: '12', time: 12 },
      ],
    })
  })
})
