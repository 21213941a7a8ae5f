import { nameTokens } from './graph.ts'

/** Names read per text at most: the agent's entities that share a word with it, most mentioned first. */
export const MAX_KNOWN_NAMES = 200

/**
 * Writes the agent's known names back in their own capitals where the text wrote them in lower
 * case ("dana moved to Lisbon" → "Dana moved to Lisbon"). The offline extractor finds names by
 * their capitals (wink-nlp's proper nouns), so without this a person the graph already knows
 * would be missed whenever a user types quickly. Only names that carry a capital are restored
 * (lower-case entities such as "pottery class" are not names), and only whole-word runs match.
 * Linear in the text: one pass over its words, each compared with the names starting with it.
 */
export function restoreKnownNames(text: string, knownNames: readonly string[]): string {
  if (knownNames.length === 0) return text
  const byFirstWord = new Map<string, string[][]>()
  for (const name of knownNames.slice(0, MAX_KNOWN_NAMES)) {
    if (!/\p{Lu}/u.test(name)) continue
    const words = name.split(/\s+/).filter((w) => w.length > 0)
    if (words.length === 0 || words.length > 6) continue
    const first = words[0]?.toLowerCase() as string
    const list = byFirstWord.get(first) ?? []
    list.push(words)
    byFirstWord.set(first, list)
  }
  if (byFirstWord.size === 0) return text
  const words = [...text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}.&-]*/gu)].map((m) => ({
    start: m.index as number,
    word: m[0].replace(/[.-]+$/, ''),
  }))
  const edits: { start: number; end: number; name: string }[] = []
  for (let i = 0; i < words.length; i++) {
    const candidates = byFirstWord.get((words[i] as { word: string }).word.toLowerCase())
    if (!candidates) continue
    // The longest known name wins ("dana kim" over "dana").
    let best: string[] | null = null
    for (const name of candidates) {
      if (best && name.length <= best.length) continue
      const fits = name.every((w, k) => words[i + k]?.word.toLowerCase() === w.toLowerCase())
      if (fits) best = name
    }
    if (!best) continue
    const last = words[i + best.length - 1] as { start: number; word: string }
    edits.push({
      start: (words[i] as { start: number }).start,
      end: last.start + last.word.length,
      name: best.join(' '),
    })
    i += best.length - 1
  }
  let out = ''
  let at = 0
  for (const edit of edits) {
    const original = text.slice(edit.start, edit.end)
    // Keep what the writer capitalised on purpose; restore only words written all in lower case.
    out += text.slice(at, edit.start) + (original === original.toLowerCase() ? edit.name : original)
    at = edit.end
  }
  return out + text.slice(at)
}

/** The words of a text worth looking names up by (the lookup the engine makes before extraction). */
export function lookupWords(text: string, max = 64): string[] {
  return [...new Set(nameTokens(text.slice(0, 8_000)))].filter((t) => t.length >= 2).slice(0, max)
}
