// The plain BM25 baseline every recall figure is read against, computed in the same run.
import { queryTerms } from '@engram/core'

/** The dataset README's baseline: BM25 over `Speaker said, "text"`, lowercase words, no stop words. */
export function bm25Baseline(docs: { id: string; text: string }[]) {
  const k1 = 1.2
  const b = 0.75
  const tokenised = docs.map((d) => ({
    id: d.id,
    terms:
      d.text
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu)
        ?.filter((w) => queryTerms(w).length) ?? [],
  }))
  const avg = tokenised.reduce((s, d) => s + d.terms.length, 0) / Math.max(1, tokenised.length)
  const df = new Map<string, number>()
  for (const d of tokenised) for (const t of new Set(d.terms)) df.set(t, (df.get(t) ?? 0) + 1)
  const tf = tokenised.map((d) => {
    const counts = new Map<string, number>()
    for (const t of d.terms) counts.set(t, (counts.get(t) ?? 0) + 1)
    return { id: d.id, counts, length: d.terms.length }
  })
  return (query: string, limit: number): string[] => {
    const terms = queryTerms(query)
    const scored = tf.map((d) => {
      let score = 0
      for (const t of terms) {
        const f = d.counts.get(t)
        if (!f) continue
        const n = df.get(t) ?? 0
        const idf = Math.log(1 + (tokenised.length - n + 0.5) / (n + 0.5))
        score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.length) / avg))
      }
      return { id: d.id, score }
    })
    return scored
      .filter((s) => s.score > 0)
      .sort((x, y) => y.score - x.score)
      .slice(0, limit)
      .map((s) => s.id)
  }
}
