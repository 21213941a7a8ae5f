import { RE2JS } from 're2js'
import {
  CHILD_HEADS,
  CLASS_HEADS,
  COMPANIONS,
  EVENT_HEADS,
  HYPOTHETICAL,
  LEADING,
  NEGATIONS,
  OBJECT_STOPS,
  PET_HEADS,
  PLACE_HEADS,
  QUESTION_OPENERS,
  SUBORDINATE,
  TOOL_HEADS,
  VAGUE_HEADS,
} from './activity-words.ts'
import type { EntityType } from './graph.ts'

/**
 * Offline relations from a person to a common-noun object (issue 15, conversations): "Caroline
 * attended an LGBTQ support group", "Melanie signed up for a pottery class", "Melanie went camping".
 * Casual talk rarely joins two names, so the named patterns of extract.ts find almost nothing in it;
 * here the subject is a name (or "she"/"he" when the text names one person) and the object is the
 * noun phrase wink-nlp's tags give after the verb, determiners and possessives dropped and its head
 * noun lemmatised ("a pottery class" and "pottery classes" are one "pottery class"). The verbs map
 * onto a small vocabulary (ACTIVITY_RELATIONS). Precision first: a question, a negation or a
 * hypothetical gives nothing, and so does a noun phrase with no noun or a vague head ("time").
 */

/**
 * The relations this pass gives, normalised (docs/knowledge-graph.md lists their verbs). A named
 * pet ("has pet" with a name) is stored as the named pattern's "Luna pet of Melanie" (extract.ts).
 */
export const ACTIVITY_RELATIONS = [
  'attended',
  'joined',
  'signed up for',
  'likes',
  'plays',
  'has pet',
  'has child',
  'visited',
  'bought',
  'reads',
  'is learning',
  'works as',
  'volunteers at',
  'plans',
  'does',
  'made',
] as const
export type ActivityRelation = (typeof ACTIVITY_RELATIONS)[number]

/** One word of a masked sentence: what it was and its tags; a name's slot is one token. */
export interface MaskedToken {
  word: string
  tag: string
  lemma: string
  /** The entity slot this token stands for, or null for an ordinary word. */
  slot: number | null
}

export interface ActivityCandidate {
  /** The subject: an entity slot, or a pronoun for the caller to resolve (or drop). */
  subject: { slot: number } | { pronoun: string }
  relation: ActivityRelation
  /** A common-noun phrase ("pottery class"), or an entity slot when the object is a name. */
  object: { name: string; type: EntityType } | { slot: number; type: EntityType | null }
  /** The relation starts when the sentence says (an event, a purchase), not when the memory was made. */
  dated: boolean
}

interface Verb {
  /** RE2 alternation of the verb's forms as they stand in the masked (lower-case) sentence. */
  forms: string
  relation: ActivityRelation
  dated: boolean
  /** Only objects whose head noun is one of these (e.g. "has" → pets for "has pet"). */
  heads?: ReadonlySet<string>
  /** The object is a gerund ("went camping") rather than a noun phrase. */
  gerund?: boolean
}

