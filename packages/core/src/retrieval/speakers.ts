/**
 * Participants a query names. A question about "Caroline" is most likely answered by what Caroline
 * said, so her turns get a boost; and her name, which every one of her stored turns holds
 * ('Caroline said, "…"'), says nothing lexically about which of them answers, so it is taken out
 * of the words matched. Names are data: every pattern built from one is escaped.
 */

/** ×(1 + 0.2) for turns of a named participant: a boost, never a filter (others' turns can answer too). */
export const DEFAULT_SPEAKER_BOOST = 0.2
/** Participants considered per query: an agent's conversations rarely have more than a handful. */
export const MAX_PARTICIPANTS = 1_000
/** Longer names are skipped: no person is named so, and they would only cost matching time. */
export const MAX_PARTICIPANT_NAME_CHARS = 128
/** Queries are read this far for names. */
export const MAX_SPEAKER_QUERY_CHARS = 2_000

// Whole words in any script: \b only knows ASCII letters, so "José" would end at "Jos".
const WORD_START = '(?<![\\p{L}\\p{N}_])'
const WORD_END = '(?![\\p{L}\\p{N}_])'
const POSSESSIVE = "(?:['’]s?)?"
// First names shorter than this ("J Smith") are initials: they would match stray letters.
const MIN_FIRST_NAME_CHARS = 2

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
/** A name as a pattern: its words escaped, any run of spaces between them. */
const namePattern = (name: string) => name.split(/\s+/).map(escapeRegExp).join('\\s+')

interface NameForms {
  given: string
  full: string
  /** The first word of a name of several words, or null. */
  first: string | null
}

function nameForms(participants: readonly string[]): NameForms[] {
  const forms: NameForms[] = []
  const seen = new Set<string>()
  for (const given of participants.slice(0, MAX_PARTICIPANTS)) {
    if (typeof given !== 'string' || given.length > MAX_PARTICIPANT_NAME_CHARS || seen.has(given)) continue
    const full = given.trim()
    if (full.length === 0) continue
    seen.add(given)
    const words = full.split(/\s+/)
    const first =
      words.length > 1 && (words[0] as string).length >= MIN_FIRST_NAME_CHARS ? (words[0] as string) : null
    forms.push({ given, full, first })
  }
  return forms
}

/** A spelling as a lookup key: case and spacing do not tell names apart. */
const keyOf = (spelling: string) => spelling.toLowerCase().replace(/\s+/g, ' ')

/** One pattern for all spellings, longest first, so "Dana Kim" is taken whole before "Dana". */
function spellingsPattern(forms: readonly NameForms[]): string {
  const spellings = [...new Set(forms.flatMap((f) => (f.first ? [f.full, f.first] : [f.full])))].sort(
    (a, b) => b.length - a.length,
  )
  return `${WORD_START}(?:${spellings.map(namePattern).join('|')})`
}

/**
 * Participants (from the agent's own messages) the query names: whole-word, case-insensitive, a
 * first name matches "Dana Kim", possessive "Dana's" counts. Returns the participants as given, in
 * the order the query first names them (ties in the order given). A name spelled out belongs to
 * its own participant: "Dana Kim" does not name "Dana Lee", and "Dana" names participant "Dana",
 * not "Dana Kim", when both take part.
 */
export function namedParticipants(query: string, participants: readonly string[]): string[] {
  if (typeof query !== 'string' || query.length === 0 || !Array.isArray(participants)) return []
  const text = query.slice(0, MAX_SPEAKER_QUERY_CHARS)
  // Only names the query holds at all go into the pattern: most participants are not named.
  const haystack = keyOf(text)
  const forms = nameForms(participants).filter((f) => haystack.includes(keyOf(f.first ?? f.full)))
  if (forms.length === 0) return []
  const byFull = new Map<string, NameForms[]>()
  const byFirst = new Map<string, NameForms[]>()
  for (const form of forms) {
    const add = (map: Map<string, NameForms[]>, spelling: string) => {
      const key = keyOf(spelling)
      map.set(key, [...(map.get(key) ?? []), form])
    }
    add(byFull, form.full)
    if (form.first) add(byFirst, form.first)
  }
  // One pass for all candidates: a pattern per participant cost ~0.4 s for a thousand of them.
  const pattern = new RegExp(`${spellingsPattern(forms)}${WORD_END}`, 'giu')
  const named: string[] = []
  for (const match of text.matchAll(pattern)) {
    const key = keyOf(match[0])
    let found = byFull.get(key) ?? byFirst.get(key)
    // Case-insensitive matching folds a few letters that toLowerCase keeps apart (final sigma).
    found ??= forms.filter((f) =>
      [f.full, f.first].some((s) => s && new RegExp(`^${namePattern(s)}$`, 'iu').test(match[0])),
    )
    for (const form of found) if (!named.includes(form.given)) named.push(form.given)
  }
  return named
}

// Speech wording around a name ("did Caroline say", "Caroline said", "according to Caroline"): in
// a store of 'X said, "…"' turns these words are in every turn and select nothing.
const SPEECH_VERBS = 'say|says|said|tell|tells|told|mention|mentions|mentioned'
const AUXILIARIES = 'did|does|do|has|have|had|will|would|can|could'

/**
 * The query without those names, their possessive 's and the "X said" / "did X say" wording, for
 * lexical matching: "What did Caroline say about Melanie's painting?" with both names gives
 * "What about painting?". First names of the given names go too. Spaces are tidied.
 */
export function withoutParticipants(query: string, names: readonly string[]): string {
  if (typeof query !== 'string') return ''
  const forms = Array.isArray(names) ? nameForms(names) : []
  if (forms.length === 0 || query.length === 0) return query
  const name = `${spellingsPattern(forms)}${POSSESSIVE}${WORD_END}`
  const patterns = [
    new RegExp(`${WORD_START}(?:${AUXILIARIES})\\s+${name}\\s+(?:${SPEECH_VERBS})${WORD_END}`, 'giu'),
    new RegExp(`${WORD_START}according\\s+to\\s+${name}`, 'giu'),
    new RegExp(`${name}\\s+(?:${SPEECH_VERBS})${WORD_END}`, 'giu'),
    new RegExp(name, 'giu'),
  ]
  let text = query
  for (const pattern of patterns) text = text.replace(pattern, ' ')
  return text
    .replace(/\s+/g, ' ')
    .replace(/\s+([?!.,;:])/g, '$1')
    .trim()
}
