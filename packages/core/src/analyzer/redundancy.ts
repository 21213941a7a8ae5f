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
 * Compares every pair (spec: all entry pairs) and marks the older of each pair at or above the
 * threshold. Word sets are built once; pairs whose sizes alone rule out the threshold are skipped
 * (|A∩B|/|A∪B| <= min/max), which keeps the O(n²) scan cheap on mixed-length histories.
 */
export function findRedundantEntries(entries: readonly MemoryEntry[], threshold = 0.9): RedundantEntry[] {
  const sets = entries.map((e) => wordSet(e.content))
  const marked = new Map<string, RedundantEntry>()
  for (let i = 0; i < entries.length; i++) {
    const a = sets[i] as Set<string>
    for (let j = i + 1; j < entries.length; j++) {
      const b = sets[j] as Set<string>
      const min = Math.min(a.size, b.size)
      const max = Math.max(a.size, b.size)
      if (max > 0 && min / max < threshold) continue
      const similarity = jaccardSimilarity(a, b)
      if (similarity < threshold) continue
      const ei = entries[i] as MemoryEntry
      const ej = entries[j] as MemoryEntry
      const iIsOlder =
        ei.timestamp.getTime() < ej.timestamp.getTime() ||
        (ei.timestamp.getTime() === ej.timestamp.getTime() && i < j)
      const [older, newer] = iIsOlder ? [ei, ej] : [ej, ei]
      if (!marked.has(older.id))
        marked.set(older.id, { entryId: older.id, duplicateOfId: newer.id, similarity })
    }
  }
  return [...marked.values()]
}
