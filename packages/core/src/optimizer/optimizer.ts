import { z } from 'zod'
import { analyzeEntries, type ContentFeatureSource, type RedundancyFinder } from '../analyzer/analyzer.ts'
import type { KeyFact, KeyFactMode } from '../analyzer/relevance.ts'
import { availableBudget, parseTokenBudgetConfig, type TokenBudgetConfig } from '../budget/token-budget.ts'
import type { TokenCounter } from '../budget/tokenizer.ts'
import { compressMessage } from '../compression/compressor.ts'
import { parseWith } from '../errors.ts'
import type { MemoryEntry, MemoryType } from '../types.ts'

const round = (n: number) => Math.round(n * 1e6) / 1e6
const clamp = (n: number, range: { min: number; max: number }) => Math.min(range.max, Math.max(range.min, n))

/** Spec 000, Self-Tuning Parameters: the range each tuned parameter is held in. */
export const DEFAULT_PARAMETER_RANGES = {
  compressionTrigger: { min: 0.35, max: 0.85 },
  fullMessageWindow: { min: 10, max: 50 },
  minRelevance: { min: 0.15, max: 0.7 },
} as const
export interface ParameterRanges {
  compressionTrigger: { min: number; max: number }
  fullMessageWindow: { min: number; max: number }
  minRelevance: { min: number; max: number }
}

export const DEFAULT_TARGET_USAGE_RATIO = 0.65

/**
 * The parameters' schema for given ranges: a deployment that widens the ranges in its optimizer
 * config validates stored and edited parameters against the same ranges the optimizer clamps to.
 * Initial values outside narrowed ranges start at the nearest bound.
 */
export function optimizerParametersSchema(ranges: ParameterRanges = DEFAULT_PARAMETER_RANGES) {
  const start = (value: number, range: { min: number; max: number }) => clamp(value, range)
  return z.object({
    compressionTrigger: z
      .number()
      .min(ranges.compressionTrigger.min)
      .max(ranges.compressionTrigger.max)
      .default(start(0.7, ranges.compressionTrigger)),
    fullMessageWindow: z
      .number()
      .int()
      .min(ranges.fullMessageWindow.min)
      .max(ranges.fullMessageWindow.max)
      .default(Math.round(start(30, ranges.fullMessageWindow))),
    minRelevance: z
      .number()
      .min(ranges.minRelevance.min)
      .max(ranges.minRelevance.max)
      .default(start(0.3, ranges.minRelevance)),
    /** Fixed by the spec; configurable for deployments that want a fuller or emptier window. */
    targetUsageRatio: z.number().gt(0).lt(1).default(DEFAULT_TARGET_USAGE_RATIO),
  })
}

export const OptimizerParametersSchema = optimizerParametersSchema()
export type OptimizerParameters = z.infer<typeof OptimizerParametersSchema>
export const DEFAULT_OPTIMIZER_PARAMETERS: OptimizerParameters = OptimizerParametersSchema.parse({})

const share = (fallback: number) => z.number().min(0).max(1).default(fallback)
const step = (fallback: number) => z.number().int().min(0).max(100).default(fallback)

