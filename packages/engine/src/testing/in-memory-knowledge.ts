import { NotFoundError, ValidationError } from '@engram/core'
import type {
  KnowledgeOrder,
  KnowledgeQuery,
  KnowledgeRecord,
  KnowledgeRepository,
} from '../ports/knowledge.ts'
import type { AgentRepository } from '../ports/repositories.ts'
import { SerialState } from './serial-state.ts'
import { containsIgnoringCase } from './text-match.ts'

interface State {
  facts: Map<string, KnowledgeRecord>
  nextId: number
}

/** The knowledge tier in memory: unique per (agent, category, key) as the SQLite index makes it. */
export class InMemoryKnowledge {
  private readonly store = new SerialState<State>({ facts: new Map(), nextId: 1 })
  readonly repository: KnowledgeRepository

  constructor(
    private readonly agents: AgentRepository,
    private readonly now: () => Date,
  ) {
    this.repository = this.build()
  }

  forgetAgent(agentId: string): void {
    for (const [id, fact] of this.store.state.facts)
      if (fact.agentId === agentId) this.store.state.facts.delete(id)
  }

  private build(): KnowledgeRepository {
    const facts = () => this.store.state.facts
    const owned = (agentId: string | null, id: string) => {
      const fact = facts().get(id)
      return fact && (agentId == null || fact.agentId === agentId) ? fact : null
    }
    const require = (agentId: string, id: string) => {
      const fact = owned(agentId, id)
      if (!fact) throw new NotFoundError('Knowledge', id)
      return fact
    }
    const matches = (agentId: string | null, query: KnowledgeQuery) => (fact: KnowledgeRecord) =>
      (agentId == null || fact.agentId === agentId) &&
      (!query.category || fact.category === query.category) &&
      (query.minConfidence == null || fact.confidence >= query.minConfidence) &&
      (!query.search ||
        containsIgnoringCase(fact.key, query.search) ||
        containsIgnoringCase(fact.value, query.search))
    const copy = (fact: KnowledgeRecord): KnowledgeRecord => ({ ...fact })
    const repository: KnowledgeRepository = {
      transaction: (fn) => this.store.transaction(() => fn(repository)),
      find: async (agentId, id) => {
        const fact = owned(agentId, id)
        return fact ? copy(fact) : null
      },
      findByKey: async (agentId, category, key) => {
        for (const fact of facts().values())
          if (fact.agentId === agentId && fact.category === category && fact.key === key) return copy(fact)
        return null
      },
      create: async (agentId, input) => {
        if (!(await this.agents.find(agentId))) throw new NotFoundError('Agent', agentId)
        if (await repository.findByKey(agentId, input.category, input.key))
          throw new ValidationError([{ field: 'key', message: 'already exists' }])
        const fact: KnowledgeRecord = {
          id: String(this.store.state.nextId++),
          agentId,
          ...input,
          storeCount: 1,
          useCount: 0,
          lastUsedAt: null,
          lastDecayAt: null,
          updatedAt: this.now(),
        }
        facts().set(fact.id, fact)
        return copy(fact)
      },
      restore: async (agentId, id, value, confidence) => {
        const fact = require(agentId, id)
        Object.assign(fact, { value, confidence, storeCount: fact.storeCount + 1, updatedAt: this.now() })
        return copy(fact)
      },
      recordUse: async (agentId, id, confidence, at) => {
        const fact = require(agentId, id)
        Object.assign(fact, {
          confidence,
          useCount: fact.useCount + 1,
          lastUsedAt: at,
          updatedAt: this.now(),
        })
        return copy(fact)
      },
      update: async (agentId, id, changes) => {
        const fact = require(agentId, id)
        const category = changes.category ?? fact.category
        const key = changes.key ?? fact.key
        const clash = await repository.findByKey(agentId, category, key)
        if (clash && clash.id !== id) throw new ValidationError([{ field: 'key', message: 'already exists' }])
        Object.assign(fact, changes, { updatedAt: this.now() })
        return copy(fact)
      },
      delete: async (agentId, id) => {
        require(agentId, id)
        facts().delete(id)
      },
      existing: async (agentId, ids) => [...new Set(ids)].filter((id) => owned(agentId, id)),
      deleteMany: async (agentId, ids) => {
        let deleted = 0
        for (const id of new Set(ids))
          if (owned(agentId, id)) {
            facts().delete(id)
            deleted++
          }
        return deleted
      },
      confident: async (agentId, minConfidence) =>
        [...facts().values()]
          .filter((f) => f.agentId === agentId && f.confidence >= minConfidence)
          .sort((a, b) => Number(a.id) - Number(b.id))
          .map(copy),
      count: async (agentId, query) => [...facts().values()].filter(matches(agentId, query)).length,
      page: async (agentId, query, order, offset, limit) =>
        [...facts().values()]
          .filter(matches(agentId, query))
          .sort((a, b) => byOrder(order, a, b) || Number(a.id) - Number(b.id))
          .slice(offset, offset + limit)
          .map(copy),
    }
    return repository
  }
}

/** Largest first, a missing time after every present one. */
function byOrder(order: KnowledgeOrder, a: KnowledgeRecord, b: KnowledgeRecord): number {
  const value = (f: KnowledgeRecord) => {
    const v = f[order]
    return v instanceof Date ? v.getTime() : (v ?? Number.NEGATIVE_INFINITY)
  }
  return value(b) - value(a)
}
