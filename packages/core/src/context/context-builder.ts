import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'
import { DEFAULT_WEIGHTED_STRATEGY_WEIGHTS } from '../retrieval/ranking.ts'

// Spec 002's context builder (ContextBuilder.buildContext / calculateBudget): a whole prompt for a
// model window, where spec 000's budget manager (budget/) plans one conversation's window and
// spec 003's assembler (assembler.ts) one memory block. Pure: token counts come in, decisions go out.

/** The widest window a request may name: today's largest model windows, with room. */
export const MAX_CONTEXT_WINDOW_TOKENS = 2_000_000
/** Below this no reserve leaves anything for memory. */
export const MIN_CONTEXT_WINDOW_TOKENS = 1_000
/** Tools a request may reserve for (each tokensPerTool): more than any model accepts. */
export const MAX_BUILD_TOOL_COUNT = 1_000
/** The candidates' ceiling in the rules; a request is held to the search's own limit as well. */
export const MAX_BUILD_CANDIDATE_LIMIT = 10_000

/** The message that stands for the memories that did not fit (spec 002's wording). */
export const PREVIOUS_CONTEXT_SUMMARY_PREFIX = '[Previous context summary]: '
/** How a memory item is told apart from a stored turn in the built messages. */
export const BUILT_MEMORY_PREFIX = '[Memory] '

const unit = z.number().min(0).max(1)

/** Spec 002's strategy 4 weights (hybrid retrieval): recency 0.3, similarity 0.5, importance 0.2. */
export const ContextBuilderWeightsSchema = z.object({
  recency: unit.default(DEFAULT_WEIGHTED_STRATEGY_WEIGHTS.recency),
  similarity: unit.default(DEFAULT_WEIGHTED_STRATEGY_WEIGHTS.similarity),
  importance: unit.default(DEFAULT_WEIGHTED_STRATEGY_WEIGHTS.importance),
})
export type ContextBuilderWeights = z.infer<typeof ContextBuilderWeightsSchema>

/**
 * Spec 002's numbers, each a default a server may change (ENGRAM_CONTEXT_BUILDER_RULES): the
 * window, the system / tools / output reserves, memory's share of what is left, the candidates
 * retrieved, the overflow summary's size and the ranking weights.
 */
export const ContextBuilderRulesSchema = z.object({
  contextWindow: z
    .number()
    .int()
    .min(MIN_CONTEXT_WINDOW_TOKENS)
    .max(MAX_CONTEXT_WINDOW_TOKENS)
    .default(128_000),
  /** system: min(systemReserveMaxTokens, systemReserveShare × window). */
  systemReserveShare: unit.default(0.05),
  systemReserveMaxTokens: z.number().int().min(0).max(MAX_CONTEXT_WINDOW_TOKENS).default(4_000),
  /** tools: toolCount × tokensPerTool. */
  tokensPerTool: z.number().int().min(0).max(100_000).default(500),
  /** output: min(outputReserveMaxTokens, outputReserveShare × window). */
  outputReserveShare: unit.default(0.1),
  outputReserveMaxTokens: z.number().int().min(0).max(MAX_CONTEXT_WINDOW_TOKENS).default(4_000),
  /** memory: this share of what the reserves and the input leave. */
  memoryShare: unit.default(0.7),
  /** Memories retrieved and ranked before the budget decides (spec 002: 100). */
  candidateLimit: z.number().int().min(1).max(MAX_BUILD_CANDIDATE_LIMIT).default(100),
  /** The overflow summary is written to at most this (spec 002's targetTokens: 2,000); 0 never summarises. */
  summaryMaxTokens: z.number().int().min(0).max(100_000).default(2_000),
  weights: ContextBuilderWeightsSchema.default(ContextBuilderWeightsSchema.parse({})),
})
export type ContextBuilderRules = z.infer<typeof ContextBuilderRulesSchema>
export const DEFAULT_CONTEXT_BUILDER_RULES: ContextBuilderRules = ContextBuilderRulesSchema.parse({})

export function parseContextBuilderRules(input: unknown): ContextBuilderRules {
  return parseWith(ContextBuilderRulesSchema, input, 'contextBuilder')
}

/** What one request may set (the rest comes from the rules); text sizes are the door's limits. */
export const BuildContextOptionsSchema = z.object({
  contextWindow: z.number().int().min(MIN_CONTEXT_WINDOW_TOKENS).max(MAX_CONTEXT_WINDOW_TOKENS).optional(),
  instructions: z.string().optional(),
  toolCount: z.number().int().min(0).max(MAX_BUILD_TOOL_COUNT).optional(),
  currentInput: z.string().optional(),
  candidateLimit: z.number().int().min(1).max(MAX_BUILD_CANDIDATE_LIMIT).optional(),
  weights: ContextBuilderWeightsSchema.partial().optional(),
})
export type BuildContextOptions = z.infer<typeof BuildContextOptionsSchema>

/** A request's options over the rules: what one build runs on. */
export interface BuildContextPlan {
  contextWindow: number
  instructions: string | null
  /** The request's input; null when it names none (the caller's query stands in). */
  currentInput: string | null
  toolCount: number
  candidateLimit: number
  weights: ContextBuilderWeights
}