/** Spec 000, How It Works and Adaptation Rules: every number, configurable. */
export const OptimizerConfigSchema = z
  .object({
    /** 0 turns the periodic run off (runs on demand only). */
    intervalMs: z.number().int().min(0).max(86_400_000).default(120_000),
    learningRate: z.number().gt(0).max(1).default(0.05),
    /** Over budget when usage > target + this. */
    overBudgetMargin: share(0.1),
    /** Under budget when usage < target − this. */
    underBudgetMargin: share(0.15),
    /** Over budget, the full message window shrinks by this many messages... */
    overBudgetWindowStep: step(2),
    /** ...under budget it grows by this many. */
    underBudgetWindowStep: step(1),
    /** Under budget the trigger and relevance move by learningRate × this (a gentler relax). */
    underBudgetRateFactor: z.number().min(0).max(10).default(0.5),
    /** Savings under this share while over target trigger the emergency adjustment... */
    emergencySavingsRatio: share(0.05),
    /** ...which moves the trigger and relevance by learningRate × this. */
    emergencyRateFactor: z.number().min(0).max(10).default(2),
    snapshotHistoryLimit: z.number().int().min(1).max(100_000).default(500),
    compressionTriggerMin: z.number().gt(0).max(1).default(DEFAULT_PARAMETER_RANGES.compressionTrigger.min),
    compressionTriggerMax: z.number().gt(0).max(1).default(DEFAULT_PARAMETER_RANGES.compressionTrigger.max),
    fullMessageWindowMin: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(DEFAULT_PARAMETER_RANGES.fullMessageWindow.min),
    fullMessageWindowMax: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .default(DEFAULT_PARAMETER_RANGES.fullMessageWindow.max),
    minRelevanceMin: z.number().min(0).max(1).default(DEFAULT_PARAMETER_RANGES.minRelevance.min),
    minRelevanceMax: z.number().min(0).max(1).default(DEFAULT_PARAMETER_RANGES.minRelevance.max),
  })
  .superRefine((config, ctx) => {
    for (const name of ['compressionTrigger', 'fullMessageWindow', 'minRelevance'] as const) {
      const min = config[`${name}Min`]
      const max = config[`${name}Max`]
      if (min > max) {
        ctx.addIssue({
          code: 'too_small',
          origin: 'number',
          minimum: min,
          inclusive: true,
          input: max,
          path: [`${name}Max`],
          message: `must be at least ${name}Min (${min})`,
        })
      }
    }
  })
export type OptimizerConfig = z.infer<typeof OptimizerConfigSchema>
export const DEFAULT_OPTIMIZER_CONFIG: OptimizerConfig = OptimizerConfigSchema.parse({})

export function parseOptimizerConfig(input?: Partial<OptimizerConfig>): OptimizerConfig {
  return parseWith(OptimizerConfigSchema, input, 'optimizer')
}

/** The ranges an optimizer config holds the parameters in. */
export function parameterRanges(config: OptimizerConfig = DEFAULT_OPTIMIZER_CONFIG): ParameterRanges {
  return {
    compressionTrigger: { min: config.compressionTriggerMin, max: config.compressionTriggerMax },
    fullMessageWindow: { min: config.fullMessageWindowMin, max: config.fullMessageWindowMax },
    minRelevance: { min: config.minRelevanceMin, max: config.minRelevanceMax },
  }
}

export function parseOptimizerParameters(
  input?: Partial<OptimizerParameters>,
  ranges: ParameterRanges = DEFAULT_PARAMETER_RANGES,
): OptimizerParameters {
  const schema =
    ranges === DEFAULT_PARAMETER_RANGES ? OptimizerParametersSchema : optimizerParametersSchema(ranges)
  return parseWith(schema, input, 'parameters')
}

/**
 * The adaptation rules, exactly, then each parameter clamped to its range. The over/under rules
 * exclude each other; the emergency rule adds to either (or to neither, when usage is over the
 * target but within its margin).
 */
export function adaptParameters(
  parameters: OptimizerParameters,
  observed: { usageRatio: number; savingsRatio: number },
  config: Partial<OptimizerConfig> = DEFAULT_OPTIMIZER_CONFIG,
): {
  parameters: OptimizerParameters
  adjustments: string[]
  rules: OptimizerRule[]
  changes: ParameterChange[]
} {
  const cfg = config === DEFAULT_OPTIMIZER_CONFIG ? DEFAULT_OPTIMIZER_CONFIG : parseOptimizerConfig(config)
  const rate = cfg.learningRate
  const target = parameters.targetUsageRatio
  let { compressionTrigger, fullMessageWindow, minRelevance } = parameters
  const adjustments: string[] = []
  const rules: OptimizerRule[] = []
  if (observed.usageRatio > target + cfg.overBudgetMargin) {
    rules.push('OVER_BUDGET')
    compressionTrigger -= rate
    fullMessageWindow -= cfg.overBudgetWindowStep
    minRelevance += rate
    adjustments.push(
      `over budget (usage ${observed.usageRatio.toFixed(3)} > ${(target + cfg.overBudgetMargin).toFixed(2)}): tighten`,
    )
  } else if (observed.usageRatio < target - cfg.underBudgetMargin) {
    rules.push('UNDER_BUDGET')
    compressionTrigger += rate * cfg.underBudgetRateFactor
    fullMessageWindow += cfg.underBudgetWindowStep
    minRelevance -= rate * cfg.underBudgetRateFactor
    adjustments.push(
      `under budget (usage ${observed.usageRatio.toFixed(3)} < ${(target - cfg.underBudgetMargin).toFixed(2)}): relax`,
    )
  }
  if (observed.savingsRatio < cfg.emergencySavingsRatio && observed.usageRatio > target) {
    rules.push('EMERGENCY')
    compressionTrigger -= rate * cfg.emergencyRateFactor
    minRelevance += rate * cfg.emergencyRateFactor
    adjustments.push(
      `emergency (savings ${(observed.savingsRatio * 100).toFixed(1)}% < ${round(cfg.emergencySavingsRatio * 100)}% while over target)`,
    )
  }
  const ranges = parameterRanges(cfg)
  const adapted = {
    compressionTrigger: round(clamp(compressionTrigger, ranges.compressionTrigger)),
    fullMessageWindow: Math.round(clamp(fullMessageWindow, ranges.fullMessageWindow)),
    minRelevance: round(clamp(minRelevance, ranges.minRelevance)),
    targetUsageRatio: target,
  }
  const changes: ParameterChange[] = TUNED_PARAMETERS.flatMap((parameter) =>
    parameters[parameter] === adapted[parameter]
      ? []
      : [{ parameter, from: parameters[parameter], to: adapted[parameter] }],
  )
  return { parameters: adapted, adjustments, rules, changes }
}

