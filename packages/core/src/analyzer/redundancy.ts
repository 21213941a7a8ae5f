import type { MemoryEntry } from '../types.ts'
import { PartitionJoin } from './partition-join.ts'
import { PrefixJoin } from './prefix-join.ts'
import { type PairSink, SetsBySize } from './set-layout.ts'
import { indexWords, type WordRuns } from './word-ids.ts'

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu

/** Lowercase word tokens: the word set of the spec's Jaccard similarity. */
export function wordSet(text: string): Set<string> {
  return new Set(text.toLowerCase().match(WORD) ?? [])
}

/** |A ∩ B| / |A ∪ B|; two empty sets are identical. */
export function jaccardSimilarity(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  let shared = 0
  for (const word of small) if (large.has(word)) shared++
  return shared / (a.size + b.size - shared)
}

export interface RedundantEntry {
  entryId: string
  duplicateOfId: string
  similarity: number
}

/**
 * Spec 000, word for word: compare all entry pairs and mark the older of each pair at or above the
 * threshold, as a duplicate of the newer entry it is most similar to (ties: the first in input
 * order). O(n²) Jaccard computations: the reference `findRedundantEntries` must equal, kept apart
 * from it (no shared code but the word sets) for its tests and benchmarks.
 */
export function findRedundantEntriesNaive(
  entries: readonly MemoryEntry[],
  threshold = 0.9,
): RedundantEntry[] {
  const sets = entries.map((e) => wordSet(e.content))
  const best = new Map<number, { newer: number; similarity: number }>()
  for (let i = 0; i < sets.length; i++) {
    for (let j = i + 1; j < sets.length; j++) {
      const similarity = jaccardSimilarity(sets[i] as Set<string>, sets[j] as Set<string>)
      if (similarity < threshold) continue
      const ti = (entries[i] as MemoryEntry).timestamp.getTime()
      const tj = (entries[j] as MemoryEntry).timestamp.getTime()
      // Same timestamp: input order decides which is older.
      const [older, newer] = ti < tj || (ti === tj && i < j) ? [i, j] : [j, i]
      const kept = best.get(older)
      if (!kept || similarity > kept.similarity || (similarity === kept.similarity && newer < kept.newer)) {
        best.set(older, { newer, similarity })
      }
    }
  }
  return [...best]
    .sort(([a], [b]) => a - b)
    .map(([older, { newer, similarity }]) => ({
      entryId: (entries[older] as MemoryEntry).id,
      duplicateOfId: (entries[newer] as MemoryEntry).id,
      similarity,
    }))
}

/** Postings per set the prefix join may meet before the partition join is weighed against it. */
const PREFIX_POSTINGS_PER_SET_ENOUGH = 64

/**
 * Which exact join finds the candidate pairs: each alone gives the all-pairs answer, so the choice
 * only moves the cost. 'cheaper' counts the candidates each would meet and runs that one; the
 * others are for tests and benchmarks.
 */
export type JoinChoice = 'cheaper' | 'prefix' | 'partition'

/**
 * The same answer as `findRedundantEntriesNaive`, from an exact set-similarity join (PPJoin: Xiao
 * et al., "Efficient similarity joins for near duplicate detection") instead of all n² pairs.
 * Words become integer ids ranked rarest first, each word set a sorted run of ids; two sets can
 * reach Jaccard t only if their sizes are within a factor t, they share a word among the first few
 * (rarest) of each (prefix filtering), and the words left after that shared one can still make up
 * the overlap (positional filtering). Pairs passing all three, and a 64-bit bitmap bound on their
 * overlap, are merged and measured with the same integer division as the naive scan, so the
 * similarities are bit-identical.
 *
 * Entries with identical word sets ("Done.", repeated tool output) are joined once as a group:
 * within a group every pair is at similarity 1, which no other pair can beat, so only the newest
 * member of each group needs a partner from the join. A thousand repeats of one reply would
 * otherwise be half a million pairs.
 *
 * The cost is the candidates plus the answer: a rare word shared by few sets keeps the prefix join
 * near linear on conversation text. A dense vocabulary (every word in a large share of the sets)
 * leaves it no rare word, and it grows towards n²; there the partition join (pigeonhole on the
 * words two sets do not share, `partition-join.ts`) meets a few percent of the candidates. Both
 * are exact, so which one runs changes only the time: each counts, before running, the candidates
 * it would meet, and the cheaper runs. Thousands of distinct sets all similar to each other still
 * make any exact join quadratic: that many pairs are the answer.
 */