/** Checks a request's options (fields named `buildContext.*` with their limits) and fills in the rules. */
export function buildContextPlan(rules: ContextBuilderRules, options: unknown): BuildContextPlan {
  const given = parseWith(BuildContextOptionsSchema, options, 'buildContext')
  return {
    contextWindow: given.contextWindow ?? rules.contextWindow,
    instructions: given.instructions?.trim() ? given.instructions : null,
    currentInput: given.currentInput?.trim() ? given.currentInput : null,
    toolCount: given.toolCount ?? 0,
    candidateLimit: given.candidateLimit ?? rules.candidateLimit,
    weights: { ...rules.weights, ...stripUndefined(given.weights ?? {}) },
  }
}

/** Spec 002's ContextBudget, with the input it was computed for. */
export interface ContextBuilderBudget {
  total: number
  system: number
  tools: number
  output: number
  input: number
  memory: number
}

/**
 * Spec 002's calculateBudget, made to add up: system = min(4000, 5% of the window), tools = 500 per
 * tool, output = min(4000, 10%), and memory = 70% of what those and the input leave. Instructions
 * longer than the system reserve take what they need from memory rather than being refused (an
 * agent's prompt is what it is). A window the reserves and input overfill is a ValidationError
 * naming `buildContext.contextWindow` and the smallest window that would do.
 */
export function contextBuilderBudget(
  rules: ContextBuilderRules,
  request: { contextWindow: number; toolCount: number; instructionTokens: number; inputTokens: number },
): ContextBuilderBudget {
  const total = request.contextWindow
  const system = Math.max(
    Math.floor(Math.min(rules.systemReserveMaxTokens, total * rules.systemReserveShare)),
    request.instructionTokens,
  )
  const tools = request.toolCount * rules.tokensPerTool
  const output = Math.floor(Math.min(rules.outputReserveMaxTokens, total * rules.outputReserveShare))
  const input = request.inputTokens
  const left = total - system - tools - output - input
  if (left < 0) {
    const needed = total - left
    throw new ValidationError([
      {
        field: 'buildContext.contextWindow',
        message: `${total} tokens do not hold the reserves (system ${system}, tools ${tools}, output ${output}) and the input (${input}): at least ${needed} needed`,
        limit: needed,
      },
    ])
  }
  return { total, system, tools, output, input, memory: Math.floor(left * rules.memoryShare) }
}

export interface BuildCandidate {
  id: string
  tokens: number
}

export interface MemoryFit {
  /** Ids in rank order, all within the budget. */
  included: string[]
  /** From the first memory that did not fit on, in rank order (spec 002 stops there). */
  overflowed: string[]
  usedTokens: number
}

/**
 * Spec 002's fit loop: memories in rank order while they fit the memory budget; the first that does
 * not ends it, and it and every memory after it overflow (to be summarised), so what is shown is
 * always a prefix of the ranking.
 */
export function fitMemories(candidates: readonly BuildCandidate[], memoryBudget: number): MemoryFit {
  let usedTokens = 0
  for (const [index, candidate] of candidates.entries()) {
    if (usedTokens + candidate.tokens > memoryBudget) {
      return {
        included: candidates.slice(0, index).map((c) => c.id),
        overflowed: candidates.slice(index).map((c) => c.id),
        usedTokens,
      }
    }
    usedTokens += candidate.tokens
  }
  return { included: candidates.map((c) => c.id), overflowed: [], usedTokens }
}

/**
 * The size to write the overflow summary to: what the memory budget has left, at most
 * summaryMaxTokens, less the prefix. 0 when nothing overflowed or no summary could fit.
 */
export function overflowSummaryTokens(
  rules: Pick<ContextBuilderRules, 'summaryMaxTokens'>,
  fit: MemoryFit,
  memoryBudget: number,
  prefixTokens: number,
): number {
  if (fit.overflowed.length === 0) return 0
  return Math.max(0, Math.min(rules.summaryMaxTokens, memoryBudget - fit.usedTokens - prefixTokens))
}

export type BuiltMessageRole = 'system' | 'user' | 'assistant'
export type BuiltMessageKind = 'instructions' | 'memory' | 'turn' | 'summary' | 'input'

export interface BuiltMessage {
  role: BuiltMessageRole
  content: string
  kind: BuiltMessageKind
  /** The memory or stored turn it shows (memory:12, message:40); null for the others. */
  sourceId: string | null
  tokenCount: number
}

/**
 * Spec 002's memoryToMessage: a memory item is a system note; a stored turn keeps its speaker's
 * role when it is the user's or the assistant's, and any other turn (system, tool) becomes a system
 * note naming its role, since a chat API takes a tool message only after its own tool call.
 */
export function builtMemoryContent(
  memory: { kind: 'memory' } | { kind: 'turn'; role: string },
  content: string,
): { role: BuiltMessageRole; content: string } {
  if (memory.kind === 'memory') return { role: 'system', content: `${BUILT_MEMORY_PREFIX}${content}` }
  const role = memory.role.toLowerCase()
  if (role === 'user' || role === 'assistant') return { role, content }
  return { role: 'system', content: `[${role}] ${content}` }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
