import {
  DEFAULT_OPTIMIZER_PARAMETERS,
  type OptimizerParameters,
  OptimizerParametersSchema,
} from '@engram/core'
import type { ParameterRepository } from '../ports/repositories.ts'

export const PARAMETER_KEYS = [
  'compressionTrigger',
  'fullMessageWindow',
  'minRelevance',
  'targetUsageRatio',
] as const
// Lifetime totals for the efficiency report live beside the parameters: the snapshot history
// is pruned to the newest 500, the totals are not.
export const STAT_KEYS = {
  totalOptimizations: 'stats.totalOptimizations',
  totalTokensSaved: 'stats.totalTokensSaved',
} as const

export interface OptimizerTotals {
  totalOptimizations: number
  totalTokensSaved: number
}

/**
 * The spec's `adaptive_parameters`: learned parameters survive restarts. Each method runs on the
 * repository it is given, so the optimizer saves a run's parameters in the run's transaction.
 */
export class ParameterStore {
  constructor(private readonly parameters: ParameterRepository) {}

  async load(scope: string, parameters: ParameterRepository = this.parameters): Promise<OptimizerParameters> {
    const stored = await parameters.values(scope, PARAMETER_KEYS)
    const candidate = { ...DEFAULT_OPTIMIZER_PARAMETERS }
    for (const key of PARAMETER_KEYS) {
      const value = stored.get(key)
      if (typeof value === 'number') candidate[key] = value
    }
    // A row edited by hand outside the ranges falls back to the defaults rather than poisoning runs.
    const parsed = OptimizerParametersSchema.safeParse(candidate)
    return parsed.success ? parsed.data : { ...DEFAULT_OPTIMIZER_PARAMETERS }
  }

  async save(
    scope: string,
    values: OptimizerParameters,
    parameters: ParameterRepository = this.parameters,
  ): Promise<void> {
    for (const key of PARAMETER_KEYS) await parameters.put(scope, key, values[key])
  }

  async totals(scope: string, parameters: ParameterRepository = this.parameters): Promise<OptimizerTotals> {
    const stored = await parameters.values(scope, Object.values(STAT_KEYS))
    return {
      totalOptimizations: stored.get(STAT_KEYS.totalOptimizations) ?? 0,
      totalTokensSaved: stored.get(STAT_KEYS.totalTokensSaved) ?? 0,
    }
  }

  async addRun(scope: string, tokensSaved: number, parameters: ParameterRepository): Promise<void> {
    const totals = await this.totals(scope, parameters)
    await parameters.put(scope, STAT_KEYS.totalOptimizations, totals.totalOptimizations + 1)
    await parameters.put(scope, STAT_KEYS.totalTokensSaved, totals.totalTokensSaved + tokensSaved)
  }
}
