/**
 * First-person statements restated about their speaker ("I work at Acme" said by dana → "Dana works
 * at Acme"): a memory is read later, out of its conversation, where "I" would mean whoever reads it.
 * Rules, not a parser: the subject pronoun, the verb right after it (past forms and modals stay as
 * they are), possessives and objects. Second person is left alone: "you" is the listener, and
 * which participant that is belongs to the caller.
 */

/** Words between "I" and its verb that do not change the verb's form ("I really love…"). */
const ADVERBS = new Set([
  'also',
  'always',
  'never',
  'often',
  'sometimes',
  'still',
  'just',
  'only',
  'even',
  'usually',
  'actually',
  'really',
  'totally',
  'definitely',
  'finally',
  'recently',
  'now',
  'mostly',
  'kinda',
  'sort',
  'kind',
  'of',
  'too',
  'all',
  'both',
])
/** Forms that are the same for every person: modals and past forms that do not end in -ed. */
const INVARIANT = new Set([
  'will',
  'would',
  'can',
  'could',
  'should',
  'shall',
  'might',
  'must',
  'may',
  'was',
  'had',
  'did',
  'went',
  'got',
  'made',
  'took',
  'saw',
  'felt',
  'thought',
  'found',
  'knew',
  'left',
  'met',
  'ran',
  'began',
  'bought',
  'brought',
  'came',
  'gave',
  'heard',
  'kept',
  'lost',
  'paid',
  'said',
  'sent',
  'sat',
  'told',
  'won',
  'wrote',
  'spent',
  'taught',
  'caught',
  'built',
  'drew',
  'grew',
  'held',
  'led',
  'meant',
  'slept',
  'sold',
  'stood',
  'swam',
  'sang',
  'became',
  'chose',
  'broke',
  'drove',
  'ate',
  'fell',
  'flew',
  'forgot',
  'hid',
  'rode',
  'rose',
  'shook',
  'spoke',
  'stole',
  'threw',
  'woke',
  'used',
  // Informal contractions of a modal or a participle: "I gonna" never becomes "gonnas".
  'gonna',
  'wanna',
  'gotta',
  'been',
  'am', // handled before: never reached
  "can't",
  "couldn't",
  "won't",
  "wouldn't",
  "shouldn't",
  "didn't",
  "wasn't",
  'cannot',
])
const IRREGULAR: Record<string, string> = {
  am: 'is',
  have: 'has',
  "haven't": "hasn't",
  do: 'does',
  "don't": "doesn't",
  be: 'is',
  go: 'goes',
}

// "I" then any adverbs (greedy, from the list or ending in -ly), then the verb.
const SUBJECT_AND_VERB = new RegExp(
  `\\bI((?:\\s+(?:${[...ADVERBS].join('|')}|[A-Za-z]+ly)\\b)*)\\s+([A-Za-z']+)`,
  'g',
)

export function thirdPersonVerb(verb: string): string {
  const lower = verb.toLowerCase()
  if (IRREGULAR[lower]) return IRREGULAR[lower]
  if (INVARIANT.has(lower) || lower.endsWith('ed') || !/^[a-z]+$/.test(lower)) return verb
  if (/(?:s|sh|ch|x|z|o)$/.test(lower)) return `${verb}es`
  if (/[^aeiou]y$/.test(lower)) return `${verb.slice(0, -1)}ies`
  return `${verb}s`
}

const APOSTROPHES = /[\u2018\u2019\u02bc]/g

/** Restates a first-person sentence about `speaker`. Text without a first person comes back unchanged. */
export function toThirdPerson(sentence: string, speaker: string): string {
  const name = displayName(speaker)
  const text = sentence.replace(APOSTROPHES, "'")
  // Contractions first, so the verb rule below sees the full form.
  let out = text
    .replace(/\bI'm\b/g, `${name} is`)
    .replace(/\bI've\b/g, `${name} has`)
    .replace(/\bI'll\b/g, `${name} will`)
    .replace(/\bI'd\b/g, `${name} would`)
    .replace(/\bI am\b/g, `${name} is`)
  out = out.replace(SUBJECT_AND_VERB, (_match, between: string, verb: string) => {
    return `${name}${between} ${thirdPersonVerb(verb)}`
  })
  out = out
    .replace(/\bI\b/g, name)
    .replace(/\b[Mm]y\b/g, `${name}'s`)
    .replace(/\b[Mm]ine\b/g, `${name}'s`)
    .replace(/\b[Mm]yself\b/g, 'themselves')
    .replace(/\b[Mm]e\b/g, name)
    // "we" keeps its plural verb: "Dana and others decided…".
    .replace(/\b[Ww]e're\b/g, `${name} and others are`)
    .replace(/\b[Ww]e've\b/g, `${name} and others have`)
    .replace(/\b[Ww]e'll\b/g, `${name} and others will`)
    .replace(/\b[Ww]e\b/g, `${name} and others`)
    .replace(/\b[Oo]ur\b/g, `${name}'s`)
    .replace(/\b[Uu]s\b/g, `${name} and others`)
    .replace(/\b[Ll]et's\b/g, `${name} and others will`)
  return out.charAt(0).toUpperCase() + out.slice(1)
}

/** "dana" → "Dana", "jon_smith" → "Jon Smith": user ids are often lower-case handles. */
export function displayName(speaker: string): string {
  return speaker
    .trim()
    .split(/[\s_.-]+/)
    .filter(Boolean)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join(' ')
}
