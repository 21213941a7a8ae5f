import type { MemoryEntry } from '../types.ts'

/** Lowercase word tokens: the word set of the spec's Jaccard similarity. */
export function wordSet(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? [])
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
 * Spec 000: compare all entry pairs and mark the older of each pair at or above the threshold,
 * as a duplicate of the newer entry it is most similar to (ties: the first in input order).
 *
 * The all-pairs scan is O(n²) in Jaccard computations: 2M pairs at 2k entries, 50M at 10k, run
 * every two minutes. This finds exactly the same pairs with prefix filtering (Bayardo et al.,
 * "Scaling up all pairs similarity search"): with each word set sorted rarest word first, two
 * sets can reach Jaccard t only if they share a word among the first |A| − ⌈t·|A|⌉ + 1 of each,
 * so only pairs sharing a rare word, and of compatible sizes, are compared at all.
 */
export function findRedundantEntries(entries: readonly MemoryEntry[], threshold = 0.9): RedundantEntry[] {
  const sets = entries.map((e) => wordSet(e.content))
  const pairs = threshold > 0 ? candidatePairs(sets, threshold) : allPairs(sets.length)
  const best = new Map<number, { newer: number; similarity: number }>()
  for (const [i, j] of pairs) {
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
  return [...best]
    .sort(([a], [b]) => a - b)
    .map(([older, { newer, similarity }]) => ({
      entryId: (entries[older] as MemoryEntry).id,
      duplicateOfId: (entries[newer] as MemoryEntry).id,
      similarity,
    }))
}

const FLOAT_SLACK = 1e-9

function* allPairs(n: number): Generator<[number, number]> {
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) yield [i, j]
}

/** Every pair that can reach the threshold (a superset of the answer, verified by the caller). */
function candidatePairs(sets: readonly Set<string>[], threshold: number): [number, number][] {
  const frequency = new Map<string, number>()
  for (const set of sets) for (const word of set) frequency.set(word, (frequency.get(word) ?? 0) + 1)
  // Rarest first; ties by the word itself so the order (and so the prefixes) is the same every run.
  const byRarity = (a: string, b: string) =>
    (frequency.get(a) as number) - (frequency.get(b) as number) || (a < b ? -1 : a > b ? 1 : 0)

  const pairs: [number, number][] = []
  const postings = new Map<string, number[]>()
  const empty: number[] = []
  // Shorter sets first: a set only needs partners at least threshold × its size, and every
  // earlier (no longer) partner passed that bound when it is probed.
  const order = sets.map((_, i) => i).sort((a, b) => (sets[a]?.size ?? 0) - (sets[b]?.size ?? 0) || a - b)
  const seen = new Int32Array(sets.length).fill(-1)
  for (const i of order) {
    const set = sets[i] as Set<string>
    if (set.size === 0) {
      // Two empty sets are identical (similarity 1): they pair with each other only.
      for (const j of empty) pairs.push([Math.min(i, j), Math.max(i, j)])
      empty.push(i)
      continue
    }
    const words = [...set].sort(byRarity)
    // The slack keeps float error (0.7 × 10 = 7.000000000000001) from shortening the prefix or
    // raising the size bound: either would lose a pair. Too long a prefix only costs time.
    const prefix = words.length - Math.ceil(threshold * words.length - FLOAT_SLACK) + 1
    const minPartnerSize = threshold * words.length - FLOAT_SLACK
    for (let w = 0; w < prefix; w++) {
      const list = postings.get(words[w] as string)
      if (list) {
        for (const j of list) {
          if (seen[j] === i || (sets[j] as Set<string>).size < minPartnerSize) continue
          seen[j] = i
          pairs.push([Math.min(i, j), Math.max(i, j)])
        }
        list.push(i)
      } else {
        postings.set(words[w] as string, [i])
      }
    }
  }
  return pairs
}