const VERBS: readonly Verb[] = [
  {
    forms:
      'attended|attends|attend|attending|participated in|participates in|participate in|took part in|takes part in|competed in|competes in|performed at|performed in|ran',
    relation: 'attended',
    dated: true,
  },
  {
    forms: 'joined|joins|join|has joined|have joined|became a member of|is a member of|is part of',
    relation: 'joined',
    dated: true,
  },
  {
    forms:
      'signed up for|signs up for|sign up for|enrolled in|enrolls in|enrolled for|registered for|registers for|taking|started taking|takes|took',
    relation: 'signed up for',
    dated: true,
    heads: CLASS_HEADS,
  },
  {
    forms:
      'loves|love|loved|likes|like|liked|enjoys|enjoy|enjoyed|adores|adore|a fan of|a big fan of|a huge fan of|fans of|passionate about|into|has a passion for|has a love for|interested in',
    relation: 'likes',
    dated: false,
  },
  { forms: 'plays|play|played|playing|started playing', relation: 'plays', dated: false },
  {
    forms: 'has|have|had|adopted|adopts|got|gets',
    relation: 'has pet',
    dated: false,
    heads: PET_HEADS,
  },
  { forms: 'has|have|had', relation: 'has child', dated: false, heads: CHILD_HEADS },
  {
    forms:
      'visited|visits|visit|went to|goes to|go to|going to|traveled to|travelled to|travels to|took a trip to|flew to|went back to|returned to|explored|toured|went on',
    relation: 'visited',
    dated: true,
  },
  // "took her kids to the museum": the museum is the place visited.
  {
    forms: '(?:took|takes|brought|brings) (?:her|his|their) [^ ]+ to',
    relation: 'visited',
    dated: true,
  },
  {
    forms:
      'made|makes|created|creates|painted|paints|built|builds|wrote|writes|drew|draws|designed|designs|knitted|baked|crafted',
    relation: 'made',
    dated: true,
  },
  {
    forms: 'bought|buys|buy|purchased|purchases|got a new|got new|got some new|got herself a|got himself a',
    relation: 'bought',
    dated: true,
  },
  {
    forms: 'reads|read|reading|finished reading|started reading',
    relation: 'reads',
    dated: false,
  },
  {
    forms: 'learning|started learning|learns|taking lessons in|studying|started studying',
    relation: 'is learning',
    dated: true,
  },
  {
    forms: 'works as|worked as|working as|started working as|got a job as|has a job as|employed as',
    relation: 'works as',
    dated: true,
  },
  {
    forms:
      'volunteers at|volunteered at|volunteering at|volunteers with|volunteered with|volunteering with|volunteers for|volunteered for|volunteering for',
    relation: 'volunteers at',
    dated: true,
  },
  {
    forms:
      'planning|plans|planned|planning to [a-z]+|plans to [a-z]+|organizing|organising|looking forward to [a-z]+ing',
    relation: 'plans',
    dated: false,
  },
  {
    forms: 'went|goes|go|going',
    relation: 'does',
    dated: true,
    gerund: true,
  },
]

// Adverbs between a subject and its verb; negations are not among them (and are checked again).
const ADVERBS =
  '(?:(?:is|are|was|were|been|now|currently|still|also|recently|just|has|have|had|officially|finally|already|actually|then|later|eventually|really|truly|absolutely|often|usually|regularly|sometimes|always|even|especially|both|all) )*'
// "Melanie and her kids enjoy…": the name leads a subject shared with her family or group.
const WITH_OWN = '(?:and (?:her|his|their) (?:[^ ,.;:!?§]+ ){1,3})?'
const SUBJECT = '(?:^|[^a-z§\\d])(§\\d+|she|he) '

const COMPILED = VERBS.map((verb) => ({
  verb,
  regex: RE2JS.compile(`${SUBJECT}${WITH_OWN}${ADVERBS}(${verb.forms}) `),
}))

const MAX_OBJECT_WORDS = 4
const QUOTES = new Set(["'", '"', '“', '”', '‘', '’'])
const GOING_TO = /^(?:went|go|goes|going) to$/

/** Whether a sentence states something as fact: not a question, a wish nor a condition. */
function assertive(tokens: readonly MaskedToken[]): boolean {
  const last = [...tokens].reverse().find((t) => t.tag !== 'PUNCT' || t.word === '?' || t.word === '.')
  if (last?.word === '?') return false
  const first = tokens[0]?.word.toLowerCase()
  if (first && QUESTION_OPENERS.has(first) && tokens.at(-1)?.word !== '.') return false
  return !tokens.some((t) => HYPOTHETICAL.has(t.word.toLowerCase()))
}

function isNoun(t: MaskedToken | undefined): boolean {
  return !!t && (t.slot !== null || t.tag === 'NOUN' || t.tag === 'PROPN')
}

/** The noun phrase starting at `start`: its words and head, or null when there is none. */
export function objectAt(
  tokens: readonly MaskedToken[],
  start: number,
): { words: MaskedToken[]; end: number } | null {
  let i = start
  while (i < tokens.length && LEADING.has((tokens[i] as MaskedToken).word.toLowerCase())) i++
  const words: MaskedToken[] = []
  for (; i < tokens.length && words.length < MAX_OBJECT_WORDS + 1; i++) {
    const t = tokens[i] as MaskedToken
    if (t.slot === null && OBJECT_STOPS.has(t.word.toLowerCase())) break
    // "LGBTQ+ counseling": a symbol glued to a name belongs to it.
    if (t.word === '+' && words.length > 0) {
      const previous = words.pop() as MaskedToken
      words.push({ ...previous, word: `${previous.word}+`, lemma: `${previous.lemma}+` })
      continue
    }
    // "nature-inspired painting": wink splits the hyphen off; the compound is one modifier.
    const next = tokens[i + 1]
    if (
      t.word === '-' &&
      words.length > 0 &&
      next &&
      next.slot === null &&
      /^\p{L}/u.test(next.word) &&
      !LEADING.has(next.word.toLowerCase())
    ) {
      const previous = words.pop() as MaskedToken
      words.push({ ...next, word: `${previous.word}-${next.word}`, lemma: `${previous.word}-${next.lemma}` })
      i++
      continue
    }
    const modifier =
      t.tag === 'ADJ' ||
      t.tag === 'NUM' ||
      // "running shoes", "nature-inspired painting": a gerund or participle before a noun.
      (t.tag === 'VERB' && /(?:ing|ed)$/.test(t.word) && isNoun(tokens[i + 1]))
    if (isNoun(t) || modifier) words.push(t)
    else break
  }
  // The object owns something else ("her daughter's birthday"), or is cut by a slash ("advice/assistance
  // group"): the words read are not the object.
  if (tokens[i]?.word === "'s" || tokens[i]?.word === "'" || tokens[i]?.word === '/') return null
  while (words.length > 0 && !isNoun(words.at(-1))) words.pop()
  if (words.length === 0 || words.length > MAX_OBJECT_WORDS) return null
  return { words, end: i }
}