export function findRedundantEntries(
  entries: readonly MemoryEntry[],
  threshold = 0.9,
  join: JoinChoice = 'cheaper',
): RedundantEntry[] {
  // At 0 and below (or NaN, which compares like 0 in the naive scan) every pair is in the answer:
  // there is nothing to filter.
  if (!(threshold > 0)) return findRedundantEntriesNaive(entries, threshold)
  // Jaccard never exceeds 1.
  if (threshold > 1) return []
  const times = new Float64Array(entries.length)
  for (let i = 0; i < entries.length; i++) times[i] = (entries[i] as MemoryEntry).timestamp.getTime()
  const choice = new DuplicateChoice(times)
  const runs = indexWords(entries.map((e) => e.content))
  const groups = groupIdentical(runs)
  const newest = chooseWithinGroups(groups, times, choice)
  const sets = new SetsBySize(runs, groups.representatives)
  const sink = new GroupPairs(groups, newest, times, choice)
  if (join === 'prefix') new PrefixJoin(sets, threshold).run(sink)
  else if (join === 'partition') new PartitionJoin(sets, threshold).run(sink)
  else {
    const prefix = new PrefixJoin(sets, threshold)
    const prefixCost = prefix.estimatedPairs()
    // Few postings per set: the prefix join is near linear already, and weighing the other would
    // cost more than it could save (conversation text: ~30 per set).
    if (prefixCost <= PREFIX_POSTINGS_PER_SET_ENOUGH * sets.count) prefix.run(sink)
    else {
      const partition = new PartitionJoin(sets, threshold)
      if (partition.estimatedCost() < prefixCost) partition.run(sink)
      else prefix.run(sink)
    }
  }
  return choice.result(entries)
}

/**
 * For each older entry, the newer one it is most similar to. The older of a pair is decided as the
 * spec's scan does (earlier timestamp; same timestamp: earlier in input), with i < j in input order,
 * so the answer does not depend on the order pairs are offered in.
 */
export class DuplicateChoice {
  private readonly newer: Int32Array
  private readonly best: Float64Array

  constructor(private readonly times: Float64Array) {
    this.newer = new Int32Array(times.length).fill(-1)
    this.best = new Float64Array(times.length)
  }

  offer(i: number, j: number, similarity: number): void {
    const ti = this.times[i] as number
    const tj = this.times[j] as number
    const iIsOlder = ti < tj || (ti === tj && i < j)
    const older = iIsOlder ? i : j
    const newer = iIsOlder ? j : i
    const kept = this.newer[older] as number
    const keptSimilarity = this.best[older] as number
    if (kept < 0 || similarity > keptSimilarity || (similarity === keptSimilarity && newer < kept)) {
      this.newer[older] = newer
      this.best[older] = similarity
    }
  }

  result(entries: readonly MemoryEntry[]): RedundantEntry[] {
    const marked: RedundantEntry[] = []
    for (let older = 0; older < entries.length; older++) {
      const newer = this.newer[older] as number
      if (newer < 0) continue
      marked.push({
        entryId: (entries[older] as MemoryEntry).id,
        duplicateOfId: (entries[newer] as MemoryEntry).id,
        similarity: this.best[older] as number,
      })
    }
    return marked
  }
}

