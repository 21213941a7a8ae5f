import { contentWords, isPoolStorageAgent, NotFoundError } from '@engram/core'
import type {
  MemoryItemOrder,
  MemoryItemQuery,
  MemoryItemRepository,
  MemoryItemView,
  StoredMemorySettings,
} from '../ports/memory-items.ts'
import type { AgentRepository } from '../ports/repositories.ts'
import { SerialState } from './serial-state.ts'
import { containsIgnoringCase, hasTagIgnoringCase } from './text-match.ts'

interface State {
  items: Map<string, MemoryItemView>
  settings: Map<string, StoredMemorySettings>
  nextId: number
}

/**
 * Memory items in memory. Words shared with a write are content words (stop words aside) in
 * common, ranked by how many (SQLite ranks them with FTS5's bm25): the verification pipeline only
 * needs the candidates. No
 * vectors are kept here, so `figures` reports none.
 */
export class InMemoryMemoryItems {
  private readonly store = new SerialState<State>({ items: new Map(), settings: new Map(), nextId: 1 })
  readonly repository: MemoryItemRepository

  constructor(private readonly agents: AgentRepository) {
    this.repository = this.build()
  }

  forgetAgent(agentId: string): void {
    const { items, settings } = this.store.state
    for (const [id, item] of items) if (item.agentId === agentId) items.delete(id)
    settings.delete(agentId)
  }