/** "pottery classes" → "pottery class": modifiers as written (lower case unless an acronym), the head's lemma. */
export function objectName(words: readonly MaskedToken[], spans: readonly string[]): string {
  return words
    .map((t, i) => {
      if (t.slot !== null) return `${spans[t.slot]}${t.word.endsWith('+') ? '+' : ''}`
      const word = i === words.length - 1 && t.tag === 'NOUN' ? t.lemma : t.word
      return /^[A-Z0-9+]{2,}$/.test(word) ? word : word.toLowerCase()
    })
    .join(' ')
}

/** The kind of thing a common noun names, from its head; null when the head says nothing. */
export function typeFromHead(head: string): EntityType | null {
  if (EVENT_HEADS.has(head)) return 'EVENT'
  if (PLACE_HEADS.has(head)) return 'PLACE'
  if (TOOL_HEADS.has(head)) return 'TOOL'
  return null
}

const DEFAULT_TYPE: Record<ActivityRelation, EntityType> = {
  attended: 'EVENT',
  joined: 'CONCEPT',
  'signed up for': 'EVENT',
  likes: 'CONCEPT',
  plays: 'CONCEPT',
  'has pet': 'CONCEPT',
  'has child': 'CONCEPT',
  visited: 'PLACE',
  bought: 'CONCEPT',
  reads: 'CONCEPT',
  'is learning': 'CONCEPT',
  'works as': 'CONCEPT',
  'volunteers at': 'CONCEPT',
  plans: 'CONCEPT',
  does: 'CONCEPT',
  made: 'CONCEPT',
}

/** The activity relations one masked sentence states (subjects left for the caller to resolve). */
export function activityCandidates(
  masked: string,
  tokens: readonly MaskedToken[],
  spans: readonly string[],
): ActivityCandidate[] {
  if (!assertive(tokens)) return []
  const found: ActivityCandidate[] = []
  for (const { verb, regex } of COMPILED) {
    const matcher = regex.matcher(masked)
    let from = 0
    while (from < masked.length && matcher.find(from)) {
      from = matcher.end()
      const subjectText = matcher.group(1) as string
      // Every masked token is one word joined by single spaces: the spaces before a point count the tokens.
      const subjectAt = masked.slice(0, matcher.start(1)).split(' ').length - 1
      const objectStart = masked.slice(0, matcher.end()).split(' ').length - 1
      // A negation anywhere from the subject to the object ("Melanie and her kids don't like…").
      if (tokens.slice(subjectAt, objectStart).some((t) => NEGATIONS.has(t.word.toLowerCase()))) continue
      const subject = subjectText.startsWith('§')
        ? { slot: Number(subjectText.slice(1)) }
        : { pronoun: subjectText }
      // "for when she has kids", "letting Melanie join": a time, condition or someone else's doing.
      if (SUBORDINATE.has(tokens[subjectAt - 1]?.word.toLowerCase() ?? '')) continue
      const verbText = (matcher.group(2) as string).trim()
      // "is going swimming", "I'm going to a conference this month": a plan, not a thing done.
      const future = /^going\b/.test(verbText)
      if (verb.gerund) {
        const candidate = gerundObject(tokens, objectStart, verb)
        if (candidate) found.push({ subject, ...asPlanned(candidate, future), dated: verb.dated && !future })
        continue
      }
      // "has a dog named Luna and a cat named Oliver": each object of a list, up to a few.
      let at = objectStart
      for (let n = 0; n < MAX_LISTED_OBJECTS; n++) {
        const object = nounObject(tokens, at, verb, verbText, spans)
        if (!object) break
        if (object.candidate)
          found.push({ subject, ...asPlanned(object.candidate, future), dated: verb.dated && !future })
        at = object.end
        if (tokens[at]?.word === ',') at++
        if (tokens[at]?.word === 'and' || tokens[at]?.word === 'or') at++
        else if (tokens[at - 1]?.word !== ',') break
      }
    }
  }
  return found
}

