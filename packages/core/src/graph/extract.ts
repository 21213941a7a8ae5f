import * as chrono from 'chrono-node'
import { RE2JS } from 're2js'
import type { ItemSentence } from 'wink-nlp'
import { englishNlp } from '../formation/language.ts'
import { displayName, toThirdPerson } from '../formation/perspective.ts'
import { extractValidity } from '../formation/temporal.ts'
import { type ActivityCandidate, activityCandidates, type MaskedToken } from './activities.ts'
import { CALENDAR_WORDS } from './calendar-words.ts'
import { type EntityType, normalizeEntityName, normalizeRelation } from './graph.ts'

/**
 * The offline graph extractor (issue 15): entities and relations from one memory's text, with no
 * model. Entities are wink-nlp's proper-noun runs; relations come from a fixed set of patterns
 * ("X works at Y", "X moved to Y", "X's sister Y", ...) matched on the sentence with every entity
 * replaced by a slot, so a pattern only ever joins two whole names. A second pass (activities.ts)
 * links a person to the common-noun things conversation is about ("attended an LGBTQ support
 * group", "signed up for a pottery class"). Every pattern runs on RE2 (linear time whatever the
 * text). Pure: the same text, speaker and reference give the same answer.
 */
export interface ExtractedEntity {
  /** As written (the longest spelling met in the text). */
  name: string
  type: EntityType
}

export interface ExtractedRelation {
  /** Entity names as in `entities`. */
  source: string
  /** core's normalizeRelation form: "works at", "sister of". */
  relation: string
  target: string
  confidence: number
  validFrom: Date | null
  validUntil: Date | null
}

export interface GraphExtraction {
  entities: ExtractedEntity[]
  relations: ExtractedRelation[]
}

export interface GraphExtractionOptions {
  /**
   * Who "I" is in the text (a memory's speaker, or its user's id): first person is restated about
   * them ("I work at Acme" → "Dana works at Acme"). Unknown: first-person statements give nothing,
   * since the graph must not invent who "I" was.
   */
  speaker?: string | null
  /** When the text was true from, read against its relative dates ("last year"): the memory's validFrom. */
  reference: Date
  /** The memory's own validity end, for relations whose sentence names none. */
  validUntil?: Date | null
  /** The memory's confidence: a relation is no surer than the memory it comes from. */
  confidence?: number
}

/** Texts longer than this are read up to it: a memory is at most a few thousand characters. */
const MAX_TEXT_CHARS = 8_000
const MAX_NAME_WORDS = 6
/** A person's activity read from a common noun is less sure than a pattern joining two names. */
const ACTIVITY_CONFIDENCE = 0.7

/** Capitalised words that are not names when they stand alone in a run (dates, greetings, pronouns). */
const NOT_NAMES = new Set([
  'i',
  'yesterday',
  'today',
  'tomorrow',
  'tonight',
  ...CALENDAR_WORDS,
  'last',
  'next',
  'hey',
  'hi',
  'hello',
  'thanks',
  'wow',
  'oh',
  'yes',
  'no',
  'ok',
  'okay',
  'god',
  'mom',
  'dad',
])