/** The adaptation rules of spec 000 a run can fire (none: usage was within its margins of the target). */
export type OptimizerRule = 'OVER_BUDGET' | 'UNDER_BUDGET' | 'EMERGENCY'

const TUNED_PARAMETERS = ['compressionTrigger', 'fullMessageWindow', 'minRelevance'] as const
export type TunedParameter = (typeof TUNED_PARAMETERS)[number]

/** One tuned parameter a run changed (a rule that pushed a parameter already at its bound changes nothing). */
export interface ParameterChange {
  parameter: TunedParameter
  from: number
  to: number
}

/** An entry a run promoted to long-term memory and the key facts that qualified it. */
export interface PromotionExplanation {
  entryId: string
  /** The entry's text, cut to MAX_PROMOTION_EXCERPT_CHARS: enough to recognise it. */
  excerpt: string
  relevance: number
  keyFacts: KeyFact[]
}

/** Promotions explained per snapshot: a run promoting thousands records the first ones and the count. */
export const MAX_EXPLAINED_PROMOTIONS = 50
export const MAX_PROMOTION_EXCERPT_CHARS = 160

/**
 * Why a run changed what it changed: the usage it measured against the target and the margins,
 * the rules that fired, each parameter's change, the promotions and their key facts. Recorded
 * with the snapshot so a user can tell why (say) an idle agent's parameters relaxed.
 */
export interface OptimizerExplanation {
  rules: OptimizerRule[]
  /** One line per rule, as the optimizer logs it. */
  summary: string[]
  usageRatio: number
  savingsRatio: number
  targetUsageRatio: number
  /** Usage above this fires OVER_BUDGET; below underBudgetBelow, UNDER_BUDGET. */
  overBudgetAbove: number
  underBudgetBelow: number
  /** EMERGENCY fires when usage is over the target and savings under this share. */
  emergencySavingsBelow: number
  changes: ParameterChange[]
  keyFactMode: KeyFactMode
  promotions: PromotionExplanation[]
  /** Promotions in the run, including those past MAX_EXPLAINED_PROMOTIONS. */
  promotionCount: number
}

export type PlannedAction =
  | {
      entryId: string
      action: 'compress'
      content: string
      tokenCount: number
      tokensFreed: number
      reason: string
    }
  | { entryId: string; action: 'drop'; tokensFreed: number; reason: string }
  | {
      entryId: string
      action: 'promote'
      relevance: 1
      type: Extract<MemoryType, 'long_term'>
      reason: string
      keyFacts: KeyFact[]
    }

export interface OptimizationSnapshot {
  tokensBefore: number
  tokensAfter: number
  entriesCompressed: number
  entriesDropped: number
  entriesPromoted: number
  usageRatio: number
  compressionTriggerRatio: number
  fullMessageWindow: number
  minRelevanceScore: number
  timestamp: Date
  /** Null for snapshots recorded before runs explained themselves. */
  explanation: OptimizerExplanation | null
}

