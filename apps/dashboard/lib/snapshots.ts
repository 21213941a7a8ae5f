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
  summary: string[]
  usageRatio: number
  savingsRatio: number
  targetUsageRatio: number
  overBudgetAbove: number
  underBudgetBelow: number
  emergencySavingsBelow: number
  changes: { parameter: string; from: number; to: number }[]
  keyFactMode: 'SPEC' | 'STRICT'
  promotionCount: number
  promotions: {
    entryId: string
    excerpt: string
    relevance: number
    keyFacts: { kind: string; text: string }[]
  }[]
}

/** The explanation's fields, for the optimizer page (the overview charts do without). */
export const EXPLANATION_FIELDS = `explanation { rules summary usageRatio savingsRatio targetUsageRatio overBudgetAbove underBudgetBelow emergencySavingsBelow changes { parameter from to } keyFactMode promotionCount promotions { entryId excerpt relevance keyFacts { kind text } } }`

export const SNAPSHOT_FIELDS =
  'id agentId tokensBefore tokensAfter tokensSaved entriesCompressed entriesDropped entriesPromoted usageRatio compressionTriggerRatio fullMessageWindow minRelevanceScore timestamp'
