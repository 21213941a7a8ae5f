import type { MemoryCategory, MemoryEntryType } from '../memory/memory-item.ts'
import { interpretRememberThis, isExplicitRememberRequest } from '../memory/remember.ts'
import { contentWords, STOP_WORDS } from '../retrieval/lexical.ts'
import { initialImportance } from './importance.ts'
import { type AnalysedSentence, analyseText } from './language.ts'
import {
  classifySentence,
  restoreElidedSubject,
  type SentenceKind,
  type SpeakerRole,
  stripOpeners,
} from './patterns.ts'
import { displayName, toThirdPerson } from './perspective.ts'
import {
  DEFAULT_IMPORTANCE_WEIGHTS,
  type ImportanceWeights,
  type OfflineExtractorSettings,
  parseOfflineExtractorSettings,
} from './settings.ts'
import { extractValidity } from './temporal.ts'

/** One turn of a conversation as the extractor sees it. */
export interface ConversationTurn {
  /** The message id: becomes the memory's source, so a memory always leads back to what was said. */
  id: string
  /** Who said it: a user id or display name, used to restate "I" ("dana" → "Dana"). */
  speaker: string
  role?: SpeakerRole
  content: string
  /** When it was said: dates in the text are read relative to this, and recency counts from it. */
  timestamp: Date
}

/** A memory the extractor proposes; the caller still runs verification and the privacy policy on it. */
export interface CandidateMemory {
  type: MemoryEntryType
  category: MemoryCategory
  content: string
  confidence: number
  tags: string[]
  validFrom: Date | null
  validUntil: Date | null
  importance: number
  sourceMessageIds: string[]
  /** The speaker the memory is about (the turn's speaker), for the profile and the injection guard. */
  speaker: string
  /** The pattern family that produced it. */
  family: string
}

export interface OfflineExtractorOptions {
  /** Recency in the initial importance counts up to here; inject the server's clock. */
  now: Date
  settings?: Partial<OfflineExtractorSettings>
  importanceWeights?: ImportanceWeights
}

/** Confidence of an explicit request: the speaker said outright that this is to be kept. */
const EXPLICIT_CONFIDENCE = 0.95
const MAX_TAGS = 10

/**
 * The offline extractor (issue 13 §2): no model, no network, the same output for the same input.
 * Each turn is split into sentences; each sentence is classified by the pattern families; what is
 * kept is restated about its speaker, tagged with the entities it names, given the validity its
 * words state and spec 002's initial importance, and linked to the turn it came from. Assistant
 * turns are skipped unless `extractFromAssistant`: what the assistant says is not what the user is.
 */
export function extractMemoriesOffline(
  turns: readonly ConversationTurn[],
  options: OfflineExtractorOptions,
): CandidateMemory[] {
  const settings = parseOfflineExtractorSettings(options.settings ?? {})
  const weights = options.importanceWeights ?? DEFAULT_IMPORTANCE_WEIGHTS
  const seen = new Set<string>()
  const vocative = vocativePattern(turns.map((turn) => turn.speaker))
  const memories: CandidateMemory[] = []
  for (const turn of turns) {
    const role = turn.role ?? 'user'
    if (role === 'system' || (role === 'assistant' && !settings.extractFromAssistant)) continue
    const fromTurn = extractFromTurn(turn, role, settings, weights, options.now, vocative)
    for (const memory of fromTurn) {
      const key = memory.content.toLowerCase()
      if (seen.has(key)) continue
      seen.add(key)
      memories.push(memory)
    }
  }
  return memories
}