interface IdenticalGroups {
  /** Entry → its group. */
  groupOf: Int32Array
  /** Group g's members, in input order: `members[memberStart[g]] … members[memberStart[g + 1] - 1]`. */
  memberStart: Int32Array
  members: Int32Array
  /** Group g's first member: the one whose word set stands for the group in the join. */
  representatives: Int32Array
}

/** Entries with identical word sets (the empty set included), found by hashing the id runs. */
function groupIdentical(runs: WordRuns): IdenticalGroups {
  const { start } = runs
  const n = start.length - 1
  const groupOf = new Int32Array(n)
  const representatives: number[] = []
  const hashes: number[] = []
  let capacity = 16
  while (capacity < 2 * n) capacity *= 2
  const slots = new Int32Array(capacity) // group + 1, 0 = empty
  const mask = capacity - 1
  for (let e = 0; e < n; e++) {
    const hash = hashRun(runs, e)
    let slot = hash & mask
    let group = -1
    for (let entry = slots[slot] as number; entry !== 0; entry = slots[slot] as number) {
      if (hashes[entry - 1] === hash && sameRun(runs, representatives[entry - 1] as number, e)) {
        group = entry - 1
        break
      }
      slot = (slot + 1) & mask
    }
    if (group < 0) {
      group = representatives.length
      representatives.push(e)
      hashes.push(hash)
      slots[slot] = group + 1
    }
    groupOf[e] = group
  }

  const groups = representatives.length
  const memberStart = new Int32Array(groups + 1)
  for (let e = 0; e < n; e++) {
    const g = (groupOf[e] as number) + 1
    memberStart[g] = (memberStart[g] as number) + 1
  }
  for (let g = 1; g <= groups; g++)
    memberStart[g] = (memberStart[g] as number) + (memberStart[g - 1] as number)
  const fill = memberStart.slice(0, groups)
  const members = new Int32Array(n)
  for (let e = 0; e < n; e++) {
    const g = groupOf[e] as number
    members[fill[g] as number] = e
    fill[g] = (fill[g] as number) + 1
  }
  return { groupOf, memberStart, members, representatives: Int32Array.from(representatives) }
}

function hashRun({ start, ids }: WordRuns, e: number): number {
  let hash = 0x811c9dc5 | 0
  for (let k = start[e] as number; k < (start[e + 1] as number); k++) {
    hash = Math.imul(hash ^ (ids[k] as number), 0x01000193)
  }
  return hash
}

function sameRun({ start, ids }: WordRuns, a: number, b: number): boolean {
  const aFrom = start[a] as number
  const bFrom = start[b] as number
  const size = (start[a + 1] as number) - aFrom
  if ((start[b + 1] as number) - bFrom !== size) return false
  for (let k = 0; k < size; k++) if (ids[aFrom + k] !== ids[bFrom + k]) return false
  return true
}

/**
 * Identical word sets are at similarity 1, the most there is, and only with each other, so the
 * choice of every group member with a newer member is the smallest-index newer member. Found per
 * member without visiting every pair: with i < j, i is the older one exactly when `ti <= tj` (false
 * when either is NaN, an invalid Date, which the scan then counts as the newer one; this
 * reproduces it). Returns, per entry, 1 when no member of its group is newer: those alone still
 * need a partner from another group.
 */
function chooseWithinGroups(
  groups: IdenticalGroups,
  times: Float64Array,
  choice: DuplicateChoice,
): Uint8Array {
  const { memberStart, members } = groups
  const newest = new Uint8Array(members.length)
  // Scratch, each group using its own slice (the slice of `members` it occupies).
  const scratch: GroupScratch = {
    time: new Float64Array(members.length),
    runningMax: new Float64Array(members.length),
    nextNewer: new Int32Array(members.length),
    stack: new Int32Array(members.length),
  }
  for (let g = 0; g + 1 < memberStart.length; g++) {
    const from = memberStart[g] as number
    const to = memberStart[g + 1] as number
    if (to - from === 1) newest[members[from] as number] = 1
    else chooseWithinGroup(members, from, to, times, choice, newest, scratch)
  }
  return newest
}

