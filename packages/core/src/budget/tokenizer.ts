import { createRequire } from 'node:module'

export const TOKENIZER_NAMES = ['o200k_base', 'cl100k_base', 'heuristic'] as const
export type TokenizerName = (typeof TOKENIZER_NAMES)[number]
export const DEFAULT_TOKENIZER: TokenizerName = 'o200k_base'

export interface TokenCounter {
  readonly name: TokenizerName
  count(text: string): number
}

/** The spec's fast estimate: about four characters per token of English. */
export function heuristicTokenCount(text: string): number {
  return Math.ceil(text.length / 4)
}

/**
 * A real BPE count by default: the heuristic is off by +18% on prose and -14% on JSON, which is
 * the difference between fitting a context window and overflowing it.
 */
export function createTokenCounter(name: TokenizerName = DEFAULT_TOKENIZER): TokenCounter {
  if (name === 'heuristic') return { name, count: heuristicTokenCount }
  return { name, count: (text) => countInPieces(text, bpeCounter(name)) }
}

type BpeName = Exclude<TokenizerName, 'heuristic'>
type CountTokens = (text: string, options?: { disallowedSpecial?: Set<string> }) => number

// Each BPE table takes 130-280 ms to load: it is loaded on the first count, once, so importing
// core (or choosing the heuristic) costs nothing. A synchronous require keeps count() synchronous.
const loadEncoding = createRequire(import.meta.url)
const bpeCounters = new Map<BpeName, (text: string) => number>()

// Stored text is data, not a prompt: "<|endoftext|>" inside a message is counted as the plain
// text it is. gpt-tokenizer's default throws on it, which would reject an agent's message.
const SPECIAL_TOKENS_AS_TEXT = { disallowedSpecial: new Set<string>() }

function bpeCounter(name: BpeName): (text: string) => number {
  let count = bpeCounters.get(name)
  if (!count) {
    const { countTokens } = loadEncoding(`gpt-tokenizer/encoding/${name}`) as { countTokens: CountTokens }
    count = (text) => countTokens(text, SPECIAL_TOKENS_AS_TEXT)
    bpeCounters.set(name, count)
  }
  return count
}

/** Longest run without white space that BPE sees whole; longer runs are counted in pieces. */
export const MAX_BPE_RUN_CHARS = 512
const LONG_RUN = new RegExp(`\\S{${MAX_BPE_RUN_CHARS + 1},}`, 'g')

/**
 * BPE merges a pre-tokenized word in time quadratic in its length: 100k characters without a
 * space (a base64 blob, a minified line) take seconds. Such runs are cut into 512-character
 * pieces, which changes the count by at most one token per piece and bounds the time.
 */
function countInPieces(text: string, count: (text: string) => number): number {
  if (text.length === 0) return 0
  if (text.length <= MAX_BPE_RUN_CHARS) return count(text)
  let total = 0
  let last = 0
  for (const match of text.matchAll(LONG_RUN)) {
    const start = match.index as number
    if (start > last) total += count(text.slice(last, start))
    const run = match[0]
    for (let i = 0; i < run.length; i += MAX_BPE_RUN_CHARS)
      total += count(run.slice(i, i + MAX_BPE_RUN_CHARS))
    last = start + run.length
  }
  if (last < text.length) total += count(text.slice(last))
  return total
}
