// Memory formation settings (issue 13 §5): the switch, summaries and profile as one object,
// answered through the operations layer so the GraphQL door validates as the SDK and MCP do.
import type { OutputOf } from '@engram/contract'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'
import { FormationExtractorModeEnum } from './formation-activity.ts'

type Settings = OutputOf<'memoryFormationSettings'>

export const SummaryStrategyEnum = builder.enumType('SummaryStrategy', {
  description:
    "Spec 002's summary strategies: EXTRACTIVE (the offline default: key facts and the most central sentences), SIMPLE, HIERARCHICAL (summaries of summaries for long histories) and MAP_REDUCE.",
  values: ['SIMPLE', 'HIERARCHICAL', 'EXTRACTIVE', 'MAP_REDUCE'] as const,
})

const ExtractionSettingsRef = builder.objectRef<Settings['extraction']>('ExtractionSettings').implement({
  description:
    'Which extractor reads the agent’s new turns, and the core model the language model is asked for.',
  fields: (t) => ({
    extractor: t.field({
      type: FormationExtractorModeEnum,
      description:
        'LLM: the language model extracts (and writes summaries and the profile); OFFLINE: the deterministic extractor, and no call to the model at all. LLM by default when the server has a model.',
      resolve: (s) => s.extractor,
    }),
    model: t.exposeString('model', {
      nullable: true,
      description:
        'The model name sent to the OpenAI-compatible endpoint for this agent; null: the server’s ENGRAM_LLM_MODEL.',
    }),
  }),
})

const SummarySettingsRef = builder.objectRef<Settings['summaries']>('SummarySettings').implement({
  description: 'How an agent’s conversations are summarised on their own.',
  fields: (t) => ({
    strategy: t.field({ type: SummaryStrategyEnum, resolve: (s) => s.strategy }),
    summaryDebounceSeconds: t.exposeInt('summaryDebounceSeconds', {
      description: 'A conversation is summarised this long after its last turn (10-3,600).',
    }),
    summaryRetentionDays: t.exposeInt('summaryRetentionDays', {
      description: 'Summaries are removed this many days after Engram stored them (1-365).',
    }),
    summarizationThresholdTokens: t.exposeInt('summarizationThresholdTokens', {
      description:
        'A conversation with this many tokens not yet summarised is summarised at once (1,000-10,000,000).',
    }),
    summaryMaxTokens: t.exposeInt('summaryMaxTokens', {
      description: 'The size a summary is written to (50-10,000 tokens).',
    }),
  }),
})

const ProfileSettingsRef = builder.objectRef<Settings['profile']>('ProfileSettings').implement({
  description: 'When the generated user profile is rebuilt, and how long it may be.',
  fields: (t) => ({
    profileRegenerateThreshold: t.exposeInt('profileRegenerateThreshold', {
      description: 'New profile contributions that rebuild the profile (1-100).',
    }),
    profileMaxTokens: t.exposeInt('profileMaxTokens', {
      description: 'The profile’s size at most (100-50,000 tokens).',
    }),
  }),
})

const MemoryFormationSettingsRef = builder.objectRef<Settings>('MemoryFormationSettings').implement({
  description: 'An agent’s memory-formation settings: spec 003’s defaults unless changed.',
  fields: (t) => ({
    enabled: t.exposeBoolean('enabled', {
      description: 'Off: nothing is extracted or summarised for the agent (pending work is dropped).',
    }),
    extraction: t.field({ type: ExtractionSettingsRef, resolve: (s) => s.extraction }),
    summaries: t.field({ type: SummarySettingsRef, resolve: (s) => s.summaries }),
    profile: t.field({ type: ProfileSettingsRef, resolve: (s) => s.profile }),
  }),
})

const ExtractionSettingsInput = builder.inputType('ExtractionSettingsInput', {
  fields: (t) => ({
    extractor: t.field({
      type: FormationExtractorModeEnum,
      description: 'LLM needs a model configured on the server (VALIDATION otherwise).',
    }),
    model: t.string({
      description: '1-200 characters; null goes back to the server’s model, left out keeps the agent’s.',
    }),
  }),
})

const SummarySettingsInput = builder.inputType('SummarySettingsInput', {
  fields: (t) => ({
    strategy: t.field({ type: SummaryStrategyEnum }),
    summaryDebounceSeconds: t.int(),
    summaryRetentionDays: t.int(),
    summarizationThresholdTokens: t.int(),
    summaryMaxTokens: t.int(),
  }),
})

const ProfileSettingsInput = builder.inputType('ProfileSettingsInput', {
  fields: (t) => ({ profileRegenerateThreshold: t.int(), profileMaxTokens: t.int() }),
})

const MemoryFormationSettingsInput = builder.inputType('MemoryFormationSettingsInput', {
  description: 'The settings to change; a part or field left out keeps its value.',
  fields: (t) => ({
    enabled: t.boolean(),
    extraction: t.field({ type: ExtractionSettingsInput }),
    summaries: t.field({ type: SummarySettingsInput }),
    profile: t.field({ type: ProfileSettingsInput }),
  }),
})

builder.queryFields((t) => ({
  memoryFormationSettings: t.field({
    type: MemoryFormationSettingsRef,
    errors: {},
    description:
      'The agent’s memory-formation settings: the master switch, summaries (strategy, debounce, retention, threshold, size) and the profile (rebuild threshold, size).',
    args: { agentId: t.arg.id() },
    resolve: (_root, args, ctx) => operate(ctx, 'memoryFormationSettings', args),
  }),
}))

builder.mutationFields((t) => ({
  updateMemoryFormationSettings: t.field({
    type: MemoryFormationSettingsRef,
    errors: {},
    description:
      'Changes some of the agent’s memory-formation settings; the rest keep their values. Validated whole: one value out of its limits changes nothing.',
    args: {
      agentId: t.arg.id(),
      settings: t.arg({ type: MemoryFormationSettingsInput, required: true }),
    },
    resolve: (_root, args, ctx) => operate(ctx, 'updateMemoryFormationSettings', args),
  }),
}))
