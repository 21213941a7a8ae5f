import {
  compilePrivacyPatterns,
  guardTexts,
  type Metadata,
  PRIVACY_MODES,
  type PrivacyMode,
  type PrivacyPattern,
  ValidationError,
} from '@engram/core'
import { type Database, directSqlite } from '../db/client.ts'

export interface StoredPrivacyPolicy {
  mode: PrivacyMode
  patterns: PrivacyPattern[]
}

/** Applies each agent's sensitive-data policy (spec 001) to everything written for it. */
export class PrivacyService {
  constructor(private readonly db: Database) {}

  async policy(scope: string): Promise<StoredPrivacyPolicy> {
    // Read on every write: a prepared statement rather than a Prisma query.
    const direct = directSqlite(this.db)
    const agent = direct
      ? await direct.get<{ privacyMode: string; privacyPatterns: string }>(
          `SELECT "privacyMode", "privacyPatterns" FROM "Agent" WHERE "id" = ?`,
          scope,
        )
      : await this.db.agent.findUnique({
          where: { id: scope },
          select: { privacyMode: true, privacyPatterns: true },
        })
    return parsePolicy(agent?.privacyMode, agent?.privacyPatterns)
  }

  async setPolicy(
    scope: string,
    mode: PrivacyMode,
    patterns: PrivacyPattern[],
  ): Promise<StoredPrivacyPolicy> {
    if (!(PRIVACY_MODES as readonly string[]).includes(mode)) {
      throw new ValidationError([{ field: 'mode', message: `must be one of ${PRIVACY_MODES.join(', ')}` }])
    }
    compilePrivacyPatterns(patterns)
    await this.db.agent.update({
      where: { id: scope },
      data: { privacyMode: mode, privacyPatterns: JSON.stringify(patterns) },
    })
    return { mode, patterns }
  }

  /**
   * Guards one write: the texts and every string inside the metadata objects, all at once, so a
   * rejection names every offending field and nothing is stored. Returns the texts and metadata
   * to store (redacted where the policy says so).
   */
  async guard(
    scope: string,
    texts: { field: string; text: string }[],
    metadata: { field: string; value: Metadata | null | undefined }[] = [],
  ): Promise<{ texts: string[]; metadata: (Metadata | null | undefined)[] }> {
    const stored = await this.policy(scope)
    if (stored.mode === 'allow')
      return { texts: texts.map((t) => t.text), metadata: metadata.map((m) => m.value) }
    const leaves: { field: string; text: string }[] = []
    const collect = (value: unknown, field: string) => {
      if (typeof value === 'string') leaves.push({ field, text: value })
      else if (Array.isArray(value)) for (const [i, v] of value.entries()) collect(v, `${field}.${i}`)
      else if (value && typeof value === 'object')
        for (const [k, v] of Object.entries(value)) collect(v, `${field}.${k}`)
    }
    for (const m of metadata) collect(m.value, m.field)
    const guarded = guardTexts([...texts, ...leaves], {
      mode: stored.mode,
      patterns: compilePrivacyPatterns(stored.patterns),
    })
    const replacements = new Map(leaves.map((leaf, i) => [leaf.field, guarded[texts.length + i] as string]))
    const rebuild = (value: unknown, field: string): unknown => {
      if (typeof value === 'string') return replacements.get(field) ?? value
      if (Array.isArray(value)) return value.map((v, i) => rebuild(v, `${field}.${i}`))
      if (value && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebuild(v, `${field}.${k}`)]))
      }
      return value
    }
    return {
      texts: guarded.slice(0, texts.length),
      metadata: metadata.map((m) => (m.value ? (rebuild(m.value, m.field) as Metadata) : m.value)),
    }
  }
}

function parsePolicy(mode: string | undefined, patterns: string | undefined): StoredPrivacyPolicy {
  const safeMode = (PRIVACY_MODES as readonly string[]).includes(mode ?? '')
    ? (mode as PrivacyMode)
    : 'redact'
  try {
    const parsed = JSON.parse(patterns ?? '[]') as PrivacyPattern[]
    return { mode: safeMode, patterns: Array.isArray(parsed) ? parsed : [] }
  } catch {
    return { mode: safeMode, patterns: [] }
  }
}
