// Memory formation (issue 13): forming memories now (syncMemory) and the router (classify).
import { MEMORY_ENTRY_TYPES, type Tier, type TurnClassification } from '@engram/core'
import type { Extractor, SyncResult } from '@engram/engine'
import { builder, upperCaseValues } from '../builder.ts'
import { agentScope } from '../scope.ts'
import { MemoryCategoryEnum, MemoryItemRef } from './memory-item.ts'
import { RoleEnum } from './session.ts'

const TIERS: readonly Tier[] = ['working', 'episodic', 'semantic']
const MemoryTierEnum = builder.enumType('MemoryTier', {
  description:
    "Spec 002's tiers: WORKING (this conversation's moment), EPISODIC (what happened, when), SEMANTIC (durable facts).",
  values: upperCaseValues(TIERS),
})

const MemoryEntryTypeEnum = builder.enumType('MemoryEntryType', {
  description: "Spec 003's seven kinds of working-memory entry: what a memory is, beside its category.",
  values: upperCaseValues(MEMORY_ENTRY_TYPES),
})

const ExtractorEnum = builder.enumType('Extractor', {
  description:
    'Which extractor formed memories: OFFLINE (no model), LLM, or OFFLINE_FALLBACK (the model was unavailable).',
  values: {
    OFFLINE: { value: 'offline' },
    LLM: { value: 'llm' },
    OFFLINE_FALLBACK: { value: 'offline-fallback' },
  } as const satisfies Record<string, { value: Extractor }>,
})

const SyncMemoryPayload = builder.objectRef<SyncResult>('SyncMemoryPayload').implement({
  description: 'What one sync formed from the turns not yet extracted.',
  fields: (t) => ({
    conversations: t.exposeInt('conversations', { description: 'Conversations that had turns to extract.' }),
    turns: t.exposeInt('turns'),
    stored: t.field({
      type: [MemoryItemRef],
      description: 'New memories (stored, or superseding an older one).',
      resolve: (r) => r.stored,
    }),
    duplicates: t.exposeInt('duplicates', {
      description: 'Candidates the verification found already known.',
    }),
    superseded: t.exposeInt('superseded'),
    rejected: t.exposeInt('rejected', {
      description: 'Candidates refused: a limit, the privacy policy, or turns of two users.',
    }),
    extractors: t.field({ type: [ExtractorEnum], resolve: (r) => r.extractors }),
    summaries: t.int({
      description: 'Conversation summaries formed from turns not yet summarised.',
      resolve: (r) => r.summaries.length,
    }),
    profileVersions: t.int({
      description: 'Profile versions written because the new memories made them due.',
      resolve: (r) => r.profileVersions.length,
    }),
  }),
})

const ClassificationRef = builder.objectRef<TurnClassification>('Classification').implement({
  description: 'How the memory router routes a turn (spec 002).',
  fields: (t) => ({
    tier: t.field({ type: MemoryTierEnum, resolve: (c) => c.tier }),
    category: t.field({ type: MemoryCategoryEnum, resolve: (c) => c.category }),
    memoryType: t.field({ type: MemoryEntryTypeEnum, resolve: (c) => c.memoryType }),
    importance: t.exposeFloat('importance', { description: "Spec 002's initial importance, 0-1." }),
    reasons: t.exposeStringList('reasons'),
  }),
})

const ClassifyInput = builder.inputType('ClassifyInput', {
  fields: (t) => ({
    content: t.string({ required: true }),
    role: t.field({ type: RoleEnum, description: 'Who said it; USER when not given.' }),
  }),
})

builder.queryFields((t) => ({
  classify: t.field({
    type: ClassificationRef,
    errors: {},
    description:
      'Routes one turn as ingestion would: tier, category, memory type and initial importance, with the reasons. Stores nothing.',
    args: { input: t.arg({ type: ClassifyInput, required: true }) },
    resolve: (_root, { input }, ctx) =>
      ctx.services.engine.formation.classify(
        { content: input.content, ...(input.role ? { role: input.role } : {}) },
        ctx.services.engine.limits,
      ),
  }),
}))

builder.mutationFields((t) => ({
  syncMemory: t.field({
    type: SyncMemoryPayload,
    errors: {},
    description:
      'Forms now what is pending: memories from turns not yet extracted, summaries of conversations not yet summarised, the profiles made due (all of this otherwise happens on its own).',
    args: { agentId: t.arg.id() },
    resolve: async (_root, args, ctx) => ctx.services.engine.syncMemory(await agentScope(ctx, args.agentId)),
  }),
}))