function extractFromTurn(
  turn: ConversationTurn,
  role: SpeakerRole,
  settings: OfflineExtractorSettings,
  weights: ImportanceWeights,
  now: Date,
  vocative: RegExp | null,
): CandidateMemory[] {
  const speaker = displayName(turn.speaker)
  const speakerWord = speaker.toLowerCase()
  const found: { memory: CandidateMemory; sentence: number }[] = []
  const sentences = analyseText(turn.content)
  for (const [sentenceIndex, sentence] of sentences.entries()) {
    const text = restoreElidedSubject(
      stripOpeners(withoutVocative(sentence.text.slice(0, settings.maxSentenceChars), vocative)),
    )
    const explicit = role !== 'tool' && isExplicitRememberRequest(text)
    const body = explicit ? interpretRememberThis(text).content : text
    let kind: SentenceKind | null = classifySentence(body, role)
    if (explicit) {
      kind ??= { memoryType: 'fact', category: 'fact', tier: 'semantic', confidence: 0, family: 'explicit' }
      kind.confidence = Math.max(kind.confidence, EXPLICIT_CONFIDENCE)
      kind.family = `explicit ${kind.family}`
    }
    if (!kind || kind.confidence < settings.minConfidence) continue
    const minimumWords =
      kind.confidence >= settings.namedFamilyConfidence
        ? settings.minContentWordsNamed
        : settings.minContentWords
    if (!explicit && contentWords(body).size < minimumWords) continue
    if (!explicit && kind.family.startsWith('third-person') && !settings.keepThirdPerson) continue
    const content = role === 'tool' ? body : toThirdPerson(body, speaker)
    const validity = extractValidity(body, turn.timestamp)
    const { importance } = initialImportance(
      { content: text, kind: role === 'tool' ? 'tool_result' : 'message', timestamp: turn.timestamp },
      now,
      weights,
    )
    // Tags are single words: "Door Dash" is kept as "door-dash" (the full-text index reads both).
    const entities = sentence.properNouns
      .map((name) => name.toLowerCase().replace(/\s+/g, '-'))
      .filter((name) => name !== speakerWord)
    found.push({
      sentence: sentenceIndex,
      memory: {
        type: kind.memoryType,
        category: kind.category,
        content,
        confidence: kind.confidence,
        tags: [...new Set([kind.memoryType, ...entities])],
        validFrom: validity.validFrom,
        validUntil: validity.validUntil,
        importance: explicit ? weights.explicitRequest : importance,
        sourceMessageIds: [turn.id],
        speaker: turn.speaker,
        family: kind.family,
      },
    })
  }
  // The strongest first when a turn says more than the limit allows; ties keep the text's order.
  const kept = found
    .map((item, index) => ({ ...item, index }))
    .sort((a, b) => b.memory.confidence - a.memory.confidence || a.index - b.index)
    .slice(0, settings.maxItemsPerTurn)
    .sort((a, b) => a.index - b.index)
  const context = settings.turnNounTags
    ? unrestatedNouns(sentences, new Set(kept.map((item) => item.sentence)), speakerWord)
    : []
  return kept.map(({ memory }) => {
    const said = contentWords(memory.content)
    const tags = [...memory.tags, ...context.filter((noun) => !said.has(noun))]
    return { ...memory, tags: [...new Set(tags)].slice(0, MAX_TAGS) }
  })
}

/**
 * The nouns of a turn's sentences that no memory restates (a sentence of at least
 * CONTEXT_SENTENCE_WORDS content words: shorter ones are reactions): each memory of the turn is
 * tagged with them, since a question about the turn may name what it said around the sentence a
 * memory keeps ("a big change", said of "an internship at a design firm" the extractor passed over).
 */
function unrestatedNouns(
  sentences: readonly AnalysedSentence[],
  restated: ReadonlySet<number>,
  speakerWord: string,
): string[] {
  const nouns = sentences
    .filter(
      (sentence, index) => !restated.has(index) && contentWords(sentence.text).size >= CONTEXT_SENTENCE_WORDS,
    )
    .flatMap((sentence) => sentence.nouns)
  return [...new Set(nouns)].filter(
    (noun) => noun !== speakerWord && noun.length > 2 && !STOP_WORDS.has(noun) && !NOT_NOUNS.has(noun),
  )
}

const CONTEXT_SENTENCE_WORDS = 3

/** Spoken contractions the light model can tag as nouns ("It's gonna be…"). */
const NOT_NOUNS = new Set(['gonna', 'wanna', 'gotta', 'kinda', 'sorta', 'lotta', 'dunno'])

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A sentence that opens by addressing another participant ("Caroline, since we talked…", "Hey Mel,
 * …"): the name is not part of the statement, and left in it would read as its subject.
 */
function vocativePattern(speakers: readonly string[]): RegExp | null {
  const names = [...new Set(speakers.flatMap((speaker) => displayName(speaker).split(' ')))].filter(
    (name) => name.length > 1,
  )
  if (names.length === 0) return null
  return new RegExp(
    `^(?:(?:hey|hi|oh|wow|thanks|yes|yeah)[\\s,!]+)?(?:${names.map(escapeRegExp).join('|')})\\s*[,!:-]\\s*`,
    'i',
  )
}

function withoutVocative(sentence: string, vocative: RegExp | null): string {
  if (!vocative) return sentence
  const stripped = sentence.replace(vocative, '')
  return stripped.length > 0 ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : sentence
}
