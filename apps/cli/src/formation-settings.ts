import { catalog, type InputOf } from '@engram/contract'
import { CliError } from './errors.ts'

/**
 * `--set key=value` pairs as the settings object updateMemoryFormationSettings takes: the keys are
 * the settings' own (`enabled`, `extraction.<field>`, `summaries.<field>`, `profile.<field>`); the
 * server checks limits.
 */
export function formationSettingsOf(
  pairs: readonly string[],
): InputOf<'updateMemoryFormationSettings'>['settings'] {
  const settings: {
    enabled?: boolean
    extraction?: Record<string, unknown>
    summaries?: Record<string, unknown>
    profile?: Record<string, unknown>
  } = {}
  const shape = catalog.memoryFormationSettings.output.shape
  const fields = {
    extraction: Object.keys(shape.extraction.shape),
    summaries: Object.keys(shape.summaries.shape),
    profile: Object.keys(shape.profile.shape),
  }
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    const key = at > 0 ? pair.slice(0, at).trim() : ''
    const raw = at > 0 ? pair.slice(at + 1).trim() : ''
    if (!key || !raw) throw new CliError(`--set ${pair}: expected key=value`)
    if (key === 'enabled') {
      if (raw !== 'true' && raw !== 'false') throw new CliError(`--set ${pair}: enabled is true or false`)
      settings.enabled = raw === 'true'
      continue
    }
    const [part, field, ...rest] = key.split('.')
    if ((part !== 'extraction' && part !== 'summaries' && part !== 'profile') || !field || rest.length > 0)
      throw new CliError(
        `--set ${pair}: the keys are enabled, extraction.<field>, summaries.<field> and profile.<field>`,
      )
    // An unknown field would be dropped by the schema without a word: name the known ones instead.
    if (!fields[part].includes(field))
      throw new CliError(`--set ${pair}: ${part} has ${fields[part].join(', ')}`)
    let value: unknown
    if (field === 'strategy' || field === 'extractor') value = raw.toUpperCase().replace('-', '_')
    // A model is a name; `null` goes back to the server's model.
    else if (field === 'model') value = raw === 'null' ? null : raw
    else {
      value = Number(raw)
      if (!Number.isFinite(value)) throw new CliError(`--set ${pair}: not a number`)
    }
    settings[part] = { ...settings[part], [field]: value }
  }
  // The values' ranges are the server's to check (VALIDATION naming the field and the limit).
  return settings as InputOf<'updateMemoryFormationSettings'>['settings']
}
