import { describe, expect, it } from 'vitest'
import {
  FORMATION_SETTING_GROUPS,
  FORMATION_SETTINGS,
  FORMATION_SETTINGS_FIELDS,
  type FormationSettings,
  settingField,
  settingValue,
} from './formation'

const SETTINGS: FormationSettings = {
  enabled: true,
  summaries: {
    strategy: 'EXTRACTIVE',
    summaryDebounceSeconds: 60,
    summaryRetentionDays: 7,
    summarizationThresholdTokens: 50_000,
    summaryMaxTokens: 400,
  },
  profile: { profileRegenerateThreshold: 10, profileMaxTokens: 2_000 },
  extraction: { extractor: 'LLM', model: 'llama3.1:8b' },
}

describe('the formation settings tables', () => {
  it('name each field by its path in the settings input, as the API names an issue', () => {
    expect(FORMATION_SETTINGS.map(settingField)).toEqual([
      'extraction.extractor',
      'extraction.model',
      'summaries.strategy',
      'summaries.summaryDebounceSeconds',
      'summaries.summaryRetentionDays',
      'summaries.summarizationThresholdTokens',
      'summaries.summaryMaxTokens',
      'profile.profileRegenerateThreshold',
      'profile.profileMaxTokens',
    ])
  })

  it('read every field the form shows, so a setting added to the table is also read from the API', () => {
    // The selection must ask for each group and each of its fields, or the form would show blanks.
    for (const group of Object.keys(FORMATION_SETTING_GROUPS))
      expect(FORMATION_SETTINGS_FIELDS).toMatch(new RegExp(`\\b${group} \\{[^}]*\\}`))
    for (const setting of FORMATION_SETTINGS) {
      const block =
        FORMATION_SETTINGS_FIELDS.match(new RegExp(`\\b${setting.group} \\{([^}]*)\\}`))?.[1] ?? ''
      expect(block.split(/\s+/), settingField(setting)).toContain(setting.name)
      expect(settingValue(SETTINGS, setting), settingField(setting)).not.toBe('')
    }
  })

  it('give a setting missing from the answer as empty, not "undefined"', () => {
    const serverModel = { ...SETTINGS, extraction: { extractor: 'LLM', model: null } }
    expect(settingValue(serverModel, { group: 'extraction', name: 'model' })).toBe('')
    expect(settingValue(SETTINGS, { group: 'memory', name: 'absent' })).toBe('')
    expect(settingValue(SETTINGS, { group: 'summaries', name: 'summaryMaxTokens' })).toBe('400')
  })

  it('keep every number setting within sane limits', () => {
    for (const setting of FORMATION_SETTINGS)
      if (setting.kind === 'number') expect(setting.min, setting.name).toBeLessThan(setting.max)
  })
})