  private build(): MemoryItemRepository {
    const items = () => this.store.state.items
    const owned = (agentId: string, id: string) => {
      const item = items().get(id)
      return item && item.agentId === agentId ? item : null
    }
    const require = (agentId: string, id: string) => {
      const item = owned(agentId, id)
      if (!item) throw new NotFoundError('MemoryItem', id)
      return item
    }
    const copy = (item: MemoryItemView): MemoryItemView => structuredClone(item)
    const validAt = (item: MemoryItemView, at: Date) =>
      item.validFrom <= at && (item.validUntil == null || item.validUntil > at)
    const matches = (agentId: string | null, q: MemoryItemQuery) => (item: MemoryItemView) =>
      (agentId == null ? !isPoolStorageAgent(item.agentId) : item.agentId === agentId) &&
      (!q.userId || item.userId === q.userId) &&
      (!q.categories?.length || q.categories.includes(item.category)) &&
      (q.minImportance == null || item.importance >= q.minImportance) &&
      (q.pinned == null || item.pinned === q.pinned) &&
      (!q.search || containsIgnoringCase(item.content, q.search)) &&
      (!q.createdAfter || item.createdAt >= q.createdAfter) &&
      (!q.createdBefore || item.createdAt <= q.createdBefore) &&
      (q.tags ?? []).every((tag) => hasTagIgnoringCase(item.tags, tag)) &&
      (q.validAt == null || validAt(item, q.validAt))
    const byId = (a: MemoryItemView, b: MemoryItemView) => Number(a.id) - Number(b.id)
    const repository: MemoryItemRepository = {
      transaction: (fn) => this.store.transaction(() => fn(repository)),
      settings: async (agentId) => structuredClone(this.store.state.settings.get(agentId) ?? {}),
      saveSettings: async (agentId, stored) => {
        if (!(await this.agents.find(agentId))) throw new NotFoundError('Agent', agentId)
        this.store.state.settings.set(agentId, structuredClone(stored))
      },
      find: async (agentId, id) => {
        const item = owned(agentId, id)
        return item ? copy(item) : null
      },
      recordAccess: async (agentId, ids, at) => {
        for (const id of new Set(ids)) {
          const item = owned(agentId, id)
          if (item) Object.assign(item, { accessCount: item.accessCount + 1, lastAccessedAt: at })
        }
        return ids.flatMap((id) => {
          const item = owned(agentId, id)
          return item ? [copy(item)] : []
        })
      },
      count: async (agentId, query) => [...items().values()].filter(matches(agentId, query)).length,
      page: async (agentId, query, order, offset, limit) =>
        [...items().values()]
          .filter(matches(agentId, query))
          .sort((a, b) => byOrder(order, a, b) || byId(b, a))
          .slice(offset, offset + limit)
          .map(copy),
      figures: async (agentId, at) => {
        const all = [...items().values()].filter((i) => i.agentId === agentId)
        const current = all.filter((i) => validAt(i, at))
        const byCategory = new Map<string, number>()
        for (const item of current) byCategory.set(item.category, (byCategory.get(item.category) ?? 0) + 1)
        return {
          total: all.length,
          current: current.length,
          pinned: current.filter((i) => i.pinned).length,
          byCategory,
          contentBytes: all.reduce(
            (sum, i) =>
              sum +
              Buffer.byteLength(i.content) +
              JSON.stringify(i.tags).length +
              JSON.stringify(i.metadata).length,
            0,
          ),
          vectorBytes: 0,
        }
      },
      sharingWords: async (agentId, text, limit) => {
        const words = contentWords(text)
        if (words.size === 0) return []
        return [...items().values()]
          .filter((i) => i.agentId === agentId)
          .map((i) => ({ id: i.id, shared: [...contentWords(i.content)].filter((w) => words.has(w)).length }))
          .filter((c) => c.shared > 0)
          .sort((a, b) => b.shared - a.shared || Number(a.id) - Number(b.id))
          .slice(0, limit)
          .map((c) => c.id)
      },
      currentAmong: async (agentId, userId, at, ids) => {
        const wanted = new Set(ids)
        return [...items().values()]
          .filter((i) => wanted.has(i.id) && i.agentId === agentId && i.userId === userId && validAt(i, at))
          .sort(byId)
          .map((i) => ({ id: i.id, content: i.content, category: i.category, createdAt: i.createdAt }))
      },
      create: async (agentId, input) => {
        if (!(await this.agents.find(agentId))) throw new NotFoundError('Agent', agentId)
        const { contentHash: _hash, ...fields } = input
        const item: MemoryItemView = {
          ...structuredClone(fields),
          id: String(this.store.state.nextId++),
          agentId,
          accessCount: 0,
          lastAccessedAt: null,
          supersededById: null,
          updatedAt: input.createdAt,
        }
        items().set(item.id, item)
        return copy(item)
      },
      supersede: async (agentId, id, byId, at) => {
        const item = require(agentId, id)
        Object.assign(item, { validUntil: at, supersededById: byId, updatedAt: at })
        return copy(item)
      },
      countCurrent: async (agentId, at) =>
        [...items().values()].filter((i) => i.agentId === agentId && validAt(i, at)).length,
      expireLeastValued: async (agentId, at, keepId, limit) => {
        const victims = [...items().values()]
          .filter((i) => i.agentId === agentId && validAt(i, at) && !i.pinned && i.id !== keepId)
          .sort(
            (a, b) =>
              a.importance - b.importance ||
              (a.lastAccessedAt?.getTime() ?? Number.NEGATIVE_INFINITY) -
                (b.lastAccessedAt?.getTime() ?? Number.NEGATIVE_INFINITY) ||
              a.createdAt.getTime() - b.createdAt.getTime(),
          )
          .slice(0, limit)
        for (const item of victims) Object.assign(item, { validUntil: at, updatedAt: at })
        return victims.sort(byId).map(copy)
      },
      update: async (agentId, id, changes) => {
        const item = require(agentId, id)
        const { contentHash: _hash, ...fields } = changes
        Object.assign(item, structuredClone(fields))
        return copy(item)
      },
      delete: async (agentId, id) => {
        require(agentId, id)
        items().delete(id)
        // An item it superseded points at nothing now, as the SQLite foreign key's SET NULL does.
        for (const other of items().values()) if (other.supersededById === id) other.supersededById = null
      },
      discardVectors: async () => {},
    }
    return repository
  }
}

/** Largest first, a missing time after every present one. */
function byOrder(order: MemoryItemOrder, a: MemoryItemView, b: MemoryItemView): number {
  const value = (item: MemoryItemView) => {
    const v = item[order]
    return v instanceof Date ? v.getTime() : (v ?? Number.NEGATIVE_INFINITY)
  }
  return value(b) - value(a)
}