/** Parts of speech a word of a name may carry ("Door Dash": Door is tagged a noun). */
const NAME_POS = new Set(['PROPN', 'NOUN', 'ADJ', 'NUM', 'X'])
const CAPITALISED = /^(?:[A-Z][\p{L}\p{N}&'.-]*|[A-Z]{2,}[\p{N}]*)$/u

const COMPANY_WORDS = new Set([
  'inc',
  'corp',
  'corporation',
  'ltd',
  'llc',
  'gmbh',
  'plc',
  'labs',
  'company',
  'co',
  'group',
  'bank',
  'university',
  'college',
  'agency',
  'studio',
  'studios',
  'technologies',
  'systems',
])
const PLACE_WORDS = new Set([
  'city',
  'street',
  'st',
  'avenue',
  'park',
  'lake',
  'river',
  'mountain',
  'mountains',
  'island',
  'beach',
  'county',
  'state',
  'valley',
])
const EVENT_WORDS = new Set([
  'conference',
  'festival',
  'summit',
  'wedding',
  'party',
  'meetup',
  'hackathon',
  'concert',
  'parade',
  'marathon',
  'race',
  'olympics',
  'cup',
  'fair',
])
const PROJECT_WORDS = new Set(['project', 'initiative', 'program', 'programme'])

/** Family and social roles of "X's sister Y" / "Y is X's sister": Y is <role> of X. */
export const KINSHIP_ROLES = [
  'sister',
  'brother',
  'mother',
  'father',
  'mom',
  'dad',
  'son',
  'daughter',
  'wife',
  'husband',
  'partner',
  'girlfriend',
  'boyfriend',
  'fiance',
  'fiancee',
  'cousin',
  'aunt',
  'uncle',
  'niece',
  'nephew',
  'grandmother',
  'grandfather',
  'grandma',
  'grandpa',
  'friend',
  'colleague',
  'boss',
  'manager',
  'mentor',
  'roommate',
  'neighbor',
  'neighbour',
] as const

const ROLE_ALIASES: Record<string, string> = {
  mom: 'mother',
  dad: 'father',
  grandma: 'grandmother',
  grandpa: 'grandfather',
  neighbour: 'neighbor',
  fiancee: 'fiance',
}

interface Pattern {
  regex: RE2JS
  relation: string | ((match: string[]) => string)
  /** Which captured slot is the source and which the target (capture group numbers). */
  source: number
  target: number
  confidence: number
  /** The relation starts at the date the sentence gives ("moved to Berlin in 2023"). */
  dated: boolean
  /** Types the relation implies for its ends. */
  sourceType: EntityType | null
  targetType: EntityType | null
}

// A slot: an entity replaced by "§<index>" in the masked sentence (lower case, single spaces).
const X = '§(\\d+)'
// Adverbs and auxiliaries between a subject and its verb ("Dana now works", "Dana has just moved").
const ADV =
  '(?:(?:now|currently|still|also|recently|just|has|have|had|officially|finally|already|actually|since|then|later|eventually) )*'
const THE = '(?:the |a |an |our |their |his |her )?'
// The end of a name's phrase: punctuation, the end, or a word that cannot continue a name.
const END =
  '(?: ?[.,;:!?)]| (?:in|on|at|last|this|next|with|for|and|to|during|over|recently|yesterday|today|earlier|ago|where|when|because|since|after|before)\\b|$)'

function pattern(
  source: string,
  relation: Pattern['relation'],
  types: [EntityType | null, EntityType | null],
  options: { confidence?: number; dated?: boolean; groups?: [number, number] } = {},
): Pattern {
  return {
    regex: RE2JS.compile(source),
    relation,
    source: options.groups?.[0] ?? 1,
    target: options.groups?.[1] ?? 2,
    confidence: options.confidence ?? 0.8,
    dated: options.dated ?? false,
    sourceType: types[0],
    targetType: types[1],
  }
}

const ROLES = `(${KINSHIP_ROLES.join('|')})`
const roleIn = (group: number) => (match: string[]) => {
  const role = match[group] as string
  return `${ROLE_ALIASES[role] ?? role} of`
}

/** The relation patterns, tried in order on each sentence; a pair of entities keeps its first relation. */
const PATTERNS: readonly Pattern[] = [
  pattern(
    `${X} ${ADV}(?:works|worked|is working|was working|has been working|started working) (?:at|for) ${THE}${X}`,
    'works at',
    ['PERSON', 'COMPANY'],
  ),
  pattern(`${X} ${ADV}(?:joined|joins|will join|is joining) ${THE}${X}`, 'works at', ['PERSON', 'COMPANY'], {
    confidence: 0.7,
    dated: true,
  }),
  pattern(
    `${X} (?:is|was|became|has become|will be) ${THE}(?:new )?(?:tech|technical) lead (?:on|of|for) ${THE}${X}`,
    'tech lead on',
    ['PERSON', 'PROJECT'],
    { dated: true },
  ),
  pattern(
    `${X} (?:is|was|became|has become) ${THE}(?:new )?(?:ceo|chief executive) (?:of|at) ${THE}${X}`,
    'ceo of',
    ['PERSON', 'COMPANY'],
    { dated: true },
  ),
  pattern(`${X} ${ADV}(?:manages|managed|is managing|leads|is leading) ${THE}${X}`, 'manages', [
    'PERSON',
    null,
  ]),
  pattern(`${X} ${ADV}(?:reports|reported|is reporting) to ${X}`, 'reports to', ['PERSON', 'PERSON']),
  pattern(
    `${X} ${ADV}(?:moved|moves|relocated|relocates|is moving|will move|is relocating) (?:back |over |away )?to ${THE}${X}`,
    'lives in',
    ['PERSON', 'PLACE'],
    { dated: true },
  ),
  pattern(
    `${X} ${ADV}(?:lives|lived|is living|has lived|has been living|is based|was based|resides|settled) in ${X}`,
    'lives in',
    ['PERSON', 'PLACE'],
  ),
  // "Dana's sister Lena": Lena is the sister of Dana (groups: owner, role, person).
  pattern(`${X} 's ${ROLES} (?:, )?(?:is |was |named |called )?${X}`, roleIn(2), ['PERSON', 'PERSON'], {
    groups: [3, 1],
  }),
  // "Lena is Dana's sister" (groups: person, owner, role).
  pattern(`${X} (?:is|was) ${X} 's ${ROLES}`, roleIn(3), ['PERSON', 'PERSON']),
  pattern(
    `${X} (?:is|was|got|has been|has gotten|will be|will get) ${ADV}married to ${X}`,
    'married to',
    ['PERSON', 'PERSON'],
    { dated: true },
  ),
  pattern(`${X} (?:and|&) ${X} (?:got|are|were|have been) married`, 'married to', ['PERSON', 'PERSON'], {
    dated: true,
  }),
  pattern(
    `${X} ${ADV}(?:uses|used|is using|has been using|relies on|relied on|switched to|runs on) ${X}`,
    'uses',
    [null, 'TOOL'],
  ),
  pattern(`${X} ${ADV}(?:depends|depended|is depending|will depend) on ${X}`, 'depends on', [null, 'TOOL']),
  pattern(`${X} ${ADV}(?:works|worked|is working|was working|has been working) on ${THE}${X}`, 'works on', [
    'PERSON',
    'PROJECT',
  ]),
  pattern(
    `${X} ${ADV}(?:studies|studied|is studying|was studying|graduated from|went to school at) (?:at )?${THE}${X}`,
    'studies at',
    ['PERSON', 'COMPANY'],
  ),
  pattern(`${X} (?:is|was|comes|came|originally came) (?:originally )?from ${X}`, 'from', [
    'PERSON',
    'PLACE',
  ]),
  pattern(`${X} ${ADV}(?:moved|relocated|emigrated|came) (?:here |over )?from ${X}`, 'from', [
    'PERSON',
    'PLACE',
  ]),
  pattern(`${X} (?:was born|grew up|was raised) in ${X}`, 'from', ['PERSON', 'PLACE']),
  pattern(
    `${X} (?:is|are|became|has been|have been) (?:best |good |close |old )?friends with ${X}`,
    'friend of',
    ['PERSON', 'PERSON'],
  ),
  // "Melanie has a dog named Luna": Luna is Melanie's pet (groups: owner, pet).
  pattern(
    `${X} ${ADV}(?:has|had|adopted|got) (?:a |an |two |her |his |their )?(?:new )?(?:dog|puppy|cat|kitten|pet|horse|parrot|rabbit|bunny|hamster|turtle|snake)s? (?:named|called) ${X}`,
    'pet of',
    ['PERSON', 'CONCEPT'],
    { groups: [2, 1] },
  ),
  // A place or an event only when the name ends the phrase ("went to Paris last week", not "went
  // to the LGBTQ support group": that name is only the group's first word).
  pattern(
    `${X} ${ADV}(?:visited|traveled to|travelled to|went to|flew to|took a trip to|is traveling to|is travelling to|went back to) ${THE}${X}${END}`,
    'visited',
    ['PERSON', 'PLACE'],
    { dated: true },
  ),
  pattern(
    `${X} ${ADV}(?:attended|is attending|will attend|spoke at|performed at) ${THE}${X}${END}`,
    'attended',
    ['PERSON', 'EVENT'],
    {
      dated: true,
    },
  ),
]

/**
 * Weaker cues to an entity's type from the words around it, used only when neither its name nor
 * a relation typed it: "with Caroline", "Caroline said", "the Atlas project", "a trip to Rome".
 */
const CONTEXT_CUES: readonly { regex: RE2JS; type: EntityType }[] = [
  {
    regex: RE2JS.compile(`${X} (?:project|initiative|program|codebase|repo|repository)\\b`),
    type: 'PROJECT',
  },
  {
    regex: RE2JS.compile(`${X} (?:app|library|framework|database|tool|platform|api|sdk|cli)\\b`),
    type: 'TOOL',
  },
  {
    regex: RE2JS.compile(`${X} (?:conference|festival|wedding|party|meetup|concert|parade|summit)\\b`),
    type: 'EVENT',
  },
  {
    regex: RE2JS.compile(
      `${X} ${ADV}(?:said|says|told|thinks|thought|feels|felt|loves|loved|went|wants|wanted|met|visited|adopted|painted|married|graduated|is feeling|is excited|was excited|is happy|was happy|is proud|mentioned)\\b`,
    ),
    type: 'PERSON',
  },
  {
    regex: RE2JS.compile(`\\b(?:with|met|told|thanked|asked|called|texted|hugged|married|mr|mrs|ms|dr) ${X}`),
    type: 'PERSON',
  },
  {
    regex: RE2JS.compile(
      `\\b(?:trip|travel|travelled|traveled|flew|flight|vacation|holiday|visit|visited|lives|lived|living|moved|born) (?:to |in |from )?${X}`,
    ),
    type: 'PLACE',
  },
]

/** "in 2023", "since 2019": a year chrono does not read alone. */
const BARE_YEAR = RE2JS.compile('\\b(?:in|since|during|from) ((?:19|20)\\d\\d)\\b', RE2JS.CASE_INSENSITIVE)

/** One sentence as words with their tags, and its entity runs. */
function sentenceSpans(
  sentence: ItemSentence,
  its: ReturnType<typeof englishNlp>['its'],
): { masked: string; spans: string[]; tokens: MaskedToken[] } {
  const words = sentence.tokens().out() as string[]
  const tags = sentence.tokens().out(its.pos) as string[]
  // wink-nlp's typings give its.lemma the model add-on's own signature; at run time it is an `its` like pos.
  const lemmas = sentence.tokens().out(its.lemma as unknown as typeof its.pos) as string[]
  const spans: string[] = []
  const masked: string[] = []
  // Parallel to `masked`: what each masked word was, for the noun phrases read after a verb.
  const tokens: MaskedToken[] = []
  let run: { words: string[]; proper: boolean; at: number } = { words: [], proper: false, at: 0 }
  const flush = () => {
    const kept = trimRun(run.words)
    // "Painting is fun": a capitalised gerund opening the sentence is tagged a proper noun.
    const gerund = kept.length === 1 && masked.length === 0 && /ing$/.test(kept[0] as string)
    if (kept.length > 0 && run.proper && !gerund) {
      const name = kept.join(' ').replace(/\.$/, '')
      let index = spans.indexOf(name)
      if (index < 0) index = spans.push(name) - 1
      masked.push(`§${index}`)
      tokens.push({ word: name, tag: 'PROPN', lemma: name, slot: index })
    } else
      for (const [offset, word] of run.words.entries()) {
        masked.push(word.toLowerCase())
        const at = run.at + offset
        tokens.push({ word, tag: tags[at] as string, lemma: lemmas[at] as string, slot: null })
      }
    run = { words: [], proper: false, at: 0 }
  }
  for (const [index, word] of words.entries()) {
    const tag = tags[index] as string
    // A sentence's first word is capitalised anyway: it starts a name only when wink calls it one.
    const nameWord =
      CAPITALISED.test(word) &&
      NAME_POS.has(tag) &&
      (index > 0 || tag === 'PROPN') &&
      !(run.words.length === 0 && NOT_NAMES.has(word.toLowerCase()))
    if (nameWord && run.words.length < MAX_NAME_WORDS) {
      if (run.words.length === 0) run.at = index
      run.words.push(word)
      if (tag === 'PROPN') run.proper = true
      continue
    }
    flush()
    masked.push(word.toLowerCase())
    tokens.push({ word, tag, lemma: lemmas[index] as string, slot: null })
  }
  flush()
  return { masked: masked.join(' '), spans, tokens }
}

/** Drops words at the ends of a run that are dates or greetings ("Caroline Yesterday"). */
function trimRun(words: string[]): string[] {
  let start = 0
  let end = words.length
  while (start < end && NOT_NAMES.has((words[start] as string).toLowerCase())) start++
  while (end > start && NOT_NAMES.has((words[end - 1] as string).toLowerCase())) end--
  return words.slice(start, end)
}

/** The type a name's own words say: "Acme Corp", "Project Atlas", "Web Summit", "Central Park". */
export function typeFromName(name: string): EntityType | null {
  const words = normalizeEntityName(name).split(' ')
  const last = words.at(-1) ?? ''
  const first = words[0] ?? ''
  if (COMPANY_WORDS.has(last) || COMPANY_WORDS.has(first)) return 'COMPANY'
  if (PROJECT_WORDS.has(first) || PROJECT_WORDS.has(last)) return 'PROJECT'
  if (EVENT_WORDS.has(last)) return 'EVENT'
  if (PLACE_WORDS.has(last)) return 'PLACE'
  return null
}

/** The date a change of state happened on, as the sentence says it ("in March 2025", "in 2023", "last year"). */
export function eventDate(sentence: string, reference: Date): Date | null {
  const text = sentence.slice(0, 400)
  const year = BARE_YEAR.matcher(text)
  const results = chrono.parse(text, { instant: reference, timezone: 'UTC' }, { forwardDate: false })
  const dated = results.find(
    (result) =>
      result.start.isCertain('year') || result.start.isCertain('month') || result.start.isCertain('day'),
  )
  if (dated) return dated.start.date()
  if (year.find()) return new Date(Date.UTC(Number(year.group(1)), 0, 1))
  return results[0]?.start.date() ?? null
}

/**
 * Entities and relations of one text. Relations whose two ends are the same entity, or that name
 * a role with no entity on one side, are not kept.
 */
export function extractGraphOffline(text: string, options: GraphExtractionOptions): GraphExtraction {
  const speaker = options.speaker ? displayName(options.speaker) : null
  const source = text.slice(0, MAX_TEXT_CHARS)
  const restated = speaker ? toThirdPerson(source, speaker) : source
  const wink = englishNlp()
  const entities = new Map<string, ExtractedEntity>()
  const relations = new Map<string, ExtractedRelation>()
  const memoryConfidence = options.confidence ?? 1

  const noteEntity = (name: string, type: EntityType | null) => {
    const key = normalizeEntityName(name)
    if (!key) return null
    const known = entities.get(key)
    const named = typeFromName(name)
    const best = named ?? type
    if (!known) {
      const entity: ExtractedEntity = {
        name,
        type: best ?? (speaker && key === normalizeEntityName(speaker) ? 'PERSON' : 'CONCEPT'),
      }
      entities.set(key, entity)
      return entity
    }
    // The longest spelling is the name; a typed mention refines CONCEPT (no cue) but never overrides a cue.
    if (name.length > known.name.length) known.name = name
    if (known.type === 'CONCEPT' && best) known.type = best
    return known
  }

  wink
    .readDoc(restated)
    .sentences()
    .each((sentence: ItemSentence) => {
      const sentenceText = (sentence.out() as string).trim()
      const { masked: raw, spans, tokens } = sentenceSpans(sentence, wink.its)
      for (const span of spans) noteEntity(span, null)
      // "the Atlas project depends on…": the kind word belongs to the name's slot, not between slots.
      const masked = raw.replace(/(§\d+) (?:project|app|library|framework|service|team)\b/g, '$1')
      // After the relations (which type their ends more surely), the weaker cues of the words around.
      const typeFromContext = () => {
        for (const cue of CONTEXT_CUES) {
          const matcher = cue.regex.matcher(raw)
          while (matcher.find()) {
            const name = spans[Number(matcher.group(1))]
            const entity = name ? entities.get(normalizeEntityName(name)) : undefined
            if (entity && entity.type === 'CONCEPT') entity.type = cue.type
          }
        }
      }
      const validity = extractValidity(sentenceText, options.reference)
      const addRelation = (
        sourceEntity: ExtractedEntity,
        relationName: string,
        targetEntity: ExtractedEntity,
        confidence: number,
        dated: boolean,
      ) => {
        const key = `${normalizeEntityName(sourceEntity.name)}|${normalizeEntityName(targetEntity.name)}`
        // A pair keeps its first relation, whichever way round ("Luna pet of Melanie" before "Melanie has pet Luna").
        const reverse = `${normalizeEntityName(targetEntity.name)}|${normalizeEntityName(sourceEntity.name)}`
        if (relations.has(key) || relations.has(reverse) || sourceEntity === targetEntity) return
        const validFrom =
          validity.validFrom ??
          (dated ? eventDate(sentenceText, options.reference) : null) ??
          options.reference
        relations.set(key, {
          source: sourceEntity.name,
          relation: normalizeRelation(relationName),
          target: targetEntity.name,
          confidence: Math.round(confidence * memoryConfidence * 1000) / 1000,
          validFrom,
          validUntil: validity.validUntil ?? options.validUntil ?? null,
        })
      }
      const activities = () => {
        for (const candidate of activityCandidates(raw, tokens, spans)) {
          const subject = activitySubject(candidate)
          if (!subject) continue
          const target =
            'slot' in candidate.object
              ? noteEntity(spans[candidate.object.slot] as string, candidate.object.type)
              : noteEntity(candidate.object.name, candidate.object.type)
          if (target?.type === 'PERSON' && candidate.relation !== 'has child') continue
          if (!target) continue
          // A named pet reads as the named pattern's "Luna pet of Melanie", whichever phrasing found it.
          if (candidate.relation === 'has pet' && 'slot' in candidate.object)
            addRelation(target, 'pet of', subject, ACTIVITY_CONFIDENCE, candidate.dated)
          else addRelation(subject, candidate.relation, target, ACTIVITY_CONFIDENCE, candidate.dated)
        }
      }
      // The person an activity is about: a name that can be a person, or "she"/"he" when the text
      // so far names exactly one person (else the pronoun is not guessed at).
      const activitySubject = (candidate: ActivityCandidate): ExtractedEntity | null => {
        if ('slot' in candidate.subject) {
          const name = spans[candidate.subject.slot]
          const entity = name ? entities.get(normalizeEntityName(name)) : undefined
          // Only someone already known as a person: a capitalised opener ("Stuff like this…") is not one.
          return entity?.type === 'PERSON' ? entity : null
        }
        const people = [...entities.values()].filter((e) => e.type === 'PERSON')
        return people.length === 1 ? (people[0] as ExtractedEntity) : null
      }
      if (spans.length < 2) {
        typeFromContext()
        return activities()
      }
      for (const p of PATTERNS) {
        const matcher = p.regex.matcher(masked)
        while (matcher.find()) {
          const groups = Array.from({ length: matcher.groupCount() + 1 }, (_, i) => matcher.group(i) ?? '')
          const sourceName = spans[Number(groups[p.source])]
          const targetName = spans[Number(groups[p.target])]
          if (!sourceName || !targetName) continue
          const sourceEntity = noteEntity(sourceName, p.sourceType)
          const targetEntity = noteEntity(targetName, p.targetType)
          if (!sourceEntity || !targetEntity || sourceEntity === targetEntity) continue
          const relation = typeof p.relation === 'string' ? p.relation : p.relation(groups)
          addRelation(sourceEntity, relation, targetEntity, p.confidence, p.dated)
        }
      }
      typeFromContext()
      activities()
    })
  // Relations were keyed by the names as first met; a longer spelling found later is the name.
  const canonical = (name: string) => entities.get(normalizeEntityName(name))?.name ?? name
  return {
    entities: [...entities.values()],
    relations: [...relations.values()].map((r) => ({
      ...r,
      source: canonical(r.source),
      target: canonical(r.target),
    })),
  }
}
