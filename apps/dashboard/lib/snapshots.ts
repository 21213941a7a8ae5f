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
}

export const SNAPSHOT_FIELDS =
  'id agentId tokensBefore tokensAfter tokensSaved entriesCompressed entriesDropped entriesPromoted usageRatio compressionTriggerRatio fullMessageWindow minRelevanceScore timestamp'
