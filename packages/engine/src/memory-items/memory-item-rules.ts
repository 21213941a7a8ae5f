import {
  type ContextBudgets,
  ContextBudgetsSchema,
  type FieldIssue,
  type Limits,
  MEMORY_CATEGORIES,
  type MemoryCategory,
  type MemorySettings,
  type Metadata,
  parseMemorySettings,
  ValidationError,
  validateMetadata,
  validationErrorFromZod,
} from '@engram/core'
import { z } from 'zod'
import type { StoredMemorySettings } from '../ports/memory-items.ts'

// The limits of a memory's fields, and the validation every write and filter goes through.

export const MAX_TAGS = 20
export const MAX_TAG_CHARS = 64
export const MAX_USER_ID_CHARS = 128
export const MAX_SOURCE_ID_CHARS = 256
/** A substring filter longer than any memory can match nothing; bounded like a search query. */
export const MAX_FILTER_SEARCH_CHARS = 2_000
/** Spec 001's example contents are one sentence; 10k characters leaves room for a paragraph or a list. */
export const MAX_MEMORY_CHARS = 10_000

export interface MemoryItemInput {
  content: string
  category: MemoryCategory
  tags?: string[] | null
  importance?: number | null
  confidence?: number | null
  pinned?: boolean | null
  userId?: string | null
  sourceConversationId?: string | null
  sourceMessageId?: string | null
  validFrom?: Date | null
  validUntil?: Date | null
  metadata?: Metadata | null
}

export interface MemoryFilter {
  userId?: string | null
  categories?: MemoryCategory[] | null
  tags?: string[] | null
  minImportance?: number | null
  createdAfter?: Date | null
  createdBefore?: Date | null
  /** Valid at this time (default now). */
  asOf?: Date | null
  /** Superseded and expired items too. */
  includeSuperseded?: boolean | null
  pinned?: boolean | null
  search?: string | null
}

export interface StoredSettings {
  settings: MemorySettings
  contextBudgets: ContextBudgets
}

const unit = z.number().min(0).max(1)
const sourceId = z.string().min(1).max(MAX_SOURCE_ID_CHARS)
const MemoryFieldsSchema = z.object({
  content: z
    .string()
    .max(MAX_MEMORY_CHARS)
    .refine((s) => s.trim().length > 0, 'must not be empty'),
  category: z.enum(MEMORY_CATEGORIES),
  tags: z
    .array(
      z
        .string()
        .min(1)
        .max(MAX_TAG_CHARS)
        .regex(/^[^\s,]+$/, 'must be one word (no spaces or commas)'),
    )
    .max(MAX_TAGS),
  importance: unit,
  confidence: unit,
  pinned: z.boolean(),
  userId: z.string().min(1).max(MAX_USER_ID_CHARS).nullable(),
  sourceConversationId: sourceId.nullable(),
  sourceMessageId: sourceId.nullable(),
  validFrom: z.date(),
  validUntil: z.date().nullable(),
})

export type MemoryFields = z.infer<typeof MemoryFieldsSchema> & { metadata: Metadata }

/** Every field of a write at once, so one error names every problem. */
export function validateMemoryFields(
  input: Required<Omit<MemoryItemInput, 'metadata'>> & { metadata: Metadata },
  limits: Limits,
): MemoryFields {
  const parsed = MemoryFieldsSchema.safeParse(input)
  const issues: FieldIssue[] = parsed.success ? [] : validationErrorFromZod(parsed.error).issues
  if (input.content.length > MAX_MEMORY_CHARS) {
    // zod names the bound; say the length too.
    const issue = issues.find((i) => i.field === 'content')
    if (issue) issue.message = `must be at most ${MAX_MEMORY_CHARS} characters (got ${input.content.length})`
  }
  if (input.validUntil && input.validFrom && input.validUntil <= input.validFrom)
    issues.push({ field: 'validUntil', message: 'must be after validFrom' })
  issues.push(...validateMetadata(input.metadata ?? {}, 'metadata', limits))
  if (issues.length) throw new ValidationError(issues)
  return { ...(parsed.data as z.infer<typeof MemoryFieldsSchema>), metadata: input.metadata }
}

export function assertMemoryFilter(filter: MemoryFilter): void {
  const issues: FieldIssue[] = []
  if (filter.minImportance != null && !(filter.minImportance >= 0 && filter.minImportance <= 1))
    issues.push({ field: 'filter.minImportance', message: 'must be between 0 and 1', limit: '0..1' })
  if ((filter.tags?.length ?? 0) > MAX_TAGS)
    issues.push({ field: 'filter.tags', message: `at most ${MAX_TAGS} tags`, limit: MAX_TAGS })
  for (const [i, tag] of (filter.tags ?? []).entries())
    if (tag.length > MAX_TAG_CHARS)
      issues.push({
        field: `filter.tags.${i}`,
        message: `at most ${MAX_TAG_CHARS} characters`,
        limit: MAX_TAG_CHARS,
      })
  if ((filter.search?.length ?? 0) > MAX_FILTER_SEARCH_CHARS)
    issues.push({
      field: 'filter.search',
      message: `at most ${MAX_FILTER_SEARCH_CHARS} characters`,
      limit: MAX_FILTER_SEARCH_CHARS,
    })
  if ((filter.userId?.length ?? 0) > MAX_USER_ID_CHARS)
    issues.push({
      field: 'filter.userId',
      message: `at most ${MAX_USER_ID_CHARS} characters`,
      limit: MAX_USER_ID_CHARS,
    })
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter > filter.createdBefore)
    issues.push({ field: 'filter.createdAfter', message: 'must not be after filter.createdBefore' })
  if (issues.length) throw new ValidationError(issues)
}

/** Stored settings JSON back to an object; anything unreadable reads as nothing stored. */
export function safeJson(text: string): StoredMemorySettings {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as Record<string, Record<string, unknown>>) : {}
  } catch {
    return {}
  }
}

/** The settings in force: what is stored over the defaults. */
export function resolveStoredSettings(stored: StoredMemorySettings): StoredSettings {
  return {
    settings: parseMemorySettings(stored.settings ?? {}),
    contextBudgets: ContextBudgetsSchema.parse(stored.contextBudgets ?? {}),
  }
}

export function parseStoredSettings(text: string): StoredSettings {
  return resolveStoredSettings(safeJson(text))
}

export function dropNulls<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v != null)) as Partial<T>
}

/** Tags are stored as a JSON array; anything else reads as none. */
export function parseTags(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : []
  } catch {
    return []
  }
}
