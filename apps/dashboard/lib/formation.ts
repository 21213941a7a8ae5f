/** Memory formation as the dashboard reads it: settings, activity and the generated profile. */

export interface FormationSettings {
  enabled: boolean
  summaries: {
    strategy: string
    summaryDebounceSeconds: number
    summaryRetentionDays: number
    summarizationThresholdTokens: number
    summaryMaxTokens: number
  }
  profile: { profileRegenerateThreshold: number; profileMaxTokens: number }
  extraction: { extractor: string; model: string | null }
}

export const FORMATION_SETTINGS_FIELDS =
  'enabled summaries { strategy summaryDebounceSeconds summaryRetentionDays summarizationThresholdTokens summaryMaxTokens } profile { profileRegenerateThreshold profileMaxTokens } extraction { extractor model }'

/**
 * The groups of the settings input, in the form's order. Adding a group of settings (the
 * extractor and its model, say) is one entry here, its fields in FORMATION_SETTINGS and its
 * GraphQL fields in FORMATION_SETTINGS_FIELDS: the form and the save action walk these tables.
 */
export const FORMATION_SETTING_GROUPS = {
  extraction: 'Extraction',
  summaries: 'Summaries',
  profile: 'User profile',
} as const satisfies Record<string, string>

export type SettingGroup = keyof typeof FORMATION_SETTING_GROUPS

interface SettingBase {
  group: SettingGroup
  name: string
  label: string
}

/** A whole number within the API's limits (shown beside the label; the API's check is the one that counts). */
export interface NumberSetting extends SettingBase {
  kind: 'number'
  unit: string
  min: number
  max: number
}

/** A choice among labelled values (the summary strategy). */
export interface SelectSetting extends SettingBase {
  kind: 'select'
  labels: Record<string, string>
}

/** Free text (a model's name); empty is sent as null, "not set". */
export interface TextSetting extends SettingBase {
  kind: 'text'
  placeholder?: string
}

export type FormationSetting = NumberSetting | SelectSetting | TextSetting

/** LLM is refused by the API when the server has no model configured (the error shows beside the field). */
export const EXTRACTORS: Record<string, string> = {
  OFFLINE: 'Offline (rules and NLP, no model)',
  LLM: 'Language model (the server’s OpenAI-compatible endpoint)',
}

export const SUMMARY_STRATEGIES: Record<string, string> = {
  EXTRACTIVE: 'Extractive (offline: key facts and central sentences)',
  SIMPLE: 'Simple (one model call)',
  HIERARCHICAL: 'Hierarchical (summaries of summaries)',
  MAP_REDUCE: 'Map-reduce (chunks in parallel, then combined)',
}

export const FORMATION_SETTINGS: readonly FormationSetting[] = [
  {
    kind: 'select',
    group: 'extraction',
    name: 'extractor',
    label: 'Extractor',
    labels: EXTRACTORS,
  },
  {
    kind: 'text',
    group: 'extraction',
    name: 'model',
    label: 'Core model',
    placeholder: "the server's ENGRAM_LLM_MODEL",
  },
  {
    kind: 'select',
    group: 'summaries',
    name: 'strategy',
    label: 'Summary strategy',
    labels: SUMMARY_STRATEGIES,
  },
  {
    kind: 'number',
    group: 'summaries',
    name: 'summaryDebounceSeconds',
    label: 'Summary debounce',
    unit: 's',
    min: 10,
    max: 3_600,
  },
  {
    kind: 'number',
    group: 'summaries',
    name: 'summaryRetentionDays',
    label: 'Summary retention',
    unit: 'days',
    min: 1,
    max: 365,
  },
  {
    kind: 'number',
    group: 'summaries',
    name: 'summarizationThresholdTokens',
    label: 'Summarise at once past',
    unit: 'tokens',
    min: 1_000,
    max: 10_000_000,
  },
  {
    kind: 'number',
    group: 'summaries',
    name: 'summaryMaxTokens',
    label: 'Summary size',
    unit: 'tokens',
    min: 50,
    max: 10_000,
  },
  {
    kind: 'number',
    group: 'profile',
    name: 'profileRegenerateThreshold',
    label: 'Rebuild the profile after',
    unit: 'new contributions',
    min: 1,
    max: 100,
  },
  {
    kind: 'number',
    group: 'profile',
    name: 'profileMaxTokens',
    label: 'Profile size',
    unit: 'tokens',
    min: 100,
    max: 50_000,
  },
]