const MAX_LISTED_OBJECTS = 4

function asPlanned<C extends Pick<ActivityCandidate, 'relation'>>(candidate: C, future: boolean): C {
  return future ? { ...candidate, relation: 'plans' } : candidate
}

function gerundObject(
  tokens: readonly MaskedToken[],
  start: number,
  verb: Verb,
): Pick<ActivityCandidate, 'relation' | 'object'> | null {
  const t = tokens[start]
  if (!t || t.slot !== null || !/^[a-z]+ing$/.test(t.word) || (t.tag !== 'NOUN' && t.tag !== 'VERB'))
    return null
  // "went shopping for shoes" is still shopping; "is going to…" never reaches here (no -ing).
  if (VAGUE_HEADS.has(t.word)) return null
  return { relation: verb.relation, object: { name: t.word, type: 'CONCEPT' } }
}

/**
 * The object at `start` and where it ends (past a "named Luna"); `candidate` is null when the
 * object is there but says nothing the graph keeps (a vague head, a head the verb does not take).
 */
function nounObject(
  tokens: readonly MaskedToken[],
  start: number,
  verb: Verb,
  verbText: string,
  spans: readonly string[],
): { candidate: Pick<ActivityCandidate, 'relation' | 'object'> | null; end: number } | null {
  let phrase = objectAt(tokens, start)
  if (!phrase) return null
  // "volunteered with her family at a shelter": the family is company; the shelter is the object.
  const company = phrase.words.at(-1) as MaskedToken
  if (
    verb.relation === 'volunteers at' &&
    company.slot === null &&
    COMPANIONS.has(company.lemma.toLowerCase()) &&
    /^(?:at|in|for)$/.test(tokens[phrase.end]?.word ?? '')
  )
    phrase = objectAt(tokens, phrase.end + 1)
  if (!phrase) return null
  // "named Luna", "called 'Connected LGBTQ Activists'": the name is the object.
  let end = phrase.end
  let named: MaskedToken | undefined
  if (/^(?:named|called)$/.test(tokens[end]?.word ?? '')) {
    // "called 'Connected LGBTQ Activists'": quotes around the name are skipped.
    const quoted = QUOTES.has(tokens[end + 1]?.word ?? '') ? 1 : 0
    named = tokens[end + 1 + quoted]
    if (named?.slot != null)
      end += 2 + quoted + (quoted && QUOTES.has(tokens[end + 2 + quoted]?.word ?? '') ? 1 : 0)
  }
  const candidate = objectCandidate(phrase.words, named?.slot ?? null, verb, verbText, spans)
  return { candidate, end }
}

function objectCandidate(
  words: readonly MaskedToken[],
  named: number | null,
  verb: Verb,
  verbText: string,
  spans: readonly string[],
): Pick<ActivityCandidate, 'relation' | 'object'> | null {
  const head = words.at(-1) as MaskedToken
  const headLemma = head.slot === null ? head.lemma.toLowerCase() : ''
  if (head.slot === null && (VAGUE_HEADS.has(headLemma) || headLemma.length < 2)) return null
  const compound = words.length >= 2 ? objectName(words.slice(-2), spans).toLowerCase() : ''
  const petHead = PET_HEADS.has(compound) ? compound : headLemma
  if (verb.heads && !verb.heads.has(verb.heads === PET_HEADS ? petHead : headLemma)) return null
  let relation = verb.relation
  const headType = head.slot === null ? typeFromHead(headLemma) : null
  // "went to a pride parade / a support group" is attending it; "went to the beach" is a visit.
  if (
    relation === 'visited' &&
    (headType === 'EVENT' || (head.slot === null && headType !== 'PLACE' && GOING_TO.test(verbText)))
  )
    relation = 'attended'
  const type = headType ?? DEFAULT_TYPE[relation]
  if (named !== null) return { relation, object: { slot: named, type } }
  if (words.length === 1 && head.slot !== null) return { relation, object: { slot: head.slot, type: null } }
  return { relation, object: { name: objectName(words, spans), type } }
}