interface GroupScratch {
  time: Float64Array
  runningMax: Float64Array
  nextNewer: Int32Array
  stack: Int32Array
}

function chooseWithinGroup(
  members: Int32Array,
  from: number,
  to: number,
  times: Float64Array,
  choice: DuplicateChoice,
  newest: Uint8Array,
  { time, runningMax, nextNewer, stack }: GroupScratch,
): void {
  for (let k = from; k < to; k++) time[k] = times[members[k] as number] as number
  // An earlier member i is newer than o when !(ti <= to): the first such i is the first whose
  // running maximum (NaN counted as +∞) exceeds to (NaN: −∞, as every earlier one is then newer).
  let max = -Infinity
  for (let k = from; k < to; k++) {
    const t = time[k] as number
    max = Math.max(max, Number.isNaN(t) ? Infinity : t)
    runningMax[k] = max
  }
  // A later member j is newer than o when to <= tj: the first such j is o's next greater or equal
  // element (a NaN on either side never qualifies), found with a decreasing stack.
  let height = 0
  for (let k = to - 1; k >= from; k--) {
    nextNewer[k] = -1
    const t = time[k] as number
    if (Number.isNaN(t)) continue // finds no later newer member, and is none for an earlier one
    while (height > 0 && (time[stack[from + height - 1] as number] as number) < t) height--
    if (height > 0) nextNewer[k] = stack[from + height - 1] as number
    stack[from + height++] = k
  }

  for (let k = from; k < to; k++) {
    const t = time[k] as number
    const older = Number.isNaN(t) ? -Infinity : t
    // Binary search: the first k' < k with runningMax[k'] > older.
    let low = from
    let high = k
    while (low < high) {
      const mid = (low + high) >>> 1
      if ((runningMax[mid] as number) > older) high = mid
      else low = mid + 1
    }
    const newer = low < k ? low : (nextNewer[k] as number)
    const member = members[k] as number
    if (newer < 0) newest[member] = 1
    else {
      const other = members[newer] as number
      choice.offer(Math.min(member, other), Math.max(member, other), 1)
    }
  }
}

/**
 * Turns a similar pair of group representatives into the choices of their members. Only a member
 * with no newer identical entry takes a partner from another group; its best there is the group's
 * smallest-index member newer than it, as all members are at the same similarity.
 */
class GroupPairs implements PairSink {
  constructor(
    private readonly groups: IdenticalGroups,
    private readonly newest: Uint8Array,
    private readonly times: Float64Array,
    private readonly choice: DuplicateChoice,
  ) {}

  pair(a: number, b: number, similarity: number): void {
    const { groupOf } = this.groups
    this.offerAcross(groupOf[a] as number, groupOf[b] as number, similarity)
    this.offerAcross(groupOf[b] as number, groupOf[a] as number, similarity)
  }

  private offerAcross(from: number, to: number, similarity: number): void {
    const { memberStart, members } = this.groups
    for (let k = memberStart[from] as number; k < (memberStart[from + 1] as number); k++) {
      const member = members[k] as number
      if (this.newest[member] === 1) this.offerFirstNewer(member, to, similarity)
    }
  }

  private offerFirstNewer(older: number, to: number, similarity: number): void {
    const { memberStart, members } = this.groups
    const olderTime = this.times[older] as number
    for (let k = memberStart[to] as number; k < (memberStart[to + 1] as number); k++) {
      const member = members[k] as number
      const memberTime = this.times[member] as number
      // As the scan decides it for a pair i < j: i is the older when ti <= tj.
      if (member < older ? !(memberTime <= olderTime) : olderTime <= memberTime) {
        this.choice.offer(Math.min(older, member), Math.max(older, member), similarity)
        return
      }
    }
  }
}
