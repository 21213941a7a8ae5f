import { CONTEXT_SUMMARY_PREFIX, type StoredMessage } from '@engram/core'
import type { FullTextCollection } from '../ports/full-text.ts'
import type {
  MemoryItemFilter,
  MemoryUserActivity,
  RecalledKnowledge,
  RecalledMemoryItem,
  RecalledMessage,
  RecallSources,
  SpanTurn,
  SpeakerActivity,
  TurnBeside,
  TurnFilter,
  TurnSpan,
} from '../ports/recall-sources.ts'
import { containsIgnoringCase, hasTagIgnoringCase, startsWithIgnoringCase } from './text-match.ts'

interface HeldTurn {
  agentId: string
  conversationId: string
  message: StoredMessage
}

/** Ids are numeric strings, as the SQLite store's row ids: "after id N" and ties compare as numbers. */
const byTimeThenId = (a: StoredMessage, b: StoredMessage) =>
  a.timestamp.getTime() - b.timestamp.getTime() || Number(a.id) - Number(b.id)

function inSet(content: string, set: TurnFilter['set']): boolean {
  return startsWithIgnoringCase(content, CONTEXT_SUMMARY_PREFIX) === (set === 'summaries')
}

function passes(item: RecalledMemoryItem, filter: MemoryItemFilter): boolean {
  const asOf = filter.asOf.getTime()
  if (filter.userId && item.userId !== filter.userId) return false
  if (filter.categories?.length && !filter.categories.includes(item.category)) return false
  if (filter.minImportance != null && item.importance < filter.minImportance) return false
  if (filter.pinned != null && item.pinned !== filter.pinned) return false
  if (filter.search && !containsIgnoringCase(item.content, filter.search)) return false
  if (filter.createdAfter && item.createdAt < filter.createdAfter) return false
  if (filter.createdBefore && item.createdAt > filter.createdBefore) return false
  if (filter.tags?.some((tag) => !hasTagIgnoringCase(item.tags, tag))) return false
  if (!filter.includeSuperseded) {
    if (item.validFrom.getTime() > asOf) return false
    if (item.validUntil && item.validUntil.getTime() <= asOf) return false
  }
  return true
}

/**
 * The RecallSources port in memory: the rows search reads back, put in by the test (`add*`).
 * Turns are also what the summaries check and the dialogue reads see.
 */
export class InMemoryRecallSources implements RecallSources {
  private readonly sessions = new Map<string, { agentId: string; conversationId: string }>()
  private readonly turns = new Map<string, HeldTurn>()
  private readonly items = new Map<string, RecalledMemoryItem>()
  private readonly knowledgeRows = new Map<string, RecalledKnowledge>()

  addTurn(agentId: string, conversationId: string, message: StoredMessage): void {
    this.sessions.set(message.sessionId, { agentId, conversationId })
    this.turns.set(message.id, { agentId, conversationId, message })
  }

  addMemoryItem(item: RecalledMemoryItem): void {
    this.items.set(item.id, item)
  }

  addKnowledge(row: RecalledKnowledge): void {
    this.knowledgeRows.set(String(row.id), row)
  }

  private agentTurns(agentId: string): StoredMessage[] {
    return [...this.turns.values()].filter((t) => t.agentId === agentId).map((t) => t.message)
  }

  async speakersSince(agentId: string, afterMessageId: number): Promise<SpeakerActivity[]> {
    const bySpeaker = new Map<string | null, SpeakerActivity>()
    for (const m of this.agentTurns(agentId)) {
      if (Number(m.id) <= afterMessageId) continue
      const known = bySpeaker.get(m.speaker)
      bySpeaker.set(m.speaker, {
        speaker: m.speaker,
        newest: known?.newest && known.newest > m.timestamp ? known.newest : m.timestamp,
        topMessageId: Math.max(known?.topMessageId ?? 0, Number(m.id)),
      })
    }
    return [...bySpeaker.values()]
  }

  async memoryUsersSince(agentId: string, afterMemoryId: number): Promise<MemoryUserActivity[]> {
    const byUser = new Map<string, number>()
    for (const item of this.items.values())
      if (item.agentId === agentId && item.userId && Number(item.id) > afterMemoryId)
        byUser.set(item.userId, Math.max(byUser.get(item.userId) ?? 0, Number(item.id)))
    return [...byUser].map(([userId, topMemoryId]) => ({ userId, topMemoryId }))
  }

  async documentTexts(collection: FullTextCollection, ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>()
    for (const id of ids) {
      const text =
        collection === 'messages'
          ? this.turns.get(id)?.message.content
          : collection === 'memories'
            ? this.items.get(id)?.content
            : (() => {
                const row = this.knowledgeRows.get(id)
                return row ? `${row.key} ${row.value}` : undefined
              })()
      if (text !== undefined) out.set(id, text)
    }
    return out
  }

  async hasSummaries(agentId: string, sessionId: string | null): Promise<boolean> {
    return this.agentTurns(agentId).some(
      (m) => m.content.startsWith(CONTEXT_SUMMARY_PREFIX) && (!sessionId || m.sessionId === sessionId),
    )
  }

