import { stemmer } from 'stemmer'
import { z } from 'zod'
import { parseWith } from '../errors.ts'
import { STOP_WORDS } from '../retrieval/lexical.ts'

/** What retrieval needs from an embedding model; remote and local models implement the same. */
export interface Embedder {
  /** Identifies the vectors' space: vectors of two models are never compared. */
  readonly model: string
  readonly dimensions: number
  embed(texts: readonly string[]): Promise<Float32Array[]>
}

/**
 * Word meanings for the offline embedder (e.g. WordNet synsets), injected because reading a
 * dictionary is I/O. Two words sharing a group are taken as synonyms.
 */
export interface SynonymLexicon {
  /** Names the lexicon and its settings: it becomes part of the embedder's model id. */
  readonly id: string
  /** Group keys of a lowercase word, most frequent meaning first; [] for an unknown word. */
  groupsOf(word: string): readonly string[]
}

/**
 * The offline default: no model file, no network, deterministic. Stemmed words, adjacent word
 * pairs and character trigrams are hashed (signed) into a dense vector, so texts that share
 * words, word forms or spellings land close together. With a lexicon, each word also adds its
 * synonym groups, so paraphrases ("car" / "automobile") land close too. A real model adds more
 * meaning where one is configured.
 */
export const HashingEmbedderConfigSchema = z.object({
  dimensions: z.number().int().min(16).max(4_096).default(384),
  wordWeight: z.number().min(0).max(10).default(1),
  pairWeight: z.number().min(0).max(10).default(0.5),
  trigramWeight: z.number().min(0).max(10).default(0.5),
  /**
   * What one word's synonym groups weigh in all; used only with a lexicon. 2 with WordNet: on the
   * LoCoMo development set 1.5 to 3 formed a plateau, vector-only recall@5 30 → 38 against none.
   */
  synonymWeight: z.number().min(0).max(10).default(2),
})
export type HashingEmbedderConfig = z.infer<typeof HashingEmbedderConfigSchema>
export const DEFAULT_HASHING_EMBEDDER_CONFIG: HashingEmbedderConfig = HashingEmbedderConfigSchema.parse({})

/** FNV-1a, 32 bits: stable across runs and machines. */
function hash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

export interface HashingEmbedder extends Embedder {
  embedOne(text: string): Float32Array
}

export interface HashingEmbedderOptions extends Partial<HashingEmbedderConfig> {
  lexicon?: SynonymLexicon
}

export function createHashingEmbedder(options: HashingEmbedderOptions = {}): HashingEmbedder {
  const { lexicon, ...input } = options
  const config = parseWith(HashingEmbedderConfigSchema, input, 'embedder')
  const dims = config.dimensions
  const add = (vector: Float32Array, feature: string, weight: number) => {
    const h = hash(feature)
    vector[h % dims] = (vector[h % dims] as number) + (h & 0x80000000 ? -weight : weight)
  }
  const embedOne = (text: string): Float32Array => {
    const vector = new Float32Array(dims)
    const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w))
    const stems = words.map((w) => stemmer(w))
    const counts = new Map<string, number>()
    for (const stem of stems) counts.set(stem, (counts.get(stem) ?? 0) + 1)
    // Sub-linear term frequency: a word said five times is not five times the topic.
    for (const [stem, count] of counts) add(vector, `w:${stem}`, config.wordWeight * (1 + Math.log(count)))
    for (let i = 1; i < stems.length; i++) add(vector, `p:${stems[i - 1]} ${stems[i]}`, config.pairWeight)
    for (const word of new Set(words)) {
      const padded = `#${word}#`
      // Spread so that a word's trigrams weigh trigramWeight in all, whatever its length.
      const share = config.trigramWeight / Math.sqrt(Math.max(1, padded.length - 2))
      for (let i = 0; i + 3 <= padded.length; i++) add(vector, `t:${padded.slice(i, i + 3)}`, share)
      const groups = lexicon?.groupsOf(word) ?? []
      // Spread like trigrams: a word with many meanings must not outweigh one with a single one.
      const groupShare = config.synonymWeight / Math.sqrt(Math.max(1, groups.length))
      for (const group of groups) add(vector, `s:${group}`, groupShare)
    }
    let norm = 0
    for (let i = 0; i < dims; i++) norm += (vector[i] as number) ** 2
    norm = Math.sqrt(norm)
    if (norm > 0) for (let i = 0; i < dims; i++) vector[i] = (vector[i] as number) / norm
    return vector
  }
  return {
    // Synonym features put vectors in another space: they must never be compared with v1's.
    model: lexicon ? `engram-hashing-v2-${lexicon.id}-${dims}` : `engram-hashing-v1-${dims}`,
    dimensions: dims,
    embedOne,
    embed: async (texts) => texts.map(embedOne),
  }
}
