/** Memory items as the Memories page reads them (server page, forms and live panel alike). */

export const MEMORY_CATEGORY_LABELS: Record<string, string> = {
  FACT: 'Fact',
  PREFERENCE: 'Preference',
  DECISION: 'Decision',
  CORRECTION: 'Correction',
  COMMITMENT: 'Commitment',
  RELATIONSHIP: 'Relationship',
  SKILL: 'Skill',
  CONTEXT: 'Context',
  PAST_CONVERSATION: 'Past conversation',
}

export const MEMORY_ORDERS: Record<string, string> = {
  NEWEST: 'Newest',
  IMPORTANCE: 'Importance',
  UPDATED: 'Last changed',
  ACCESSED: 'Last recalled',
  ACCESS_COUNT: 'Times recalled',
}

export const SEARCH_SCOPES: Record<string, string> = {
  MEMORIES: 'Memories',
  MESSAGES: 'Messages',
  KNOWLEDGE: 'Knowledge',
  SUMMARIES: 'Summaries',
}

export const SEARCH_STRATEGIES: Record<string, string> = {
  HYBRID: 'Hybrid (BM25 + vectors, MMR)',
  LEXICAL: 'Lexical (BM25)',
  SIMILARITY: 'Similarity (vectors)',
  RECENCY: 'Recency',
  IMPORTANCE: 'Importance',
  WEIGHTED: 'Weighted (recency, similarity, importance)',
  SIMILARITY_IMPORTANCE: 'Similarity × importance',
}

export interface MemoryRow {
  id: string
  agentId: string
  content: string
  category: string
  tags: string[]
  importance: number
  confidence: number
  pinned: boolean
  accessCount: number
  createdAt: string
  validFrom: string
  validUntil: string | null
  isCurrent: boolean
  supersededById: string | null
  supersededBy: { id: string; content: string } | null
  /** Where the memory came from: the conversation and message it was formed from, when known. */
  sourceConversationId: string | null
  sourceMessageId: string | null
}

export const MEMORY_ROW_FIELDS =
  'id agentId content category tags importance confidence pinned accessCount createdAt validFrom validUntil isCurrent supersededById supersededBy { id content } sourceConversationId sourceMessageId'

export type EmbeddingState = 'IDLE' | 'RUNNING' | 'DONE' | 'FAILED'

export interface EmbeddingProgress {
  model: string
  state: EmbeddingState
  total: number
  done: number
  failed: number
  startedAt: string | null
  finishedAt: string | null
  error: string | null
}

export const EMBEDDING_PROGRESS_FIELDS = 'model state total done failed startedAt finishedAt error'

export interface ImportReport {
  memories: number
  knowledge: number
  sessions: number
  messages: number
  vectors: number
  reembedded: boolean
}

/** The file an export is saved as: engram-<agent>-<YYYY-MM-DD>.json. */
export function exportFileName(agentId: string, exportedAt: string | Date): string {
  const day = new Date(exportedAt).toISOString().slice(0, 10)
  return `engram-${agentId.replace(/[^A-Za-z0-9_-]/g, '_')}-${day}.json`
}

/** "a, b ,, c" → ["a", "b", "c"]: tags as typed into one field. */
export function parseTags(text: string): string[] {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean)
}

/**
 * A link to one memory in the list: filtered by the start of its content (superseded included) and
 * scrolled to its row. No lookup by id: the API counts memory(id) as an access, a link should not.
 */
export function memoryHref(agentId: string, id: string, content: string): string {
  const query = new URLSearchParams({ agent: agentId, superseded: '1', q: content.slice(0, 120) })
  return `/memories?${query.toString()}#memory-${id}`
}

export interface ScoreComponents {
  bm25: number
  vector: number
  importance: number
  recency: number
  confidence: number
  context: number
  episode: number
  time: number
  speaker: number
  feedback: number
  cooccurrence: number
  decay: number
}

export interface SearchHit {
  scope: string
  id: string
  /** 1-based: the order the API returned the hits in. */
  rank: number
  score: number
  /** score over the best score (0..1). */
  relevance: number
  /** Word overlap with the most similar hit ranked above (0..1). */
  redundancy: number
  redundantWithRank: number | null
  /** λ·relevance − (1−λ)·redundancy: what the hit was ranked on; never increases with rank. */
  mmrScore: number
  text: string
  timestamp: string
  conversationId: string | null
  components: ScoreComponents
}

export const SEARCH_HIT_FIELDS =
  'scope id rank score relevance redundancy redundantWithRank mmrScore text timestamp conversationId components { bm25 vector importance recency confidence context episode time speaker feedback cooccurrence decay }'

/** The conversation page of a memory's source, scrolled to the message when it is known. */
export function sourceHref(agentId: string, conversationId: string, messageId: string | null): string {
  const page = `/sessions/${encodeURIComponent(agentId)}/${encodeURIComponent(conversationId)}`
  return messageId ? `${page}#message-${encodeURIComponent(messageId)}` : page
}