/** The form field of a setting: its path in the settings input, which the API's issues name too. */
export function settingField(setting: { group: string; name: string }): string {
  return `${setting.group}.${setting.name}`
}

export function settingValue(settings: FormationSettings, setting: { group: string; name: string }): string {
  const group = (settings as unknown as Record<string, Record<string, unknown> | undefined>)[setting.group]
  return String(group?.[setting.name] ?? '')
}

export type FormationWorkKind = 'EXTRACTION' | 'SUMMARY' | 'PROFILE'

export const WORK_KIND_LABELS: Record<FormationWorkKind, string> = {
  EXTRACTION: 'Extraction',
  SUMMARY: 'Summaries',
  PROFILE: 'Profile',
}

export interface FormationWorkStats {
  kind: FormationWorkKind
  calls: number
  successes: number
  failures: number
  averageDurationMs: number
  lastRunAt: string | null
  lastFailure: { reason: string; at: string } | null
}

export interface FormationQueueDepth {
  kind: FormationWorkKind
  jobKind: string
  pending: number
  running: number
  failed: number
}

export interface FormationActivity {
  extractor: 'OFFLINE' | 'LLM'
  circuitState: 'CLOSED' | 'OPEN' | 'HALF_OPEN' | null
  work: FormationWorkStats[]
  queue: FormationQueueDepth[]
}

export const FORMATION_ACTIVITY_FIELDS =
  'extractor circuitState work { kind calls successes failures averageDurationMs lastRunAt lastFailure { reason at } } queue { kind jobKind pending running failed }'

/** One unit of work as the formationActivityEvents subscription reports it. */
export interface FormationEvent {
  agentId: string
  kind: FormationWorkKind
  outcome: 'SUCCESS' | 'FAILURE'
  reason: string | null
  durationMs: number
  at: string
  queueDepth: number
}

export const FORMATION_EVENT_FIELDS = 'agentId kind outcome reason durationMs at queueDepth'

/** The job queue's backlog per job kind (jobQueueStats): the lag is the queue's, across agents. */
export interface QueueLag {
  kind: string
  pending: number
  oldestDueAgeMs: number
}

/** What one syncMemory formed. */
export interface SyncResult {
  turns: number
  conversations: number
  stored: number
  duplicates: number
  superseded: number
  rejected: number
  summaries: number
  profileVersions: number
  extractors: string[]
}

export const EXTRACTOR_LABELS: Record<string, string> = {
  OFFLINE: 'offline extractor',
  LLM: 'language model',
  OFFLINE_FALLBACK: 'offline fallback (model unavailable)',
}

export const CIRCUIT_LABELS: Record<string, string> = {
  CLOSED: 'closed (calls go through)',
  OPEN: 'open (failing fast; offline fallbacks run)',
  HALF_OPEN: 'half-open (one trial call)',
}

export interface ProfileVersion {
  id: string
  version: number
  content: string
  createdAt: string
  trigger: string
  writer: string
  tokenCount: number
  overrideIds: string[]
  sourceMemoryIds: string[]
}

export const PROFILE_VERSION_FIELDS =
  'id version content createdAt trigger writer tokenCount overrideIds sourceMemoryIds'

export const PROFILE_TRIGGER_LABELS: Record<string, string> = {
  CONTRIBUTIONS: 'new contributions',
  OVERRIDES: 'overrides changed',
  MEMORY_DELETED: 'a memory was deleted',
  REQUEST: 'requested',
}

/**
 * The profile's users in the page's query string: a user id, or this marker for the profile of
 * the memories that name no user (an empty value would read as "not chosen").
 */
export const NO_USER = '-'

export function userLabel(userId: string | null): string {
  return userId ?? 'no user (memories naming none)'
}
