import {
  type Clock,
  confidenceOnStore,
  confidenceOnUse,
  type FieldIssue,
  KNOWLEDGE_CATEGORIES,
  type KnowledgeCategory,
  type Limits,
  NotFoundError,
  rankKnowledge,
  ValidationError,
} from '@engram/core'
import type {
  KnowledgeOrder,
  KnowledgeQuery,
  KnowledgeRecord,
  KnowledgeRepository,
} from '../ports/knowledge.ts'
import type { KnowledgeEmbeddings } from './collaborators.ts'

export interface KnowledgeInput {
  category: KnowledgeCategory
  key: string
  value: string
  confidence?: number | null
}

export interface KnowledgeFilter {
  category?: KnowledgeCategory | null
  search?: string | null
  minConfidence?: number | null
}

export interface KnowledgeMatch {
  knowledge: KnowledgeRecord
  score: number
  matchedTerms: string[]
}

/** The cross-session tier: unique per (agent, category, key), with confidence that learns. */
export class KnowledgeService {
  constructor(
    private readonly facts: KnowledgeRepository,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly embeddings?: KnowledgeEmbeddings,
  ) {}

  async store(scope: string, input: KnowledgeInput): Promise<KnowledgeRecord> {
    this.assertValid(input)
    const row = await this.facts.transaction(async (facts) => {
      const existing = await facts.findByKey(scope, input.category, input.key)
      const confidence = confidenceOnStore(existing?.confidence ?? null, input.confidence ?? undefined)
      if (!existing) {
        return facts.create(scope, {
          category: input.category,
          key: input.key,
          value: input.value,
          confidence,
          createdAt: this.clock.now(),
        })
      }
      return facts.restore(scope, existing.id, input.value, confidence)
    })
    // Embedded off the request path (a job that finds the vector current does nothing).
    await this.embeddings?.enqueue(scope, 'knowledge', [Number(row.id)])
    return row
  }

  async recordUse(scope: string, id: string): Promise<KnowledgeRecord> {
    const item = await this.get(scope, id)
    return this.facts.recordUse(scope, item.id, confidenceOnUse(item.confidence), this.clock.now())
  }

  async update(scope: string, id: string, changes: Partial<KnowledgeInput>): Promise<KnowledgeRecord> {
    const item = await this.get(scope, id)
    const next = {
      category: changes.category ?? item.category,
      key: changes.key ?? item.key,
      value: changes.value ?? item.value,
      confidence: changes.confidence ?? item.confidence,
    }
    this.assertValid(next)
    const row = await this.facts.transaction(async (facts) => {
      const clash = await facts.findByKey(scope, next.category, next.key)
      if (clash && clash.id !== item.id) {
        throw new ValidationError([
          {
            field: 'key',
            message: `knowledge "${next.key}" already exists in ${next.category} (id ${clash.id})`,
          },
        ])
      }
      return facts.update(scope, item.id, next)
    })
    if (row.key !== item.key || row.value !== item.value)
      await this.embeddings?.enqueue(scope, 'knowledge', [Number(row.id)])
    return row
  }

  async delete(scope: string, id: string): Promise<KnowledgeRecord> {
    const item = await this.get(scope, id)
    await this.facts.delete(scope, item.id)
    return item
  }

  async get(scope: string, id: string): Promise<KnowledgeRecord> {
    const row = await this.facts.find(scope, id)
    if (!row) throw new NotFoundError('Knowledge', id)
    return row
  }

  /** Deletes all the given facts in one transaction, or none if any is not in scope. */
  async deleteMany(scope: string | null, ids: string[]): Promise<{ deletedCount: number }> {
    if (ids.length === 0 || ids.length > this.limits.maxPageSize) {
      throw new ValidationError([
        {
          field: 'ids',
          message: `must name 1 to ${this.limits.maxPageSize} facts`,
          limit: this.limits.maxPageSize,
        },
      ])
    }
    const bad = ids.findIndex((id) => !isRowId(id))
    if (bad >= 0) throw new NotFoundError('Knowledge', ids[bad] as string)
    return this.facts.transaction(async (facts) => {
      const found = new Set(await facts.existing(scope, ids))
      if (found.size !== new Set(ids.map(Number)).size) {
        const missing = ids.find((id) => !found.has(String(Number(id)))) as string
        throw new NotFoundError('Knowledge', missing)
      }
      return { deletedCount: await facts.deleteMany(scope, ids) }
    })
  }

