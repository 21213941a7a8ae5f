import {
  type FieldIssue,
  type GraphLimits,
  normalizeEntityName,
  normalizeRelation,
  ValidationError,
} from '@engram/core'

/**
 * The checks every graph operation puts its input through (issue 15): depth, result size, names,
 * aliases, summaries, relations and validity, each refused with a ValidationError naming the field
 * and the limit, from the configured graph limits.
 */
export class GraphInputRules {
  constructor(private readonly limits: GraphLimits) {}

  depthOf(depth: number | null | undefined, field: string): number {
    const value = depth ?? this.limits.defaultDepth
    if (!Number.isInteger(value) || value < 1 || value > this.limits.maxDepth)
      throw new ValidationError([
        {
          field,
          message: `must be a whole number from 1 to ${this.limits.maxDepth}`,
          limit: this.limits.maxDepth,
        },
      ])
    return value
  }

  resultSize(size: number | null | undefined, field: string): number {
    const value = size ?? this.limits.defaultResultSize
    if (!Number.isInteger(value) || value < 1 || value > this.limits.maxResultSize)
      throw new ValidationError([
        {
          field,
          message: `must be a whole number from 1 to ${this.limits.maxResultSize}`,
          limit: this.limits.maxResultSize,
        },
      ])
    return value
  }

  tooMany(field: string, limit: number, what?: string): ValidationError {
    return new ValidationError([
      { field, message: `${what ? `${what}: ` : ''}at most ${limit} allowed`, limit },
    ])
  }

  entityNameOf(name: string, field: string): string {
    const trimmed = name.trim()
    const issues: FieldIssue[] = []
    if (trimmed.length > this.limits.maxEntityNameChars)
      issues.push({
        field,
        message: `must be at most ${this.limits.maxEntityNameChars} characters`,
        limit: this.limits.maxEntityNameChars,
      })
    else if (normalizeEntityName(trimmed).length === 0)
      issues.push({ field, message: 'must contain a letter or a digit', limit: 1 })
    if (issues.length > 0) throw new ValidationError(issues)
    return trimmed
  }

  aliasesOf(aliases: readonly string[], name: string): string[] {
    if (aliases.length > this.limits.maxAliasesPerEntity)
      throw this.tooMany('aliases', this.limits.maxAliasesPerEntity)
    return uniqueNames(
      aliases.map((a, i) => this.entityNameOf(a, `aliases.${i}`)),
      name,
    )
  }

  summaryOf(summary: string | null): string | null {
    if (summary == null) return null
    if (summary.length > this.limits.maxEntitySummaryChars)
      throw new ValidationError([
        {
          field: 'summary',
          message: `must be at most ${this.limits.maxEntitySummaryChars} characters`,
          limit: this.limits.maxEntitySummaryChars,
        },
      ])
    return summary.trim().length > 0 ? summary : null
  }

  relationOf(relation: string, field: string): string {
    const normalized = normalizeRelation(relation)
    if (relation.length > this.limits.maxRelationChars)
      throw new ValidationError([
        {
          field,
          message: `must be at most ${this.limits.maxRelationChars} characters`,
          limit: this.limits.maxRelationChars,
        },
      ])
    if (normalized.length === 0)
      throw new ValidationError([{ field, message: 'must contain a letter or a digit', limit: 1 }])
    return normalized
  }

  assertValidity(validFrom: Date | null, validUntil: Date | null): void {
    if (validFrom && validUntil && validUntil <= validFrom)
      throw new ValidationError([{ field: 'validUntil', message: 'must be after validFrom' }])
  }
}

/** Names deduplicated by their normalised form, without the canonical name. */
export function uniqueNames(names: readonly string[], canonical: string): string[] {
  const seen = new Set([normalizeEntityName(canonical)])
  return names.filter((n) => {
    const key = normalizeEntityName(n)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
