import { interpretRememberThis, type MemoryCategory } from '@engram/core'
import type { MemoryFilter, MemoryItemInput } from '../memory-items/memory-item-rules.ts'
import type { SearchOptions, SearchScope, SearchStrategy } from '../search/search-types.ts'

/**
 * Requests as the doors take them (GraphQL's arguments, the catalog's inputs), turned into the use
 * cases' own inputs once, so the resolvers and the operations layer cannot read them differently.
 */

export interface RememberThisRequest {
  text: string
  category?: MemoryCategory | null
  importance?: number | null
  tags?: string[] | null
  userId?: string | null
  pinned?: boolean | null
  conversationId?: string | null
  messageId?: string | null
}

/**
 * "Remember that …": the statement without the request words, its category inferred unless given,
 * important by default (an explicit request), marked as coming this way.
 */
export function rememberThisMemory(request: RememberThisRequest): MemoryItemInput {
  const interpreted = interpretRememberThis(request.text)
  return {
    content: interpreted.content,
    category: request.category ?? interpreted.category,
    importance: request.importance ?? interpreted.importance,
    tags: request.tags,
    userId: request.userId,
    pinned: request.pinned,
    sourceConversationId: request.conversationId,
    sourceMessageId: request.messageId,
    metadata: { via: 'rememberThis' },
  }
}

export interface SearchRequest {
  scopes?: readonly string[] | null
  limit?: number | null
  conversationId?: string | null
  strategy?: string | null
  weights?: Record<string, number | null | undefined> | null
  threshold?: number | null
  mmrLambda?: number | null
  decay?: boolean | null
  contextTurns?: number | null
  mentionedTimes?: boolean | null
  windowDays?: number | null
  filters?: { conversationId?: string | null } | null
}

/**
 * A search request as the search service's options: the conversation named at the top or in the
 * filters, only the weights given (the rest keep their defaults), the memory filter and the time
 * range already in the domain's types (each door parses its own dates and enums).
 */
export function searchOptionsOf(
  request: SearchRequest,
  filters: { memoryFilter: MemoryFilter; since?: Date | null; until?: Date | null },
): SearchOptions {
  return {
    scopes: (request.scopes ?? null) as SearchScope[] | null,
    limit: request.limit,
    conversationId: request.conversationId ?? request.filters?.conversationId,
    strategy: (request.strategy ?? null) as SearchStrategy | null,
    weights: request.weights
      ? Object.fromEntries(Object.entries(request.weights).filter(([, v]) => v != null))
      : null,
    threshold: request.threshold,
    mmrLambda: request.mmrLambda,
    decay: request.decay,
    contextTurns: request.contextTurns,
    mentionedTimes: request.mentionedTimes,
    windowDays: request.windowDays,
    memoryFilter: filters.memoryFilter,
    since: filters.since,
    until: filters.until,
  }
}
