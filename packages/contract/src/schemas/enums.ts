import { z } from 'zod'

// ---------------------------------------------------------------------------------------------
// Enums: the GraphQL enums' values, spelled the same (catalog.test.ts compares them).

export const RoleSchema = z.enum(['USER', 'ASSISTANT', 'SYSTEM', 'TOOL'])
export const MemoryCategorySchema = z.enum([
  'FACT',
  'PREFERENCE',
  'DECISION',
  'CORRECTION',
  'RELATIONSHIP',
  'SKILL',
  'COMMITMENT',
  'CONTEXT',
  'PAST_CONVERSATION',
])
export const KnowledgeCategorySchema = z.enum([
  'DOMAIN',
  'EXECUTION_PATTERN',
  'USER_PREFERENCE',
  'WEBSITE_KNOWLEDGE',
  'ERROR_PATTERN',
])
/** GRAPH (issue 15): the knowledge graph's entities and relationships, all time (ended edges too). */
/** POOLS (issue 17): the memories of every shared pool the agent is a member of (never by default). */
export const SearchScopeSchema = z.enum(['MESSAGES', 'SUMMARIES', 'MEMORIES', 'KNOWLEDGE', 'GRAPH', 'POOLS'])
export const SearchStrategySchema = z.enum([
  'HYBRID',
  'LEXICAL',
  'SIMILARITY',
  'RECENCY',
  'IMPORTANCE',
  'WEIGHTED',
  'SIMILARITY_IMPORTANCE',
])
export const ContextSectionSchema = z.enum([
  'USER_OVERRIDES',
  'PROFILE',
  'WORKING_MEMORY',
  'SUMMARIES',
  'RELATIONSHIPS',
  'RELEVANT_MEMORIES',
  'KNOWLEDGE',
  'POOLS',
  'CONVERSATION',
])
export const MemoryOrderSchema = z.enum(['NEWEST', 'UPDATED', 'IMPORTANCE', 'ACCESSED', 'ACCESS_COUNT'])
export const KnowledgeOrderSchema = z.enum(['CONFIDENCE', 'UPDATED', 'LAST_USED', 'USES'])
export const ImportModeSchema = z.enum(['MERGE', 'REPLACE'])
export const MemoryWriteOutcomeSchema = z.enum(['STORED', 'DUPLICATE', 'SUPERSEDED'])
export const VerificationLayerSchema = z.enum(['JACCARD', 'SEMANTIC'])
export const MemoryTierSchema = z.enum(['WORKING', 'EPISODIC', 'SEMANTIC'])
export const MemoryEntryTypeSchema = z.enum([
  'FACT',
  'PREFERENCE',
  'DECISION',
  'CORRECTION',
  'COMMITMENT',
  'RELATIONSHIP',
  'SKILL',
])
export const ExtractorSchema = z.enum(['OFFLINE', 'LLM', 'OFFLINE_FALLBACK'])
/** Spec 002's summary strategies (core's SUMMARY_STRATEGIES; map-reduce spelled MAP_REDUCE). */
export const SummaryStrategySchema = z.enum(['SIMPLE', 'HIERARCHICAL', 'EXTRACTIVE', 'MAP_REDUCE'])
/** Who wrote a summary or a profile version: the language model, or the offline extractive writer. */
export const FormationWriterSchema = z.enum(['LLM', 'EXTRACTIVE'])
export const SummaryTriggerSchema = z.enum(['DEBOUNCE', 'SWITCH', 'THRESHOLD', 'REQUEST'])
export const ProfileTriggerSchema = z.enum(['CONTRIBUTIONS', 'OVERRIDES', 'MEMORY_DELETED', 'REQUEST'])
/** Which extractor reads an agent's new turns (its setting, or the server's default). */
export const ExtractorChoiceSchema = z.enum(['OFFLINE', 'LLM'])
/** A unit of memory formation counted in the processing statistics. */
export const FormationWorkKindSchema = z.enum(['EXTRACTION', 'SUMMARY', 'PROFILE'])
/** The language model's circuit breaker. */
export const LlmCircuitStateSchema = z.enum(['CLOSED', 'OPEN', 'HALF_OPEN'])
export const FormationOutcomeSchema = z.enum(['SUCCESS', 'FAILURE'])
