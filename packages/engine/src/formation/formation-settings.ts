import { type ProfileSettings, type SummarySettings, ValidationError } from '@engram/core'
import type { MemoryItemRepository, StoredMemorySettings } from '../ports/memory-items.ts'
import type { ProfileService } from '../profile/profile-service.ts'
import type { SummaryService } from '../summaries/summary-service.ts'
import type { FormationService, FormationSettings, FormationSettingsChanges } from './formation-service.ts'

/**
 * An agent's memory-formation settings as one object (issue 13 §5): the switch, the extractor and
 * core model, summaries, profile.
 */
export interface MemoryFormationSettings {
  enabled: boolean
  extraction: FormationSettings['extraction']
  summaries: SummarySettings
  profile: ProfileSettings
}

/** Changes to them; a part or field left out (or null) keeps its value (a null model: the server's). */
export interface MemoryFormationSettingsChanges {
  enabled?: boolean | null
  extraction?: FormationSettingsChanges['extraction']
  summaries?: { [K in keyof SummarySettings]?: SummarySettings[K] | null } | null
  profile?: { [K in keyof ProfileSettings]?: ProfileSettings[K] | null } | null
}

/** Whether a part's changes give any field a value (a part of nulls changes nothing). */
const changesSomething = (changes: Record<string, unknown> | null | undefined) =>
  Object.values(changes ?? {}).some((value) => value != null)

/**
 * The three services that keep a part of the settings store it in the agent's one settings record
 * (beside the memory settings). This reads the record once, has each part merge and validate its
 * changes into it, and writes it once: a value out of its limits in one part, or a write that
 * fails, leaves every part as it was. Each part then applies what changed (the switch, retention).
 */
export class FormationSettingsService {
  constructor(
    private readonly deps: {
      store: Pick<MemoryItemRepository, 'settings' | 'saveSettings'>
      formation: Pick<FormationService, 'settings' | 'mergeSettings' | 'settingsSaved'>
      summaries: Pick<SummaryService, 'settings' | 'mergeSettings' | 'settingsSaved'>
      profiles: Pick<ProfileService, 'settings' | 'mergeSettings'>
    },
  ) {}

  async get(agentId: string): Promise<MemoryFormationSettings> {
    const [formation, summaries, profile] = await Promise.all([
      this.deps.formation.settings(agentId),
      this.deps.summaries.settings(agentId),
      this.deps.profiles.settings(agentId),
    ])
    return { enabled: formation.enabled, extraction: formation.extraction, summaries, profile }
  }

  async update(agentId: string, changes: MemoryFormationSettingsChanges): Promise<MemoryFormationSettings> {
    const original = await this.deps.store.settings(agentId)
    let stored: StoredMemorySettings = original
    const issues: ValidationError['issues'] = []
    // Every part checked before anything is written: the issues of all parts, each named by its field.
    const merge = <T>(
      part: (from: StoredMemorySettings) => { stored: StoredMemorySettings; settings: T },
    ) => {
      try {
        const merged = part(stored)
        stored = merged.stored
        return merged.settings
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error
        issues.push(...error.issues)
        return null
      }
    }
    const formationChanged = changes.enabled != null || changes.extraction != null
    const summariesChanged = changesSomething(changes.summaries)
    const profileChanged = changesSomething(changes.profile)
    const formation = formationChanged
      ? merge((from) =>
          this.deps.formation.mergeSettings(from, {
            enabled: changes.enabled,
            extraction: changes.extraction,
          }),
        )
      : null
    if (summariesChanged)
      merge((from) =>
        this.deps.summaries.mergeSettings(from, (changes.summaries ?? {}) as Partial<SummarySettings>),
      )
    if (profileChanged)
      merge((from) =>
        this.deps.profiles.mergeSettings(from, (changes.profile ?? {}) as Partial<ProfileSettings>),
      )
    if (issues.length > 0) throw new ValidationError(issues)
    if (stored !== original) await this.deps.store.saveSettings(agentId, stored)
    if (summariesChanged) await this.deps.summaries.settingsSaved(agentId)
    if (formation) await this.deps.formation.settingsSaved(agentId, formation)
    return this.get(agentId)
  }
}
