import { jaccardSimilarity } from '../analyzer/redundancy.ts'
import { contentWords } from '../retrieval/lexical.ts'
import type { MemoryCategory, MemorySettings } from './memory-item.ts'
import { replacesStatement } from './replacement.ts'

/**
 * Jaccard similarity of two word sets, 0 when both are empty. Unlike spec 000's redundancy scan,
 * where two empty entries are the same entry, two texts without content words share no evidence
 * of saying the same thing ("🙂" is no duplicate of "—").
 */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  return a.size === 0 && b.size === 0 ? 0 : jaccardSimilarity(a, b)
}

/**
 * Memories the lexical check compares a new one with at most: those sharing the most (and rarest)
 * content words with it, by BM25. Every memory that can reach a Jaccard threshold shares a content
 * word with it, so while no more than this many do, the check is the spec's comparison with every
 * memory; past it, the ones ranked lower are skipped instead of reading all of an agent's memories
 * on every write (100K rows at 100K memories).
 */
export const VERIFICATION_LEXICAL_CANDIDATES = 1_000

export interface ExistingMemory {
  id: string
  content: string
  category: MemoryCategory
  createdAt: Date
}

/** A current memory close to the candidate in embedding space; similarity is cosine. */
export interface SemanticNeighbour {
  id: string
  similarity: number
}

export type VerificationOutcome =
  /** supersedes: the older entry this one replaces (layer 2); similarity: their word overlap. */
  | { kind: 'stored'; supersedes: string | null; similarity: number | null }
  | { kind: 'duplicate'; of: string; layer: 'jaccard' | 'semantic'; similarity: number }

export type VerificationSettings = Pick<
  MemorySettings,
  'verificationEnabled' | 'jaccardDedupThreshold' | 'contradictionThreshold' | 'semanticDedupThreshold'
>

/**
 * When a new memory in the contradiction band supersedes the older one:
 * - `overlap` (spec 003, every explicit write): the band is enough;
 * - `replacement` (memories formed from conversation): the band and `replacesStatement`, so a
 *   later statement about the same speaker and topic no longer replaces a distinct earlier one.
 */
export type SupersessionRule = 'overlap' | 'replacement'

interface Match {
  memory: ExistingMemory
  similarity: number
}

/** Higher similarity wins; on a tie the older entry, then the earlier in input order. */
function better(similarity: number, memory: ExistingMemory, current: Match | null): boolean {
  if (!current) return true
  if (similarity !== current.similarity) return similarity > current.similarity
  return memory.createdAt.getTime() < current.memory.createdAt.getTime()
}

/**
 * Spec 003's deterministic three-layer check before a memory is stored.
 * 1. Word overlap (content words, see `contentWords`) ≥ jaccardDedupThreshold with any current
 *    entry: a near-duplicate, not stored.
 * 2. Same category, overlap strictly between contradictionThreshold and jaccardDedupThreshold:
 *    the newer entry supersedes the closest one (ties: the oldest).
 * 3. Cosine similarity ≥ semanticDedupThreshold with a neighbour: a semantic duplicate. The entry
 *    being superseded is no witness here: "lives in Paris" and "lives in Berlin" are close in
 *    embedding space precisely because they contradict each other.
 * `neighbours` must come from current entries (an empty list when there are no vectors yet).
 * With the `replacement` rule, layer 2 also asks `replacesStatement` of each entry in the band.
 */
export function verifyMemory(
  candidate: { content: string; category: MemoryCategory },
  existing: readonly ExistingMemory[],
  neighbours: readonly SemanticNeighbour[],
  settings: VerificationSettings,
  supersession: SupersessionRule = 'overlap',
): VerificationOutcome {
  if (!settings.verificationEnabled) return { kind: 'stored', supersedes: null, similarity: null }

  const words = contentWords(candidate.content)
  let duplicate: Match | null = null
  let contradicted: Match | null = null
  for (const memory of existing) {
    const similarity = jaccard(words, contentWords(memory.content))
    if (similarity >= settings.jaccardDedupThreshold) {
      if (better(similarity, memory, duplicate)) duplicate = { memory, similarity }
    } else if (
      memory.category === candidate.category &&
      similarity > settings.contradictionThreshold &&
      better(similarity, memory, contradicted) &&
      (supersession === 'overlap' || replacesStatement(candidate.content, memory.content))
    ) {
      contradicted = { memory, similarity }
    }
  }
  if (duplicate) {
    return { kind: 'duplicate', of: duplicate.memory.id, layer: 'jaccard', similarity: duplicate.similarity }
  }

  const supersedes = contradicted?.memory.id ?? null
  let semantic: SemanticNeighbour | null = null
  for (const neighbour of neighbours) {
    if (neighbour.id === supersedes || neighbour.similarity < settings.semanticDedupThreshold) continue
    if (!semantic || neighbour.similarity > semantic.similarity) semantic = neighbour
  }
  if (semantic)
    return { kind: 'duplicate', of: semantic.id, layer: 'semantic', similarity: semantic.similarity }

  return { kind: 'stored', supersedes, similarity: contradicted?.similarity ?? null }
}
