import { z } from 'zod'
import { parseWith } from '../errors.ts'

/** Spec 000, Tier 3: the five categories of cross-session knowledge. */
export const KNOWLEDGE_CATEGORIES = [
  'domain',
  'execution_pattern',
  'user_preference',
  'website_knowledge',
  'error_pattern',
] as const
export type KnowledgeCategory = (typeof KNOWLEDGE_CATEGORIES)[number]

/** Spec 000, Confidence Mechanics. */
export const KnowledgeConfigSchema = z.object({
  initialConfidence: z.number().min(0).max(1).default(0.5),
  repeatStoreBoost: z.number().min(0).max(1).default(0.1),
  useBoost: z.number().min(0).max(1).default(0.05),
  decayAmount: z.number().min(0).max(1).default(0.1),
  decayAfterDays: z.number().min(1).max(3_650).default(30),
  pruneBelow: z.number().min(0).max(1).default(0.1),
  maxConfidence: z.number().min(0).max(1).default(1),
})
export type KnowledgeConfig = z.infer<typeof KnowledgeConfigSchema>
export const DEFAULT_KNOWLEDGE_CONFIG: KnowledgeConfig = KnowledgeConfigSchema.parse({})

export function parseKnowledgeConfig(input?: Partial<KnowledgeConfig>): KnowledgeConfig {
  return parseWith(KnowledgeConfigSchema, input, 'knowledge')
}

const resolve = (config: Partial<KnowledgeConfig>): KnowledgeConfig =>
  config === DEFAULT_KNOWLEDGE_CONFIG ? DEFAULT_KNOWLEDGE_CONFIG : parseKnowledgeConfig(config)

// Confidence moves in steps of 0.05 and 0.1: rounding keeps 0.5 + 0.1 equal to 0.6, not 0.6000000000000001.
const round = (n: number) => Math.round(n * 1e6) / 1e6

/**
 * Confidence after a store. A new fact starts at the given confidence or 0.5. A repeated store
 * adds 0.1; when the caller states a higher confidence, that wins (it knows more than the bump).
 */
export function confidenceOnStore(
  existing: number | null,
  given: number | undefined,
  config: Partial<KnowledgeConfig> = DEFAULT_KNOWLEDGE_CONFIG,
): number {
  const cfg = resolve(config)
  if (existing === null) return round(Math.min(cfg.maxConfidence, given ?? cfg.initialConfidence))
  return round(Math.min(cfg.maxConfidence, Math.max(existing + cfg.repeatStoreBoost, given ?? 0)))
}

/** Confidence after a use: +0.05, capped. */
export function confidenceOnUse(
  confidence: number,
  config: Partial<KnowledgeConfig> = DEFAULT_KNOWLEDGE_CONFIG,
): number {
  const cfg = resolve(config)
  return round(Math.min(cfg.maxConfidence, confidence + cfg.useBoost))
}

export interface DecayCandidate {
  id: string
  confidence: number
  lastUsedAt: Date | null
  lastDecayAt: Date | null
  createdAt: Date
}

/**
 * −0.1 for a fact unused for 30+ days, once per 30-day period (the optimizer runs every two
 * minutes; decaying on every run would erase a month-old fact in ten minutes). The clock starts at
 * the last use, or creation, or the last decay, whichever is latest. Facts under 0.1 are pruned.
 */
export function planKnowledgeDecay(
  items: readonly DecayCandidate[],
  now: Date,
  config: Partial<KnowledgeConfig> = DEFAULT_KNOWLEDGE_CONFIG,
): { decayed: { id: string; confidence: number }[]; pruned: string[] } {
  const cfg = resolve(config)
  const period = cfg.decayAfterDays * 86_400_000
  const decayed: { id: string; confidence: number }[] = []
  const pruned: string[] = []
  for (const item of items) {
    const since = Math.max(
      (item.lastUsedAt ?? item.createdAt).getTime(),
      item.lastDecayAt?.getTime() ?? Number.NEGATIVE_INFINITY,
    )
    let confidence = item.confidence
    if (now.getTime() - since >= period) {
      confidence = round(Math.max(0, confidence - cfg.decayAmount))
      decayed.push({ id: item.id, confidence })
    }
    if (confidence < cfg.pruneBelow) pruned.push(item.id)
  }
  const gone = new Set(pruned)
  return { decayed: decayed.filter((d) => !gone.has(d.id)), pruned }
}

