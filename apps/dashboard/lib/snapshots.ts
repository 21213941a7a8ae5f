/** An optimizer snapshot as the dashboard reads it (server pages and the live hook alike). */
export interface Snapshot {
  id: string
  agentId: string
  tokensBefore: number
  tokensAfter: number
  tokensSaved: number
  entriesCompressed: number
  entriesDropped: number
  entriesPromoted: number
  usageRatio: number
  compressionTriggerRatio: number
  fullMessageWindow: number
  minRelevanceScore: number
  timestamp: string
  /** Why the run changed what it changed; null for runs recorded before explanations were kept. */
  explanation?: SnapshotExplanation | null
}

export interface SnapshotExplanation {
  rules: ('OVER_BUDGET' | 'UNDER_BUDGET' | 'EMERGENCY')[]
  usageRatio: number
  savingsRatio: number
  targetUsageRatio: number
  overBudgetAbove: number
  underBudgetBelow: number
  changes: { parameter: string; from: number; to: number }[]
  keyFactMode: 'SPEC' | 'STRICT'
  promotionCount: number
  promotions: {
    excerpt: string
    keyFacts: { kind: string; text: string }[]
  }[]
}

/**
 * The explanation's fields the optimizer page shows (the overview charts do without). Only those:
 * the API's cost limit (ENGRAM_MAX_QUERY_COST, 20,000 by default) weighs deep fields heavily, and
 * every field of the explanation with the snapshot list came to 21,453.
 */
export const EXPLANATION_FIELDS = `explanation { rules usageRatio savingsRatio targetUsageRatio overBudgetAbove underBudgetBelow changes { parameter from to } keyFactMode promotionCount promotions { excerpt keyFacts { kind text } } }`

export const SNAPSHOT_FIELDS =
  'id agentId tokensBefore tokensAfter tokensSaved entriesCompressed entriesDropped entriesPromoted usageRatio compressionTriggerRatio fullMessageWindow minRelevanceScore timestamp'