  async memoryItemIdsBy(
    agentId: string,
    order: 'recency' | 'importance',
    limit: number,
    asOf: Date,
  ): Promise<string[]> {
    const current = [...this.items.values()].filter((i) => i.agentId === agentId && passes(i, { asOf }))
    const newest = (a: RecalledMemoryItem, b: RecalledMemoryItem) =>
      b.createdAt.getTime() - a.createdAt.getTime()
    current.sort(
      order === 'recency'
        ? (a, b) => newest(a, b) || Number(b.id) - Number(a.id)
        : (a, b) => b.importance - a.importance || newest(a, b),
    )
    return current.slice(0, limit).map((i) => i.id)
  }

  async memoryItemIdsFromTurns(
    agentId: string,
    turnIds: readonly string[],
  ): Promise<{ memoryId: string; turnId: string }[]> {
    const wanted = new Set(turnIds)
    return [...this.items.values()]
      .filter((i) => i.agentId === agentId && i.sourceMessageId !== null && wanted.has(i.sourceMessageId))
      .map((i) => ({ memoryId: i.id, turnId: i.sourceMessageId as string }))
  }

  async hasMemoryItemsFromTurns(agentId: string): Promise<boolean> {
    return [...this.items.values()].some((i) => i.agentId === agentId && i.sourceMessageId !== null)
  }

  async knowledgeIdsBy(agentId: string, order: 'recency' | 'importance', limit: number): Promise<string[]> {
    const rows = [...this.knowledgeRows.values()].filter((k) => k.agentId === agentId)
    rows.sort(
      order === 'recency'
        ? (a, b) => b.updatedAt.getTime() - a.updatedAt.getTime()
        : (a, b) => b.confidence - a.confidence,
    )
    return rows.slice(0, limit).map((k) => String(k.id))
  }

  async newestMessageIds(agentId: string, set: TurnFilter['set'], limit: number): Promise<string[]> {
    return this.agentTurns(agentId)
      .filter((m) => inSet(m.content, set))
      .sort((a, b) => byTimeThenId(b, a))
      .slice(0, limit)
      .map((m) => m.id)
  }

  async memoryItems(
    agentId: string,
    ids: readonly string[],
    filter: MemoryItemFilter,
  ): Promise<RecalledMemoryItem[]> {
    return ids.flatMap((id) => {
      const item = this.items.get(id)
      return item && item.agentId === agentId && passes(item, filter) ? [item] : []
    })
  }

  async knowledge(agentId: string, ids: readonly string[]): Promise<RecalledKnowledge[]> {
    return ids.flatMap((id) => {
      const row = this.knowledgeRows.get(id)
      return row && row.agentId === agentId ? [row] : []
    })
  }

  async messages(agentId: string, ids: readonly string[], filter: TurnFilter): Promise<RecalledMessage[]> {
    return ids.flatMap((id) => {
      const turn = this.turns.get(id)
      if (!turn || turn.agentId !== agentId) return []
      const m = turn.message
      if (!inSet(m.content, filter.set)) return []
      if (filter.sessionId && m.sessionId !== filter.sessionId) return []
      if (filter.since && m.timestamp < filter.since) return []
      if (filter.until && m.timestamp > filter.until) return []
      return [{ message: m, conversationId: turn.conversationId }]
    })
  }

  async turnsBeside(turnIds: readonly string[], reach: number): Promise<TurnBeside[]> {
    const out: TurnBeside[] = []
    for (const origin of turnIds) {
      const turn = this.turns.get(origin)?.message
      if (!turn) continue
      const conversation = [...this.turns.values()]
        .map((t) => t.message)
        .filter((m) => m.sessionId === turn.sessionId)
        .sort(byTimeThenId)
      const at = conversation.findIndex((m) => m.id === origin)
      for (const m of conversation.slice(Math.max(0, at - reach), at))
        out.push({ origin, id: m.id, timestamp: m.timestamp, side: 'before' })
      for (const m of conversation.slice(at + 1, at + 1 + reach))
        out.push({ origin, id: m.id, timestamp: m.timestamp, side: 'after' })
    }
    return out
  }

  async turnSpans(spans: readonly TurnSpan[], limit: number): Promise<SpanTurn[]> {
    const out: SpanTurn[] = []
    for (const { sessionId, fromTurnId, toTurnId } of spans) {
      const from = this.turns.get(fromTurnId)?.message.timestamp
      const to = this.turns.get(toTurnId)?.message.timestamp
      if (!from || !to) continue
      out.push(
        ...[...this.turns.values()]
          .map((t) => t.message)
          .filter((m) => m.sessionId === sessionId && m.timestamp >= from && m.timestamp <= to)
          .sort(byTimeThenId)
          .slice(0, limit)
          .map((m) => ({ sessionId, id: m.id, timestamp: m.timestamp })),
      )
    }
    return out
  }

  async sessionIdOf(agentId: string, conversationId: string): Promise<string | null> {
    for (const [id, s] of this.sessions)
      if (s.agentId === agentId && s.conversationId === conversationId) return id
    return null
  }

  async recordKnowledgeRecall(agentId: string, ids: readonly number[], at: Date): Promise<void> {
    for (const id of ids) {
      const row = this.knowledgeRows.get(String(id))
      if (row && row.agentId === agentId)
        this.knowledgeRows.set(String(id), { ...row, useCount: row.useCount + 1, lastUsedAt: at })
    }
  }
}
