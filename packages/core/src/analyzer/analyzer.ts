import type { MemoryEntry } from '../types.ts'
import { findRedundantEntries, type RedundantEntry } from './redundancy.ts'
import {
  type AnalyzerConfig,
  contentSignals,
  DEFAULT_ANALYZER_CONFIG,
  type KeyFact,
  keyFacts,
  parseAnalyzerConfig,
  relevanceFromSignals,
} from './relevance.ts'

export type SuggestedActionKind = 'compress' | 'drop' | 'promote'

export interface SuggestedAction {
  entryId: string
  action: SuggestedActionKind
  relevance: number
  reason: string
  /** For a promotion: the key facts that qualified the entry, with the text that shows each. */
  keyFacts?: KeyFact[]
}

export interface EntryScore {
  entryId: string
  relevance: number
  hasKeyFacts: boolean
}

/**
 * How redundancy is found: findRedundantEntries by default. A caller that runs the analyzer
 * repeatedly over mostly the same entries (the optimizer service) passes one that reuses what it
 * found last time when the entries have not changed.
 */
export type RedundancyFinder = (entries: readonly MemoryEntry[], threshold: number) => RedundantEntry[]

/** What the analyzer reads from an entry's text alone: its relevance signals and key facts. */
export interface ContentFeatures {
  signals: number
  facts: KeyFact[]
}

/**
 * Where the analyzer gets each entry's content features: computed from the text by default. A
 * caller analyzing mostly the same entries run after run (the optimizer service) passes one that
 * keeps them while an entry's text and the config's keyFactMode are unchanged.
 */
export type ContentFeatureSource = (entry: MemoryEntry, config: AnalyzerConfig) => ContentFeatures

/** The features of the entry's text under the config, computed (what a cache must reproduce). */
export function contentFeatures(entry: MemoryEntry, config: AnalyzerConfig): ContentFeatures {
  return {
    signals: contentSignals(entry.content, config),
    facts: keyFacts(entry.content, config.keyFactMode),
  }
}

export interface AnalysisResult {
  scores: EntryScore[]
  actions: SuggestedAction[]
}

const fmt = (n: number) => n.toFixed(2)

/**
 * Spec 000, Suggested Actions. At most one action per entry: low relevance first (compress, or
 * drop once compressed), then redundancy, then promotion. A long-term entry keeps the higher of
 * its computed and stored relevance, so a promoted fact (stored 1.0) is not compressed by age.
 */
export function analyzeEntries(
  entries: readonly MemoryEntry[],
  now: Date,
  config: Partial<AnalyzerConfig> = {},
  findRedundant: RedundancyFinder = findRedundantEntries,
  featuresOf: ContentFeatureSource = contentFeatures,
): AnalysisResult {
  const cfg = Object.keys(config).length
    ? parseAnalyzerConfig({ ...DEFAULT_ANALYZER_CONFIG, ...config })
    : DEFAULT_ANALYZER_CONFIG
  const redundant = new Map(findRedundant(entries, cfg.redundancyThreshold).map((r) => [r.entryId, r]))
  const scores: EntryScore[] = []
  const actions: SuggestedAction[] = []
  for (const entry of entries) {
    const features = featuresOf(entry, cfg)
    const computed = relevanceFromSignals(entry, now, features.signals, cfg)
    const relevance = entry.type === 'long_term' ? Math.max(computed, entry.relevance) : computed
    const facts = features.facts
    const factKind = facts[0]?.kind ?? null
    scores.push({ entryId: entry.id, relevance, hasKeyFacts: factKind !== null })

    if (relevance < cfg.minRelevance) {
      actions.push(
        entry.isCompressed
          ? {
              entryId: entry.id,
              action: 'drop',
              relevance,
              reason: `relevance ${fmt(relevance)} < ${fmt(cfg.minRelevance)} and already compressed`,
            }
          : {
              entryId: entry.id,
              action: 'compress',
              relevance,
              reason: `relevance ${fmt(relevance)} < ${fmt(cfg.minRelevance)} and not yet compressed`,
            },
      )
      continue
    }
    const duplicate = redundant.get(entry.id)
    if (duplicate && !entry.isCompressed) {
      actions.push({
        entryId: entry.id,
        action: 'compress',
        relevance,
        reason: `redundant with entry ${duplicate.duplicateOfId} (similarity ${fmt(duplicate.similarity)} >= ${fmt(cfg.redundancyThreshold)})`,
      })
      continue
    }
    if (entry.type === 'short_term' && relevance >= cfg.promoteThreshold && factKind !== null) {
      actions.push({
        entryId: entry.id,
        action: 'promote',
        relevance,
        reason: `short-term, relevance ${fmt(relevance)} >= ${fmt(cfg.promoteThreshold)} and has key facts (${facts.map((f) => f.kind).join(', ')})`,
        keyFacts: facts,
      })
    }
  }
  return { scores, actions }
}
