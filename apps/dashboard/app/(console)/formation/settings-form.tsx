'use client'

import { useActionState } from 'react'
import { FieldError, LabelledSelect } from '../../../components/form-fields'
import { fieldError } from '../../../lib/format'
import {
  FORMATION_SETTING_GROUPS,
  FORMATION_SETTINGS,
  type FormationSetting,
  type FormationSettings,
  type SettingGroup,
  settingField,
  settingValue,
} from '../../../lib/formation'
import { type SettingsFormState, saveFormationSettings } from './actions'

/**
 * The agent's memory-formation settings: the master switch, then one fieldset per group of the
 * settings input, built from lib/formation's tables. The API validates the whole and names the
 * field it refuses; the message shows beside that field and nothing is saved.
 */
export function FormationSettingsForm({
  agentId,
  settings,
}: {
  agentId: string
  settings: FormationSettings
}) {
  const [state, action, pending] = useActionState<SettingsFormState, FormData>(saveFormationSettings, {})
  // After a save the API's values; after a refusal what was typed; else what the page read.
  const current = state.saved ?? settings
  const value = (setting: FormationSetting) =>
    state.values?.[settingField(setting)] ?? settingValue(current, setting)
  // Inputs take their defaults once: a key remounts the form with the saved or the typed values.
  const formKey = JSON.stringify(state.saved ?? state.values ?? {})
  const enabled = state.values ? state.values.enabled === 'on' : current.enabled
  // Issues naming no field of the form (or the whole) are shown under the button instead.
  const unplaced = (state.issues ?? []).filter(
    (issue) => !FORMATION_SETTINGS.some((setting) => fieldError([issue], settingField(setting))),
  )
  return (
    <form key={formKey} action={action} className="card" aria-label="Memory formation settings">
      <h2>Settings</h2>
      <input type="hidden" name="agentId" value={agentId} />
      <label className="inline-field">
        <input type="checkbox" name="enabled" defaultChecked={enabled} /> Automatic memory formation
        <span className="muted">
          {' '}
          (off: nothing is extracted or summarised for this agent, and pending work is dropped)
        </span>
      </label>
      {(Object.keys(FORMATION_SETTING_GROUPS) as SettingGroup[]).map((group) => (
        <fieldset key={group} className="form-grid">
          <legend>{FORMATION_SETTING_GROUPS[group]}</legend>
          {FORMATION_SETTINGS.filter((s) => s.group === group).map((setting) => (
            <div key={setting.name} className="form-row">
              <label htmlFor={`setting-${setting.name}`}>
                {setting.label}
                {setting.kind === 'number' && (
                  <span className="muted">
                    {' '}
                    ({setting.unit}, {setting.min.toLocaleString('en-US')}–
                    {setting.max.toLocaleString('en-US')})
                  </span>
                )}
              </label>
              <span>
                <SettingInput
                  setting={setting}
                  value={value(setting)}
                  invalid={!!fieldError(state.issues, settingField(setting))}
                />
                <FieldError state={state} field={settingField(setting)} />
              </span>
            </div>
          ))}
        </fieldset>
      ))}
      <button type="submit" disabled={pending}>
        {pending ? 'Saving…' : 'Save settings'}
      </button>{' '}
      {state.ok && (
        <span className="ok" role="status" data-testid="settings-saved">
          {state.message}
        </span>
      )}
      {!state.ok && state.message && (!state.issues?.length || unplaced.length > 0) && (
        <span className="field-error" role="alert" data-testid="settings-error">
          {unplaced.length
            ? unplaced.map((issue) => `${issue.field}: ${issue.message}`).join('; ')
            : state.message}
        </span>
      )}
    </form>
  )
}

function SettingInput({
  setting,
  value,
  invalid,
}: {
  setting: FormationSetting
  value: string
  invalid: boolean
}) {
  const id = `setting-${setting.name}`
  const name = settingField(setting)
  if (setting.kind === 'select')
    return <LabelledSelect id={id} name={name} labels={setting.labels} defaultValue={value} />
  // No min/max on a number: the API's limits and its message are the ones that count.
  return (
    <input
      id={id}
      name={name}
      inputMode={setting.kind === 'number' ? 'numeric' : undefined}
      placeholder={setting.kind === 'text' ? setting.placeholder : undefined}
      defaultValue={value}
      aria-invalid={invalid}
    />
  )
}