  /** The list's query, validated (a search longer than any key or value can match nothing useful). */
  query(filter: KnowledgeFilter): KnowledgeQuery {
    const search = filter.search?.trim()
    if (search && search.length > this.limits.maxKnowledgeKeyChars) {
      throw new ValidationError([
        {
          field: 'filter.search',
          message: `must be at most ${this.limits.maxKnowledgeKeyChars} characters`,
          limit: this.limits.maxKnowledgeKeyChars,
        },
      ])
    }
    return {
      category: filter.category || null,
      minConfidence: filter.minConfidence ?? null,
      search: search || null,
    }
  }

  /** One page of the agent's facts (every agent's for a null scope) and how many match in all. */
  async list(
    scope: string | null,
    filter: KnowledgeFilter,
    order: KnowledgeOrder,
  ): Promise<{
    totalCount: number
    page: (offset: number, limit: number) => Promise<KnowledgeRecord[]>
  }> {
    const query = this.query(filter)
    return {
      totalCount: await this.facts.count(scope, query),
      page: (offset, limit) => this.facts.page(scope, query, order, offset, limit),
    }
  }

  /** Spec data flow, step 10: the knowledge that bears on a domain or a piece of text. */
  async relevant(
    scope: string,
    text: string,
    limit: number,
    minConfidence: number,
  ): Promise<KnowledgeMatch[]> {
    const issues: FieldIssue[] = []
    if (text.trim().length === 0) issues.push({ field: 'text', message: 'must not be empty', limit: 1 })
    if (text.length > this.limits.maxContentChars) {
      issues.push({
        field: 'text',
        message: `must be at most ${this.limits.maxContentChars} characters`,
        limit: this.limits.maxContentChars,
      })
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > this.limits.maxSearchLimit) {
      issues.push({
        field: 'limit',
        message: `must be an integer from 1 to ${this.limits.maxSearchLimit}`,
        limit: this.limits.maxSearchLimit,
      })
    }
    if (issues.length > 0) throw new ValidationError(issues)
    const rows = await this.facts.confident(scope, minConfidence)
    const byId = new Map(rows.map((row) => [row.id, row]))
    return rankKnowledge(rows, text, { limit, minConfidence }).map((match) => ({
      knowledge: byId.get(match.item.id) as KnowledgeRecord,
      score: match.score,
      matchedTerms: match.matchedTerms,
    }))
  }

  private assertValid(input: {
    category: string
    key: string
    value: string
    confidence?: number | null
  }): void {
    const issues: FieldIssue[] = []
    if (!(KNOWLEDGE_CATEGORIES as readonly string[]).includes(input.category)) {
      issues.push({ field: 'category', message: `must be one of ${KNOWLEDGE_CATEGORIES.join(', ')}` })
    }
    const key = input.key.trim()
    if (key.length === 0 || input.key.length > this.limits.maxKnowledgeKeyChars) {
      issues.push({
        field: 'key',
        message: `must be 1 to ${this.limits.maxKnowledgeKeyChars} characters`,
        limit: this.limits.maxKnowledgeKeyChars,
      })
    }
    if (input.value.length === 0 || input.value.length > this.limits.maxKnowledgeValueChars) {
      issues.push({
        field: 'value',
        message: `must be 1 to ${this.limits.maxKnowledgeValueChars} characters`,
        limit: this.limits.maxKnowledgeValueChars,
      })
    }
    if (input.confidence != null && !(input.confidence >= 0 && input.confidence <= 1)) {
      issues.push({ field: 'confidence', message: 'must be between 0.0 and 1.0', limit: '0..1' })
    }
    if (issues.length > 0) throw new ValidationError(issues)
  }
}

/** The ids facts are stored under travel as decimal strings; anything else names no fact. */
function isRowId(id: string): boolean {
  return /^[1-9]\d{0,15}$/.test(id) && Number.isSafeInteger(Number(id))
}