export interface KnowledgeItem {
  id: string
  category: KnowledgeCategory
  key: string
  value: string
  confidence: number
}

export interface KnowledgeMatch<K extends KnowledgeItem> {
  item: K
  score: number
  matchedTerms: string[]
}

const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have i in is it its of on or that the this to was were will with you your me my we our they them then than so do does did not no yes can could would should into about over after before open read go get use'.split(
    ' ',
  ),
)
const DOMAIN = /\b((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,})\b/gi

/** Hostnames named in a text, lowercased, without a leading www. */
export function extractDomains(text: string): string[] {
  return [
    ...new Set([...text.matchAll(DOMAIN)].map((m) => (m[1] as string).toLowerCase().replace(/^www\./, ''))),
  ]
}

function terms(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_-]*/gu) ?? []
  return new Set(words.filter((w) => w.length > 1 && !STOP_WORDS.has(w)))
}

/** a.example.com is about example.com; example.com is not about a.example.com's siblings. */
function domainMatches(queryDomain: string, itemDomain: string): boolean {
  return (
    queryDomain === itemDomain ||
    queryDomain.endsWith(`.${itemDomain}`) ||
    itemDomain.endsWith(`.${queryDomain}`)
  )
}

export const DEFAULT_KNOWLEDGE_RANK_LIMIT = 10
/** A shared domain outweighs shared words: "example.com" names the site, "title" could be anywhere. */
export const DEFAULT_DOMAIN_MATCH_WEIGHT = 3

export interface RankKnowledgeOptions {
  limit?: number
  minConfidence?: number
  domainWeight?: number
}

/**
 * Spec 000, data flow step 10: the facts that bear on a domain or a text. A shared domain weighs
 * 3, each shared word 1; the sum, normalised by the query's size, is scaled by confidence.
 */
export function rankKnowledge<K extends KnowledgeItem>(
  items: readonly K[],
  query: string,
  options: RankKnowledgeOptions = {},
): KnowledgeMatch<K>[] {
  const limit = options.limit ?? DEFAULT_KNOWLEDGE_RANK_LIMIT
  const minConfidence = options.minConfidence ?? 0
  const domainWeight = options.domainWeight ?? DEFAULT_DOMAIN_MATCH_WEIGHT
  const queryDomains = extractDomains(query)
  // The words of a domain are counted by the domain match, not again one by one.
  const domainWords = new Set(queryDomains.flatMap((d) => d.split('.')))
  const queryTerms = new Set([...terms(query)].filter((t) => !domainWords.has(t)))
  const weightTotal = queryDomains.length * domainWeight + queryTerms.size || 1
  const matches: KnowledgeMatch<K>[] = []
  for (const item of items) {
    if (item.confidence < minConfidence) continue
    const text = `${item.key} ${item.value}`
    const itemDomains = extractDomains(text)
    const itemTerms = terms(text)
    const matched: string[] = []
    let weight = 0
    for (const domain of queryDomains) {
      if (itemDomains.some((d) => domainMatches(domain, d))) {
        weight += domainWeight
        matched.push(domain)
      }
    }
    for (const term of queryTerms) {
      if (itemTerms.has(term)) {
        weight += 1
        matched.push(term)
      }
    }
    if (weight === 0) continue
    matches.push({ item, score: round((weight / weightTotal) * item.confidence), matchedTerms: matched })
  }
  return matches.sort((a, b) => b.score - a.score || b.item.confidence - a.item.confidence).slice(0, limit)
}
