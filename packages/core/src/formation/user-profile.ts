import { z } from 'zod'
import { parseWith } from '../errors.ts'
import type { MemoryEntryType } from '../memory/memory-item.ts'

/** Issue 13 §4's numbers (spec 003 layer 1). */
export const ProfileSettingsSchema = z.object({
  /** The profile is rebuilt after this many new profile contributions. */
  profileRegenerateThreshold: z.number().int().min(1).max(100).default(10),
  profileMaxTokens: z.number().int().min(100).max(50_000).default(2_000),
})
export type ProfileSettings = z.infer<typeof ProfileSettingsSchema>
export const DEFAULT_PROFILE_SETTINGS: ProfileSettings = ProfileSettingsSchema.parse({})

export function parseProfileSettings(input: unknown): ProfileSettings {
  return parseWith(ProfileSettingsSchema, input, 'profile')
}

export function profileRegenerationDue(
  contributionsSinceLastVersion: number,
  settings: ProfileSettings = DEFAULT_PROFILE_SETTINGS,
): boolean {
  return contributionsSinceLastVersion >= settings.profileRegenerateThreshold
}

export interface ProfileMemory {
  id: string
  type: MemoryEntryType
  content: string
  importance: number
  confidence: number
  /** Newer wins a tie: a profile says who the user is now. */
  updatedAt: Date
}

export interface ProfileOverride {
  id: string
  content: string
}

/** Sections in the order a reader wants them; decisions and corrections shape the others, not the profile. */
const SECTIONS: { title: string; types: MemoryEntryType[] }[] = [
  { title: 'About', types: ['fact'] },
  { title: 'Preferences', types: ['preference'] },
  { title: 'Skills', types: ['skill'] },
  { title: 'Relationships', types: ['relationship'] },
  { title: 'Plans', types: ['commitment'] },
]

export interface BuiltProfile {
  text: string
  tokens: number
  /** The memories the profile was built from: deleting one of them means rebuilding the profile. */
  sourceMemoryIds: string[]
  overrideIds: string[]
}

/**
 * The extractive profile (issue 13 §4, no model): user overrides first, always and whole, then the
 * profile memories by section, each section by importance, confidence and recency, until
 * `maxTokens`. Overrides are never dropped for memories; when overrides alone pass the budget
 * they are still all kept (the user pinned them), and no memory is added.
 */
export function buildExtractiveProfile(
  overrides: readonly ProfileOverride[],
  memories: readonly ProfileMemory[],
  options: { maxTokens: number; countTokens: (text: string) => number },
): BuiltProfile {
  const lines: string[] = []
  let tokens = 0
  const add = (line: string) => {
    lines.push(line)
    tokens += options.countTokens(`${line}\n`)
  }
  if (overrides.length > 0) {
    add('## Pinned')
    for (const override of overrides) add(`- ${override.content}`)
  }
  const used: string[] = []
  const seen = new Set(overrides.map((override) => override.content.trim().toLowerCase()))
  for (const section of SECTIONS) {
    const candidates = memories
      .filter(
        (memory) => section.types.includes(memory.type) && !seen.has(memory.content.trim().toLowerCase()),
      )
      .sort(
        (a, b) =>
          b.importance - a.importance ||
          b.confidence - a.confidence ||
          b.updatedAt.getTime() - a.updatedAt.getTime() ||
          a.id.localeCompare(b.id),
      )
    let headed = false
    for (const memory of candidates) {
      const heading = headed ? 0 : options.countTokens(`## ${section.title}\n`)
      const line = `- ${memory.content}`
      if (tokens + heading + options.countTokens(`${line}\n`) > options.maxTokens) continue
      if (!headed) {
        add(`## ${section.title}`)
        headed = true
      }
      add(line)
      used.push(memory.id)
      seen.add(memory.content.trim().toLowerCase())
    }
  }
  return { text: lines.join('\n'), tokens, sourceMemoryIds: used, overrideIds: overrides.map((o) => o.id) }
}

export interface ProfileDiff {
  added: string[]
  removed: string[]
  unchanged: number
}

/** Line diff of two profile versions (the dashboard's "versions with a diff"); headings are not lines of content. */
export function diffProfiles(previous: string, next: string): ProfileDiff {
  const lines = (text: string) =>
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.length > 0 && !line.startsWith('## '))
  const before = new Set(lines(previous))
  const after = new Set(lines(next))
  return {
    added: [...after].filter((line) => !before.has(line)),
    removed: [...before].filter((line) => !after.has(line)),
    unchanged: [...after].filter((line) => before.has(line)).length,
  }
}
