import { describe, expect, it } from 'vitest'
import { seededRandom } from '../random.ts'
import { IMPACT_BITS, PostingLists } from './posting-lists.ts'

interface ListsInside {
  words: Int32Array
  floats: Float32Array
  offsets: Int32Array
  lengths: Int32Array
  partialCapacity: number
}

const inside = (lists: PostingLists) => lists as unknown as ListsInside

/** Lists over `slots` slots, each slot in a random subset of them with a random impact. */
function randomLists(seed: number, slots: number, listCount: number, onKernel: boolean) {
  const random = seededRandom(seed)
  const lists = new PostingLists(listCount, () => onKernel)
  const members: number[][] = Array.from({ length: listCount }, () => [])
  for (let slot = 0; slot < slots; slot++) {
    lists.reserveSlots(slot + 1)
    for (let list = 0; list < listCount; list++) {
      if (random() < 0.3) {
        lists.append(list, (slot << IMPACT_BITS) | (1 + Math.floor(random() * 255)))
        members[list]?.push(slot)
      }
    }
  }
  return { lists, members, random }
}

describe('PostingLists', () => {
  it.each([
    [false, 10],
    [true, 10],
    [false, 600],
    [true, 600],
  ])('selects the best partial scores and zeroes them (kernel %s, breadth %i)', (onKernel, breadth) => {
    const slots = 30_000
    const { lists, random } = randomLists(breadth + (onKernel ? 1 : 0), slots, 12, onKernel)
    expect(lists.usesKernel).toBe(onKernel)
    for (let query = 0; query < 5; query++) {
      const chosen = [0, 3, 5, 8, 11].filter(() => random() < 0.8)
      const weights = chosen.map(() => random() / 255)
      for (const [i, list] of chosen.entries()) lists.accumulate(list, weights[i] as number)
      const scores = Float32Array.from(inside(lists).floats.subarray(0, slots))
      const best = lists.select(slots, breadth)
      // What a pass over every slot keeps: the best scores (ties make the cut's member arbitrary,
      // so the check is on the scores kept).
      const expected = Array.from(scores)
        .sort((a, b) => b - a)
        .slice(0, breadth)
      const kept = Array.from(best.scores.subarray(0, best.size)).sort((a, b) => b - a)
      expect(kept).toEqual(expected)
      for (let n = 0; n < best.size; n++) expect(scores[best.slots[n] as number]).toBe(best.scores[n])
      expect(
        inside(lists)
          .floats.subarray(0, slots)
          .every((score) => score === 0),
      ).toBe(true)
    }
  })

  it('offers every slot, zero scores too, when fewer than the breadth share anything', () => {
    const lists = new PostingLists(4, () => true)
    lists.reserveSlots(5_000)
    lists.append(1, (7 << IMPACT_BITS) | 200)
    lists.accumulate(1, 0.01)
    const best = lists.select(5_000, 64)
    expect(best.size).toBe(64)
    expect(Array.from(best.slots).includes(7)).toBe(true)
  })

  it('leaves no entry of a removed slot behind, in the lists or in runs they moved out of', () => {
    for (const onKernel of [false, true]) {
      const { lists, members } = randomLists(4, 3_000, 6, onKernel)
      const gone = new Set<number>()
      for (const [list, slots] of members.entries())
        for (const slot of slots)
          if (slot % 3 === 0) {
            lists.removeAt(list, lists.indexOf(list, slot))
            gone.add(slot)
          }
      // Every non-zero word past the partial scores and the pre-filter's buffers is a live entry
      // (impacts are at least 1, so no live entry is a zero word).
      const expectClean = () => {
        const { words, partialCapacity } = inside(lists)
        let nonZero = 0
        for (let i = partialCapacity + 2 * 4_096; i < words.length; i++) {
          const word = words[i] as number
          if (word === 0) continue
          nonZero++
          expect(gone.has(word >>> IMPACT_BITS)).toBe(false)
        }
        expect(nonZero).toBe(lists.entryCount)
      }
      expectClean()
      // New slots: runs move to the end and the buffer is repacked, in place on the kernel.
      // Skewed, so some lists move often and others keep their runs.
      const random = seededRandom(8)
      for (let slot = 3_000; slot < 40_000; slot++) {
        lists.reserveSlots(slot + 1)
        lists.append(Math.floor(6 * random() ** 3), (slot << IMPACT_BITS) | 1)
        if (slot % 5_000 === 0) expectClean()
      }
      expect(lists.usesKernel).toBe(onKernel)
      expectClean()
      lists.trim()
      expectClean()
      lists.clear()
      expect(lists.usesKernel).toBe(false)
      expect(lists.entryCount).toBe(0)
    }
  })
})
