'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'
import {
  FORMATION_ACTIVITY_FIELDS,
  FORMATION_SETTINGS,
  FORMATION_SETTINGS_FIELDS,
  type FormationActivity,
  type FormationSettings,
  type QueueLag,
  type SyncResult,
  settingField,
} from '../../../lib/formation'

type Issue = NonNullable<ErrorPayload['issues']>[number]

export interface SettingsFormState {
  ok?: boolean
  message?: string
  issues?: Issue[]
  /** The settings as the API saved them, shown in the form after a save. */
  saved?: FormationSettings
  /** What was submitted, when it was refused: React resets a form after its action. */
  values?: Record<string, string>
}

/** GraphQL's Int is 32-bit: a larger number would be a transport error, not the API's field issue. */
const MAX_GRAPHQL_INT = 2_147_483_647

export async function saveFormationSettings(
  _state: SettingsFormState,
  form: FormData,
): Promise<SettingsFormState> {
  const values: Record<string, string> = {}
  for (const [key, value] of form.entries()) if (typeof value === 'string') values[key] = value
  const issues: Issue[] = []
  // Every group is sent whole, so the API validates the settings as one (its rule: all or nothing).
  const settings: Record<string, unknown> = { enabled: form.get('enabled') === 'on' }
  const group = (name: string) => {
    settings[name] ??= {}
    return settings[name] as Record<string, unknown>
  }
  for (const setting of FORMATION_SETTINGS) {
    const field = settingField(setting)
    const raw = String(form.get(field) ?? '').trim()
    if (setting.kind === 'number') {
      const value = Number(raw)
      if (raw === '' || !Number.isInteger(value) || Math.abs(value) > MAX_GRAPHQL_INT)
        issues.push({ field, message: 'must be a whole number', limit: `${setting.min}..${setting.max}` })
      else group(setting.group)[setting.name] = value
    } else group(setting.group)[setting.name] = setting.kind === 'text' && raw === '' ? null : raw
  }
  if (issues.length) return { ok: false, issues, values }
  const { updateMemoryFormationSettings: result } = await gql<{
    updateMemoryFormationSettings: ErrorPayload & Partial<FormationSettings>
  }>(
    `mutation($a: ID, $s: MemoryFormationSettingsInput!) { updateMemoryFormationSettings(agentId: $a, settings: $s) { __typename ... on MemoryFormationSettings { ${FORMATION_SETTINGS_FIELDS} } ${ERROR_FIELDS} } }`,
    { a: String(form.get('agentId')), s: settings },
  )
  if (result.__typename !== 'MemoryFormationSettings')
    return { ok: false, message: result.message, issues: result.issues, values }
  revalidatePath('/formation')
  return { ok: true, message: 'Settings saved.', saved: result as FormationSettings }
}

export interface ActivityState {
  activity: FormationActivity
  lag: QueueLag[]
}

/** The agent's activity and the queue's lag, read again after a sync or a live event. */
export async function readActivity(agentId: string): Promise<ActivityState | { error: string }> {
  const data = await gql<{
    formationActivity: ErrorPayload & Partial<FormationActivity>
    jobQueueStats: QueueLag[]
  }>(
    `query($a: ID) {
      formationActivity(agentId: $a) { __typename ... on FormationActivity { ${FORMATION_ACTIVITY_FIELDS} } ${ERROR_FIELDS} }
      jobQueueStats { kind pending oldestDueAgeMs }
    }`,
    { a: agentId },
  )
  if (data.formationActivity.__typename !== 'FormationActivity')
    return { error: data.formationActivity.message ?? 'formationActivity failed' }
  return { activity: data.formationActivity as FormationActivity, lag: data.jobQueueStats }
}

/** "Sync now": forms what is pending for the agent and reports the counts. */
export async function syncNow(agentId: string): Promise<{ result?: SyncResult; error?: string }> {
  const { syncMemory } = await gql<{
    syncMemory: ErrorPayload & Partial<Omit<SyncResult, 'stored'> & { stored: { id: string }[] }>
  }>(
    `mutation($a: ID) { syncMemory(agentId: $a) { __typename ... on SyncMemoryPayload { turns conversations stored { id } duplicates superseded rejected summaries profileVersions extractors } ${ERROR_FIELDS} } }`,
    { a: agentId },
  )
  if (syncMemory.__typename !== 'SyncMemoryPayload') return { error: syncMemory.message ?? 'the sync failed' }
  revalidatePath('/formation')
  revalidatePath('/memories')
  revalidatePath('/profile')
  const { stored = [], turns = 0, conversations = 0, duplicates = 0, superseded = 0 } = syncMemory
  const { rejected = 0, summaries = 0, profileVersions = 0, extractors = [] } = syncMemory
  return {
    result: {
      turns,
      conversations,
      stored: stored.length,
      duplicates,
      superseded,
      rejected,
      summaries,
      profileVersions,
      extractors,
    },
  }
}
