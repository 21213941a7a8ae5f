import {
  DEFAULT_OPTIMIZER_PARAMETERS,
  type OptimizerParameters,
  OptimizerParametersSchema,
} from '@engram/core'
import type { Database, Transaction } from '../db/client.ts'

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

/** The spec's `adaptive_parameters` key-value table: learned parameters survive restarts. */
export class ParameterStore {
  constructor(private readonly db: Database) {}

  async load(scope: string, db: Database | Transaction = this.db): Promise<OptimizerParameters> {
    const rows = await db.adaptiveParameter.findMany({ where: { agentId: scope } })
    const stored = Object.fromEntries(rows.map((row) => [row.key, row.value]))
    const candidate = { ...DEFAULT_OPTIMIZER_PARAMETERS }
    for (const key of PARAMETER_KEYS) if (typeof stored[key] === 'number') candidate[key] = stored[key]
    // A row edited by hand outside the ranges falls back to the defaults rather than poisoning runs.
    const parsed = OptimizerParametersSchema.safeParse(candidate)
    return parsed.success ? parsed.data : { ...DEFAULT_OPTIMIZER_PARAMETERS }
  }

  async save(
    scope: string,
    parameters: OptimizerParameters,
    db: Database | Transaction = this.db,
  ): Promise<void> {
    for (const key of PARAMETER_KEYS) await this.put(db, scope, key, parameters[key])
  }

  async totals(scope: string, db: Database | Transaction = this.db): Promise<OptimizerTotals> {
    const rows = await db.adaptiveParameter.findMany({
      where: { agentId: scope, key: { in: Object.values(STAT_KEYS) } },
    })
    const value = (key: string) => rows.find((row) => row.key === key)?.value ?? 0
    return {
      totalOptimizations: value(STAT_KEYS.totalOptimizations),
      totalTokensSaved: value(STAT_KEYS.totalTokensSaved),
    }
  }

  async addRun(scope: string, tokensSaved: number, db: Database | Transaction): Promise<void> {
    const totals = await this.totals(scope, db)
    await this.put(db, scope, STAT_KEYS.totalOptimizations, totals.totalOptimizations + 1)
    await this.put(db, scope, STAT_KEYS.totalTokensSaved, totals.totalTokensSaved + tokensSaved)
  }

  private async put(db: Database | Transaction, scope: string, key: string, value: number): Promise<void> {
    await db.adaptiveParameter.upsert({
      where: { agentId_key: { agentId: scope, key } },
      create: { agentId: scope, key, value },
      update: { value },
    })
  }
}
