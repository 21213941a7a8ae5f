import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'

const ratio = (fallback: number) => z.number().gt(0).max(1).default(fallback)

/** Spec 000, Token Budget Management: the configuration block and the partition's constants. */
export const TokenBudgetConfigSchema = z.object({
  maxContextTokens: z.number().int().min(1_000).max(10_000_000).default(200_000),
  systemPromptTokens: z.number().int().min(0).max(10_000_000).default(5_000),
  responseReserveTokens: z.number().int().min(0).max(10_000_000).default(4_096),
  fullMessageWindow: z.number().int().min(0).max(100_000).default(30),
  compressionTriggerRatio: ratio(0.7),
  /** Older messages stay full while the running total is within this share of the budget. */
  fullSizeBudgetRatio: ratio(0.85),
  /** ...and are kept compressed while it is within this share. */
  compressedBudgetRatio: ratio(0.95),
  /** A compressed message is estimated at this share of its full size. */
  compressedSizeRatio: ratio(0.2),
  maxShortTermTokens: z.number().int().min(1).max(10_000_000).default(190_000),
})
export type TokenBudgetConfig = z.infer<typeof TokenBudgetConfigSchema>
export const DEFAULT_TOKEN_BUDGET: TokenBudgetConfig = TokenBudgetConfigSchema.parse({})

export function parseTokenBudgetConfig(input?: Partial<TokenBudgetConfig>): TokenBudgetConfig {
  return parseWith(TokenBudgetConfigSchema, input, 'budget')
}

/** maxContextTokens − systemPromptTokens − responseReserveTokens (190,904 by default). */
export function availableBudget(config: TokenBudgetConfig): number {
  const available = config.maxContextTokens - config.systemPromptTokens - config.responseReserveTokens
  if (available <= 0) {
    throw new ValidationError([
      {
        field: 'budget.maxContextTokens',
        message: `must exceed systemPromptTokens + responseReserveTokens (${config.systemPromptTokens + config.responseReserveTokens})`,
        limit: config.systemPromptTokens + config.responseReserveTokens,
      },
    ])
  }
  return available
}

export interface BudgetMessage {
  id: string
  tokenCount: number
}

export interface BudgetPartition<M extends BudgetMessage> {
  full: M[]
  compressed: { message: M; compressedTokens: number }[]
  dropped: M[]
  fullTokens: number
  compressedTokens: number
  droppedTokens: number
  /** What the window costs: full plus compressed. */
  totalTokens: number
  /** Every message at full size. */
  originalTokens: number
  availableBudget: number
  usageRatio: number
  underPressure: boolean
}

/**
 * Spec 000, Message Partitioning. Under the compression trigger nothing is touched. Otherwise the
 * most recent window is always kept full, and walking backwards from it each older message stays
 * full while the running total fits in 85% of the budget, else compressed (~20% size) while it
 * fits in 95%, else dropped. Each message is judged on its own, so a small old message can still
 * fit after a large one was dropped. All three sets come back oldest first.
 */
export function partitionMessages<M extends BudgetMessage>(
  messagesOldestFirst: readonly M[],
  config: Partial<TokenBudgetConfig> = {},
): BudgetPartition<M> {
  const cfg = parseTokenBudgetConfig(config)
  const available = availableBudget(cfg)
  const originalTokens = messagesOldestFirst.reduce((sum, m) => sum + m.tokenCount, 0)
  const usageRatio = originalTokens / available
  const underPressure = originalTokens > cfg.compressionTriggerRatio * available

  if (!underPressure) {
    return {
      full: [...messagesOldestFirst],
      compressed: [],
      dropped: [],
      fullTokens: originalTokens,
      compressedTokens: 0,
      droppedTokens: 0,
      totalTokens: originalTokens,
      originalTokens,
      availableBudget: available,
      usageRatio,
      underPressure,
    }
  }

  const windowStart = Math.max(0, messagesOldestFirst.length - cfg.fullMessageWindow)
  const fullLimit = cfg.fullSizeBudgetRatio * available
  const compressedLimit = cfg.compressedBudgetRatio * available
  const fullOlder: M[] = []
  const compressed: { message: M; compressedTokens: number }[] = []
  const dropped: M[] = []
  let used = 0
  for (let i = windowStart; i < messagesOldestFirst.length; i++)
    used += (messagesOldestFirst[i] as M).tokenCount
  const windowTokens = used

  for (let i = windowStart - 1; i >= 0; i--) {
    const message = messagesOldestFirst[i] as M
    const compressedTokens = Math.ceil(message.tokenCount * cfg.compressedSizeRatio)
    if (used + message.tokenCount <= fullLimit) {
      used += message.tokenCount
      fullOlder.push(message)
    } else if (used + compressedTokens <= compressedLimit) {
      used += compressedTokens
      compressed.push({ message, compressedTokens })
    } else {
      dropped.push(message)
    }
  }
  fullOlder.reverse()
  compressed.reverse()
  dropped.reverse()

  const fullTokens = windowTokens + fullOlder.reduce((s, m) => s + m.tokenCount, 0)
  const compressedTokens = compressed.reduce((s, c) => s + c.compressedTokens, 0)
  const droppedTokens = dropped.reduce((s, m) => s + m.tokenCount, 0)
  return {
    full: [...fullOlder, ...messagesOldestFirst.slice(windowStart)],
    compressed,
    dropped,
    fullTokens,
    compressedTokens,
    droppedTokens,
    totalTokens: fullTokens + compressedTokens,
    originalTokens,
    availableBudget: available,
    usageRatio,
    underPressure,
  }
}
