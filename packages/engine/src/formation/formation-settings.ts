import {
  type ProfileSettings,
  ProfileSettingsSchema,
  type SummarySettings,
  SummarySettingsSchema,
  ValidationError,
  validationErrorFromZod,
} from '@engram/core'
import type { ProfileService } from '../profile/profile-service.ts'
import type { SummaryService } from '../summaries/summary-service.ts'
import type { FormationService } from './formation-service.ts'

/** An agent's memory-formation settings as one object (issue 13 §5): the switch, summaries, profile. */
export interface MemoryFormationSettings {
  enabled: boolean
  summaries: SummarySettings
  profile: ProfileSettings
}

/** Changes to them; a part or field left out (or null) keeps its value. */
export interface MemoryFormationSettingsChanges {
  enabled?: boolean | null
  summaries?: { [K in keyof SummarySettings]?: SummarySettings[K] | null } | null
  profile?: { [K in keyof ProfileSettings]?: ProfileSettings[K] | null } | null
}

/** The fields given a value (null or left out: keep it). */
const given = <T extends Record<string, unknown>>(
  changes: T | null | undefined,
): { [K in keyof T]?: NonNullable<T[K]> } =>
  Object.fromEntries(Object.entries(changes ?? {}).filter(([, value]) => value != null)) as {
    [K in keyof T]?: NonNullable<T[K]>
  }

/**
 * The three services that keep a part of the settings each store it beside the memory settings;
 * this reads them as one and changes them as one, validated whole before anything is written, so
 * a value out of its limits in one part leaves every part as it was.
 */
export class FormationSettingsService {
  constructor(
    private readonly parts: {
      formation: Pick<FormationService, 'settings' | 'updateSettings'>
      summaries: Pick<SummaryService, 'settings' | 'updateSettings'>
      profiles: Pick<ProfileService, 'settings' | 'updateSettings'>
    },
  ) {}

  async get(agentId: string): Promise<MemoryFormationSettings> {
    const [formation, summaries, profile] = await Promise.all([
      this.parts.formation.settings(agentId),
      this.parts.summaries.settings(agentId),
      this.parts.profiles.settings(agentId),
    ])
    return { enabled: formation.enabled, summaries, profile }
  }

  async update(agentId: string, changes: MemoryFormationSettingsChanges): Promise<MemoryFormationSettings> {
    const current = await this.get(agentId)
    const summaries = given(changes.summaries)
    const profile = given(changes.profile)
    // Every part checked before any is written: the issues of all parts, each named by its field.
    const checks = [
      SummarySettingsSchema.safeParse({ ...current.summaries, ...summaries }),
      ProfileSettingsSchema.safeParse({ ...current.profile, ...profile }),
    ] as const
    const issues = checks.flatMap((check, index) =>
      check.error ? validationErrorFromZod(check.error, index === 0 ? 'summaries' : 'profile').issues : [],
    )
    if (issues.length > 0) throw new ValidationError(issues)
    if (Object.keys(summaries).length > 0) await this.parts.summaries.updateSettings(agentId, summaries)
    if (Object.keys(profile).length > 0) await this.parts.profiles.updateSettings(agentId, profile)
    if (changes.enabled != null && changes.enabled !== current.enabled)
      await this.parts.formation.updateSettings(agentId, { enabled: changes.enabled })
    return this.get(agentId)
  }
}