export interface OptimizerStepInput {
  entries: readonly MemoryEntry[]
  parameters: OptimizerParameters
  now: Date
  tokenCounter: TokenCounter
  budget?: Partial<TokenBudgetConfig>
  config?: Partial<OptimizerConfig>
  /** Finds redundant entries (default: findRedundantEntries over all of them). */
  findRedundant?: RedundancyFinder
  /** Each entry's content features (default: computed from its text). */
  contentFeatures?: ContentFeatureSource
  /** What counts as an error key fact (default: spec 000's words). */
  keyFactMode?: KeyFactMode
}

export interface OptimizerStepResult {
  actions: PlannedAction[]
  parameters: OptimizerParameters
  adjustments: string[]
  snapshot: OptimizationSnapshot
}

/**
 * One optimizer run, steps 2-7 of the spec, without I/O: measure usage, analyze, turn each
 * suggestion into a concrete change, adapt the parameters, describe it all in a snapshot.
 */
export function runOptimizerStep(input: OptimizerStepInput): OptimizerStepResult {
  const config = input.config ? parseOptimizerConfig(input.config) : DEFAULT_OPTIMIZER_CONFIG
  const budget = parseTokenBudgetConfig(input.budget)
  const available = availableBudget(budget)
  const keyFactMode = input.keyFactMode ?? 'spec'
  const tokensBefore = input.entries.reduce((sum, e) => sum + e.tokenCount, 0)
  const usageRatio = tokensBefore / available
  const byId = new Map(input.entries.map((e) => [e.id, e]))
  const analysis = analyzeEntries(
    input.entries,
    input.now,
    { minRelevance: input.parameters.minRelevance, keyFactMode },
    input.findRedundant,
    input.contentFeatures,
  )

  const actions: PlannedAction[] = []
  const promotions: PromotionExplanation[] = []
  let saved = 0
  const compress = (entry: MemoryEntry, reason: string) => {
    const compressed = compressMessage({ role: entry.role, content: entry.content })
    const tokenCount = compressed.compressed ? input.tokenCounter.count(compressed.content) : entry.tokenCount
    // A compression that would not shrink the entry keeps its size (the count never grows).
    const kept = Math.min(tokenCount, entry.tokenCount)
    const content = kept === tokenCount ? compressed.content : entry.content
    saved += entry.tokenCount - kept
    actions.push({
      entryId: entry.id,
      action: 'compress',
      content,
      tokenCount: kept,
      tokensFreed: entry.tokenCount - kept,
      reason,
    })
  }
  const drop = (entry: MemoryEntry, reason: string) => {
    saved += entry.tokenCount
    actions.push({ entryId: entry.id, action: 'drop', tokensFreed: entry.tokenCount, reason })
  }
  for (const suggestion of analysis.actions) {
    const entry = byId.get(suggestion.entryId) as MemoryEntry
    if (suggestion.action === 'compress') compress(entry, suggestion.reason)
    else if (suggestion.action === 'drop') drop(entry, suggestion.reason)
    else {
      const keyFacts = suggestion.keyFacts ?? []
      actions.push({
        entryId: entry.id,
        action: 'promote',
        relevance: 1,
        type: 'long_term',
        reason: suggestion.reason,
        keyFacts,
      })
      if (promotions.length < MAX_EXPLAINED_PROMOTIONS) {
        promotions.push({
          entryId: entry.id,
          excerpt:
            entry.content.length > MAX_PROMOTION_EXCERPT_CHARS
              ? `${entry.content.slice(0, MAX_PROMOTION_EXCERPT_CHARS - 1)}…`
              : entry.content,
          relevance: suggestion.relevance,
          keyFacts,
        })
      }
    }
  }
  relieveBudgetPressure(input.entries, new Set(actions.map((a) => a.entryId)), {
    usedTokens: () => tokensBefore - saved,
    triggerTokens: input.parameters.compressionTrigger * available,
    maxShortTermTokens: budget.maxShortTermTokens,
    fullMessageWindow: input.parameters.fullMessageWindow,
    compress,
    drop,
  })
  const tokensAfter = tokensBefore - saved
  const savingsRatio = tokensBefore === 0 ? 0 : saved / tokensBefore
  const adapted = adaptParameters(input.parameters, { usageRatio, savingsRatio }, config)
  const count = (kind: PlannedAction['action']) => actions.filter((a) => a.action === kind).length
  return {
    actions,
    parameters: adapted.parameters,
    adjustments: adapted.adjustments,
    snapshot: {
      tokensBefore,
      tokensAfter,
      entriesCompressed: count('compress'),
      entriesDropped: count('drop'),
      entriesPromoted: count('promote'),
      usageRatio: round(usageRatio),
      compressionTriggerRatio: adapted.parameters.compressionTrigger,
      fullMessageWindow: adapted.parameters.fullMessageWindow,
      minRelevanceScore: adapted.parameters.minRelevance,
      timestamp: input.now,
      explanation: {
        rules: adapted.rules,
        summary: adapted.adjustments,
        usageRatio: round(usageRatio),
        savingsRatio: round(savingsRatio),
        targetUsageRatio: input.parameters.targetUsageRatio,
        overBudgetAbove: round(input.parameters.targetUsageRatio + config.overBudgetMargin),
        underBudgetBelow: round(input.parameters.targetUsageRatio - config.underBudgetMargin),
        emergencySavingsBelow: config.emergencySavingsRatio,
        changes: adapted.changes,
        keyFactMode,
        promotions,
        promotionCount: count('promote'),
      },
    },
  }
}

