import { ConversationTimeline, EPISODE_GAP_MS, type StoredMessage, seededRandom } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { RecallSources } from '../ports/recall-sources.ts'
import { InMemoryRecallSources } from '../testing/in-memory-recall-sources.ts'
import { contextTurnsWorthReading } from './search-context.ts'
import {
  type EpisodePoint,
  episodesAround,
  episodesOf,
  neighbours,
  timelineSources,
  turnsNear,
} from './search-dialogue.ts'
import type { SearchWeights } from './search-types.ts'

// Episodes from the turns read beside the candidates (episodesAround) against the whole spans'
// read (episodesOf, search's path before): the same episodes for every turn search scores.

const MINUTE = 60_000
const START = Date.parse('2026-03-01T09:00:00Z')

/** Conversations whose pauses are short, long, or none (turns at one instant), by a seeded draw. */
function history(seed: number, conversations: number, turnsEach: number) {
  const random = seededRandom(seed)
  const recall = new InMemoryRecallSources()
  const turns: { id: string; sessionId: string; timestamp: Date }[] = []
  let id = 1
  for (let c = 0; c < conversations; c++) {
    let at = START + c * 1_000 * MINUTE
    for (let t = 0; t < turnsEach; t++) {
      const draw = random()
      // Mostly minutes apart, sometimes the same instant, sometimes hours or days (a new episode),
      // and pauses just under the gap that add up past it.
      at +=
        draw < 0.1
          ? 0
          : draw < 0.75
            ? Math.floor(random() * 20) * MINUTE
            : draw < 0.9
              ? EPISODE_GAP_MS - MINUTE
              : EPISODE_GAP_MS + Math.floor(random() * 3_000) * MINUTE
      const message: StoredMessage = {
        id: String(id++),
        sessionId: `s${c}`,
        role: 'user',
        speaker: null,
        content: `turn ${id}`,
        tokenCount: 2,
        isCompressed: false,
        timestamp: new Date(at),
        metadata: {},
      }
      recall.addTurn('a', `c${c}`, message)
      turns.push(message)
    }
  }
  return { recall, turns, random }
}

/** The same-episode relation over ids: what episodeContext reads off the keys. */
function together(episodeOf: ReadonlyMap<string, string>, ids: readonly string[]) {
  const out: string[] = []
  for (const a of ids)
    for (const b of ids)
      if (a < b && episodeOf.has(a) && episodeOf.get(a) === episodeOf.get(b)) out.push(`${a}~${b}`)
  return out.sort()
}

/** Counts the turns each span read returns. */
function counting(recall: RecallSources) {
  const read = { spans: 0, rows: 0 }
  const turnSpans = recall.turnSpans.bind(recall)
  recall.turnSpans = async (spans, limit) => {
    read.spans += spans.length
    const rows = await turnSpans(spans, limit)
    read.rows += rows.length
    return rows
  }
  return read
}

