import type { MemoryCategory } from './memory-item.ts'

/**
 * The explicit path (spec 001 "Explicit Extraction": the user says "remember this"). The request
 * words are not part of what is remembered, and an explicit request marks the memory important
 * (spec 002's importance scorer adds 0.3 to the 0.5 base for "remember that").
 */
export const REMEMBER_THIS_IMPORTANCE = 0.8

const REQUEST =
  /^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:remember|note|keep in mind|don't forget|do not forget)\s*(?:for (?:next time|later|the future|future reference)\s*)?(?:that|this)?\s*[:,-]?\s*/i

/**
 * Words that say when the memory is for, not what it is: "… 10.20.14.0/24 for next time" would
 * otherwise be stored, embedded and injected with "for next time" on every use. Only phrases that
 * add nothing to the statement are stripped: a bare "next time" ("call me next time") or "in the
 * future" ("we move to Kubernetes in the future") is content, and "thanks" only after a comma
 * ("Dana says thanks" keeps it).
 */
const TRAILING_FILLER =
  /(?:[\s,;-]+(?:(?:just\s+)?for (?:next time|later|the future|future reference|the record)|going forward|from now on|please)|\s*[,;-]\s*(?:thanks|thank you))\s*$/i
const TERMINAL_PUNCTUATION = /[.!]+$/

function stripTrailingFiller(text: string): string {
  const punctuation = TERMINAL_PUNCTUATION.exec(text)?.[0] ?? ''
  let body = text.replace(TERMINAL_PUNCTUATION, '')
  // "for later, thanks": each pass removes one phrase from the end.
  for (let next = body.replace(TRAILING_FILLER, ''); next !== body; next = body.replace(TRAILING_FILLER, ''))
    body = next
  return body.length > 0 ? `${body}${punctuation.slice(0, 1)}` : text
}

// Ordered: the first rule whose words appear decides (a correction that states a preference is a correction).
const CATEGORY_RULES: [RegExp, MemoryCategory][] = [
  [/\b(actually|not anymore|no longer|correction|i was wrong|instead of)\b/i, 'correction'],
  [/\b(decided|we chose|i chose|going with|settled on|let's use|we will use)\b/i, 'decision'],
  [
    /\b(i will|i'll|i plan|i'm going to|i am going to|promise|by (?:monday|tuesday|wednesday|thursday|friday|next|tomorrow|the end))\b/i,
    'commitment',
  ],
  [/\b(prefer|like|love|hate|dislike|favou?rite|rather|always use|never use)\b/i, 'preference'],
  [
    /\b(my (?:wife|husband|partner|son|daughter|mother|father|mom|dad|brother|sister|friend|boss|manager|colleague|team)|works with|reports to|is the (?:lead|manager|owner))\b/i,
    'relationship',
  ],
  [/\b(i know how|i'm good at|i am good at|experienced with|expert in|i can)\b/i, 'skill'],
  [/\b(working on|currently|this week|right now|at the moment)\b/i, 'context'],
]

/**
 * An explicit request at the start of a sentence ("remember that…", "don't forget: …", "note that
 * …"), found inside a message by the extractors (issue 13). Narrower than REQUEST, which strips the
 * words of a request already known to be one: a sentence that merely starts with "remember" ("Remember
 * the concert?", "Note the time") is not a request to store anything.
 */
const EXPLICIT_REQUEST =
  /^\s*(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?(?:remember|note|keep in mind|don't forget|do not forget)\s*(?:for (?:next time|later|the future|future reference)\s*)?(?:that\b|this\s*:|:)/i

export function isExplicitRememberRequest(sentence: string): boolean {
  return EXPLICIT_REQUEST.test(sentence) && sentence.replace(REQUEST, '').trim().length > 0
}

export interface RememberedStatement {
  content: string
  category: MemoryCategory
  importance: number
}

export function interpretRememberThis(text: string): RememberedStatement {
  const stripped = stripTrailingFiller(text.replace(REQUEST, '').trim())
  const content = stripped.length > 0 ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : text.trim()
  const category = CATEGORY_RULES.find(([pattern]) => pattern.test(content))?.[1] ?? 'fact'
  return { content, category, importance: REMEMBER_THIS_IMPORTANCE }
}