/** The spec's efficiency report. */
export function efficiencyReport(
  history: { totalOptimizations: number; totalTokensSaved: number },
  parameters: OptimizerParameters,
): {
  totalOptimizations: number
  totalTokensSaved: number
  avgSavingsPerRun: number
  currentParameters: OptimizerParameters
} {
  return {
    totalOptimizations: history.totalOptimizations,
    totalTokensSaved: history.totalTokensSaved,
    avgSavingsPerRun:
      history.totalOptimizations === 0
        ? 0
        : Math.round(history.totalTokensSaved / history.totalOptimizations),
    currentParameters: parameters,
  }
}

/**
 * Spec 000, Tier 1: "when the token budget reaches the compression threshold, older messages are
 * compressed or dropped", and short-term memory holds at most maxShortTermTokens. After the
 * analyzer's actions, while usage is over the (tuned) compression trigger or short-term memory
 * over its cap, the oldest short-term entries outside the (tuned) full message window are
 * compressed, oldest first; if that is not enough, the oldest compressed ones are dropped.
 */
function relieveBudgetPressure(
  entries: readonly MemoryEntry[],
  alreadyActed: ReadonlySet<string>,
  pressure: {
    usedTokens: () => number
    triggerTokens: number
    maxShortTermTokens: number
    fullMessageWindow: number
    compress: (entry: MemoryEntry, reason: string) => void
    drop: (entry: MemoryEntry, reason: string) => void
  },
): void {
  const shortTerm = entries
    .filter((e) => e.type === 'short_term')
    .sort(
      (a, b) =>
        a.timestamp.getTime() - b.timestamp.getTime() || a.id.localeCompare(b.id, 'en', { numeric: true }),
    )
  let shortTermTokens = shortTerm.reduce((sum, e) => sum + e.tokenCount, 0)
  const over = () =>
    pressure.usedTokens() > pressure.triggerTokens || shortTermTokens > pressure.maxShortTermTokens
  if (!over()) return
  const older = shortTerm
    .slice(0, Math.max(0, shortTerm.length - pressure.fullMessageWindow))
    .filter((e) => !alreadyActed.has(e.id))
  const reason = () =>
    `budget pressure: ${pressure.usedTokens()} tokens > trigger ${Math.round(pressure.triggerTokens)} or short-term ${shortTermTokens} > ${pressure.maxShortTermTokens}`
  for (const entry of older) {
    if (!over()) return
    if (entry.isCompressed) continue
    const before = pressure.usedTokens()
    pressure.compress(entry, reason())
    shortTermTokens -= before - pressure.usedTokens()
  }
  for (const entry of older) {
    if (!over()) return
    const before = pressure.usedTokens()
    if (entry.isCompressed) pressure.drop(entry, reason())
    shortTermTokens -= before - pressure.usedTokens()
  }
}