describe('episodesAround', () => {
  it('gives every scored turn the episode the whole spans gave it, over random histories', async () => {
    let readFewer = 0
    let readAll = 0
    for (let seed = 1; seed <= 40; seed++) {
      const { recall, turns, random } = history(seed, 4, 60)
      const picked = turns.filter(() => random() < 0.12)
      // Most candidates scored (they set the spans), a few scored nothing (episodes inside them).
      const scoring = picked.filter(() => random() < 0.8)
      const others = picked.filter((t) => !scoring.includes(t))
      const reach = 1 + Math.floor(random() * 3)
      const { near, runs } = await turnsNear(recall, scoring, reach)
      const points: EpisodePoint[] = scoring.map((t) => ({
        sessionId: t.sessionId,
        id: t.id,
        time: t.timestamp.getTime(),
      }))
      for (const t of scoring)
        for (const n of near.get(t.id) ?? []) points.push({ sessionId: t.sessionId, id: n.id, time: n.time })
      const asPoints = others.map((t) => ({ sessionId: t.sessionId, id: t.id, time: t.timestamp.getTime() }))

      const fewer = counting(recall)
      const around = await episodesAround(recall, points, runs, asPoints)
      readFewer += fewer.rows
      recall.turnSpans = InMemoryRecallSources.prototype.turnSpans.bind(recall)
      const all = counting(recall)
      const whole = await episodesOf(recall, points)
      readAll += all.rows

      const scored = [...new Set([...points.map((p) => p.id), ...others.map((t) => t.id)])]
      // Every point, and every other candidate the spans covered, has an episode both ways...
      expect(scored.filter((id) => around.has(id)).sort()).toEqual(
        scored.filter((id) => whole.has(id)).sort(),
      )
      // ...and the same turns share one.
      expect(together(around, scored)).toEqual(together(whole, scored))
    }
    // The point of it: a fraction of the turns read.
    expect(readFewer).toBeLessThan(readAll / 2)
  })

  it('reads nothing when the turns beside the candidates answer every pause', async () => {
    const { recall, turns } = history(7, 1, 40)
    const candidate = turns[20] as (typeof turns)[number]
    const { near, runs } = await turnsNear(recall, [candidate], 3)
    const points = [
      { sessionId: candidate.sessionId, id: candidate.id, time: candidate.timestamp.getTime() },
      ...(near.get(candidate.id) ?? []).map((n) => ({
        sessionId: candidate.sessionId,
        id: n.id,
        time: n.time,
      })),
    ]
    const read = counting(recall)
    const episodeOf = await episodesAround(recall, points, runs)
    expect(read.spans).toBe(0)
    expect(episodeOf.size).toBe(points.length)
  })

  it('reads the stretch between two candidates hours apart, and splits at a long pause inside it', async () => {
    const recall = new InMemoryRecallSources()
    // Five turns: 40 minutes apart, then 2 hours, then 40 minutes twice (no two candidates adjacent).
    const times = [0, 40, 160, 200, 240].map((m) => START + m * MINUTE)
    const turns = times.map((time, i) => {
      const message: StoredMessage = {
        id: String(i + 1),
        sessionId: 's',
        role: 'user',
        speaker: null,
        content: `turn ${i}`,
        tokenCount: 2,
        isCompressed: false,
        timestamp: new Date(time),
        metadata: {},
      }
      recall.addTurn('a', 'c', message)
      return message
    })
    const point = (i: number) => ({ sessionId: 's', id: String(i + 1), time: times[i] as number })
    // No runs: nothing read beside them, so the 240 minutes between turns 0 and 4 are read.
    const read = counting(recall)
    const episodeOf = await episodesAround(recall, [point(0), point(4)], [])
    expect(read.spans).toBe(1)
    expect(episodeOf.get('1')).not.toBe(episodeOf.get('5'))
    // Turns 2..4 are 40 minutes apart each: one episode, though 80 minutes lie between 2 and 4.
    const same = await episodesAround(recall, [point(2), point(4)], [])
    expect(same.get('3')).toBe(same.get('5'))
    expect(turns).toHaveLength(5)
  })
})

describe('turnsNear', () => {
  it('uses a read started ahead when it covers every turn at the reach, and reads itself otherwise', async () => {
    const { recall, turns } = history(3, 2, 30)
    const asked = [turns[5], turns[40]] as (typeof turns)[number][]
    const calls: string[][] = []
    const turnsBeside = recall.turnsBeside.bind(recall)
    recall.turnsBeside = async (ids, reach) => {
      calls.push([...ids])
      return turnsBeside(ids, reach)
    }
    const expected = await neighbours(recall, asked, 2)
    calls.length = 0
    // Started for more ids than score (the candidates that score nothing among them).
    const wider = [...asked, turns[7], turns[50]].map((t) => (t as (typeof turns)[number]).id)
    const ahead = { ids: new Set(wider), reach: 2, rows: turnsBeside(wider, 2) }
    expect((await turnsNear(recall, asked, 2, ahead)).near).toEqual(expected)
    expect(calls).toEqual([])
    // Another reach, or a turn it did not cover: read as before.
    await turnsNear(recall, asked, 3, ahead)
    await turnsNear(recall, [...asked, turns[20] as (typeof turns)[number]], 2, ahead)
    expect(calls).toHaveLength(2)
  })
})

