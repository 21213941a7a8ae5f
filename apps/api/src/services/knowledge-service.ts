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
import type { EmbeddingService } from '@engram/engine'
import type { Database, Knowledge as KnowledgeRow } from '@engram/store-sqlite'
import { parseRowId } from '@engram/store-sqlite'

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

/** The cross-session tier: unique per (agent, category, key), with confidence that learns. */
export class KnowledgeService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly limits: Limits,
    private readonly embeddings?: EmbeddingService,
  ) {}

  async store(scope: string, input: KnowledgeInput): Promise<KnowledgeRow> {
    this.assertValid(input)
    const row = await this.db.$transaction(async (tx) => {
      const where = { agentId_category_key: { agentId: scope, category: input.category, key: input.key } }
      const existing = await tx.knowledge.findUnique({ where })
      const confidence = confidenceOnStore(existing?.confidence ?? null, input.confidence ?? undefined)
      if (!existing) {
        return tx.knowledge.create({
          // createdAt from the engine's clock: decay measures time since creation with the same clock.
          data: {
            agentId: scope,
            category: input.category,
            key: input.key,
            value: input.value,
            confidence,
            createdAt: this.clock.now(),
          },
        })
      }
      return tx.knowledge.update({
        where: { id: existing.id },
        data: { value: input.value, confidence, storeCount: { increment: 1 } },
      })
    })
    // Embedded off the request path (a job that finds the vector current does nothing).
    await this.embeddings?.enqueue(scope, 'knowledge', [row.id])
    return row
  }

  async recordUse(scope: string, id: string): Promise<KnowledgeRow> {
    const item = await this.get(scope, id)
    return this.db.knowledge.update({
      where: { id: item.id },
      data: {
        confidence: confidenceOnUse(item.confidence),
        useCount: { increment: 1 },
        lastUsedAt: this.clock.now(),
      },
    })
  }

  async update(scope: string, id: string, changes: Partial<KnowledgeInput>): Promise<KnowledgeRow> {
    const item = await this.get(scope, id)
    const next = {
      category: changes.category ?? (item.category as KnowledgeCategory),
      key: changes.key ?? item.key,
      value: changes.value ?? item.value,
      confidence: changes.confidence ?? item.confidence,
    }
    this.assertValid(next)
    const row = await this.db.$transaction(async (tx) => {
      const clash = await tx.knowledge.findFirst({
        where: { agentId: scope, category: next.category, key: next.key, id: { not: item.id } },
      })
      if (clash) {
        throw new ValidationError([
          {
            field: 'key',
            message: `knowledge "${next.key}" already exists in ${next.category} (id ${clash.id})`,
          },
        ])
      }
      return tx.knowledge.update({ where: { id: item.id }, data: next })
    })
    if (row.key !== item.key || row.value !== item.value)
      await this.embeddings?.enqueue(scope, 'knowledge', [row.id])
    return row
  }

  async delete(scope: string, id: string): Promise<KnowledgeRow> {
    const item = await this.get(scope, id)
    await this.db.knowledge.delete({ where: { id: item.id } })
    return item
  }

  async get(scope: string, id: string): Promise<KnowledgeRow> {
    const rowId = parseRowId(id)
    const row =
      rowId == null ? null : await this.db.knowledge.findFirst({ where: { id: rowId, agentId: scope } })
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
    const rowIds = ids.map((id) => parseRowId(id))
    const bad = rowIds.findIndex((id) => id == null)
    if (bad >= 0) throw new NotFoundError('Knowledge', ids[bad] as string)
    return this.db.$transaction(async (tx) => {
      const where = { id: { in: rowIds as number[] }, ...(scope ? { agentId: scope } : {}) }
      const found = await tx.knowledge.findMany({ where, select: { id: true } })
      if (found.length !== new Set(rowIds).size) {
        const missing = ids.find((id) => !found.some((f) => String(f.id) === id)) as string
        throw new NotFoundError('Knowledge', missing)
      }
      const { count } = await tx.knowledge.deleteMany({ where })
      return { deletedCount: count }
    })
  }

  where(scope: string | null, filter: KnowledgeFilter) {
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
      ...(scope ? { agentId: scope } : {}),
      ...(filter.category ? { category: filter.category } : {}),
      ...(filter.minConfidence != null ? { confidence: { gte: filter.minConfidence } } : {}),
      ...(search ? { OR: [{ key: { contains: search } }, { value: { contains: search } }] } : {}),
    }
  }

  /** Spec data flow, step 10: the knowledge that bears on a domain or a piece of text. */
  async relevant(scope: string, text: string, limit: number, minConfidence: number) {
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
    const rows = await this.db.knowledge.findMany({
      where: { agentId: scope, confidence: { gte: minConfidence } },
    })
    const byId = new Map(rows.map((row) => [String(row.id), row]))
    return rankKnowledge(
      rows.map((row) => ({ ...row, id: String(row.id), category: row.category as KnowledgeCategory })),
      text,
      { limit, minConfidence },
    ).map((match) => ({
      knowledge: byId.get(match.item.id) as KnowledgeRow,
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
