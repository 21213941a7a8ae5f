import type { z } from 'zod'
import { type Catalog, catalog, type OperationName, type ParsedInputOf } from './catalog.ts'
import { ERROR_CODES, type FieldIssue, type Result } from './errors.ts'

/** zod's issues as field issues, each with the bound it broke when zod or a rule recorded one. */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => {
    const raw = issue as { maximum?: unknown; minimum?: unknown; params?: { limit?: unknown } }
    const bound = raw.params?.limit ?? raw.maximum ?? raw.minimum
    return {
      field: issue.path.map(String).join('.') || 'input',
      message: issue.message,
      ...(typeof bound === 'number' || typeof bound === 'string'
        ? { limit: bound }
        : typeof bound === 'bigint'
          ? { limit: Number(bound) }
          : {}),
    }
  })
}

/**
 * Checks an operation's input against the catalog, as every door does before it acts: the same
 * limits as the API, answered the same way (VALIDATION with the field and the limit).
 */
export function parseInput<N extends OperationName>(name: N, input: unknown): Result<ParsedInputOf<N>> {
  const schema = (catalog as Catalog)[name].input as z.ZodType
  const parsed = schema.safeParse(input ?? {})
  if (parsed.success) return { ok: true, data: parsed.data as ParsedInputOf<N> }
  const issues = fieldIssues(parsed.error)
  return {
    ok: false,
    error: {
      code: ERROR_CODES.VALIDATION,
      message: issues.map((issue) => `${issue.field}: ${issue.message}`).join('; '),
      issues,
    },
  }
}
