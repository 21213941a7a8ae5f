'use client'

import { useActionState } from 'react'
import { FieldError, LabelledSelect } from '../../../components/form-fields'
import { fieldError } from '../../../lib/format'
import {
  FORMATION_SETTING_GROUPS,
  type FormationSettings,
  NUMBER_SETTINGS,
  SELECT_SETTINGS,
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
  const value = (setting: { group: string; name: string }) =>
    state.values?.[settingField(setting)] ?? settingValue(current, setting)
  // A refused form remounts with what was typed; a saved one with the saved values.
  const formKey = state.saved ? JSON.stringify(state.saved) : JSON.stringify(state.values ?? {})
  const enabled = state.values ? state.values.enabled === 'on' : current.enabled
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
      {(Object.keys(FORMATION_SETTING_GROUPS) as (keyof typeof FORMATION_SETTING_GROUPS)[]).map((group) => (
        <fieldset key={group} className="form-grid">
          <legend>{FORMATION_SETTING_GROUPS[group]}</legend>
          {SELECT_SETTINGS.filter((s) => s.group === group).map((setting) => (
            <div key={setting.name} className="form-row">
              <label htmlFor={`setting-${setting.name}`}>{setting.label}</label>
              <span>
                <LabelledSelect
                  id={`setting-${setting.name}`}
                  name={settingField(setting)}
                  labels={setting.labels}
                  defaultValue={value(setting)}
                />
                <FieldError state={state} field={settingField(setting)} />
              </span>
            </div>
          ))}
          {NUMBER_SETTINGS.filter((s) => s.group === group).map((setting) => (
            <div key={setting.name} className="form-row">
              <label htmlFor={`setting-${setting.name}`}>
                {setting.label}{' '}
                <span className="muted">
                  ({setting.unit}, {setting.min.toLocaleString('en-US')}–{setting.max.toLocaleString('en-US')}
                  )
                </span>
              </label>
              <span>
                {/* No min/max here: the API's limits and its message are the ones that count. */}
                <input
                  id={`setting-${setting.name}`}
                  name={settingField(setting)}
                  inputMode="numeric"
                  defaultValue={value(setting)}
                  aria-invalid={!!fieldError(state.issues, settingField(setting))}
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
      {!state.ok && state.message && (
        <span className="field-error" role="alert" data-testid="settings-error">
          {state.message}
        </span>
      )}
    </form>
  )
}