describe("turnsNear from the timeline's neighbours (hybridmsg18)", () => {
  it("gives the store's neighbours and runs over random histories, reading nothing", async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { recall, turns, random } = history(seed, 4, 60)
      const timeline = new ConversationTimeline()
      for (const turn of turns) timeline.add(turn.id, turn.sessionId, turn.timestamp.getTime())
      let storeReads = 0
      const turnsBeside = recall.turnsBeside.bind(recall)
      recall.turnsBeside = async (ids, reach) => {
        storeReads++
        return turnsBeside(ids, reach)
      }
      const asked = turns.filter(() => random() < 0.15)
      const reach = 1 + Math.floor(random() * 3)
      const fromStore = await turnsNear(recall, asked, reach)
      storeReads = 0
      const direct = await turnsNear(
        timelineSources(recall, () => timeline, true),
        asked,
        reach,
      )
      expect(storeReads).toBe(0)
      expect(direct.near).toEqual(fromStore.near)
      // Runs in the same order (the store's rows come per candidate too).
      expect(direct.runs).toEqual(fromStore.runs)
    }
  })

  it('reads the store when the timeline does not hold a turn, or is not held', async () => {
    const { recall, turns } = history(7, 2, 30)
    const timeline = new ConversationTimeline()
    for (const turn of turns.slice(0, 40)) timeline.add(turn.id, turn.sessionId, turn.timestamp.getTime())
    let storeReads = 0
    const turnsBeside = recall.turnsBeside.bind(recall)
    recall.turnsBeside = async (ids, reach) => {
      storeReads++
      return turnsBeside(ids, reach)
    }
    const asked = [turns[3], turns[50]] as (typeof turns)[number][]
    const expected = await neighbours(recall, asked, 2)
    storeReads = 0
    expect(
      (
        await turnsNear(
          timelineSources(recall, () => timeline, true),
          asked,
          2,
        )
      ).near,
    ).toEqual(expected)
    expect(
      (
        await turnsNear(
          timelineSources(recall, () => null, true),
          asked,
          2,
        )
      ).near,
    ).toEqual(expected)
    expect(storeReads).toBe(2)
  })
})

describe('contextTurnsWorthReading', () => {
  const weights = { context: 0.5, time: 0.5, speaker: 0.5 } as SearchWeights
  const dialogue = {
    context: new Map([
      ['high', 1],
      ['low', 0.1],
      ['none', 0],
    ]),
    episode: new Map([['low', 0.05]]),
  }
  const cut = { pool: 2, threshold: null, weights, windows: false, participants: false }

  it('reads only the turns whose score could reach the pool', () => {
    // The pool's cut is 0.3: 'low' can reach 0.5 × 0.1 + 0.05 = 0.1 at most.
    expect(
      contextTurnsWorthReading(['high', 'low', 'none'], dialogue, { ...cut, scores: [0.9, 0.3, 0.01] }),
    ).toEqual(['high'])
  })

  it('reads every turn that could score while the pool is not full, never one that cannot', () => {
    expect(contextTurnsWorthReading(['high', 'low', 'none'], dialogue, { ...cut, scores: [0.9] })).toEqual([
      'high',
      'low',
    ])
  })

  it('counts the factors a named period or participant may add, and the threshold', () => {
    // 0.1 × 1.5 × 1.5 = 0.225 reaches a cut of 0.2.
    expect(
      contextTurnsWorthReading(['low'], dialogue, {
        ...cut,
        scores: [0.9, 0.2],
        windows: true,
        participants: true,
      }),
    ).toEqual(['low'])
    // Scores under the threshold are no hits: they do not make the cut.
    expect(
      contextTurnsWorthReading(['low'], dialogue, { ...cut, scores: [0.9, 0.3], threshold: 0.5 }),
    ).toEqual(['low'])
  })
})
