'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'
import { EXPLANATION_FIELDS, SNAPSHOT_FIELDS, type Snapshot } from '../../../lib/snapshots'

export interface ParametersState {
  ok?: boolean
  message?: string
  issues?: ErrorPayload['issues']
}

/** Runs the optimizer; returns the snapshot too, so the page updates even if the live feed lags. */
export async function runOptimizerNow(agentId: string): Promise<{ snapshot?: Snapshot; error?: string }> {
  const { runOptimizer } = await gql<{ runOptimizer: ErrorPayload & Partial<Snapshot> }>(
    `mutation($a: ID) { runOptimizer(agentId: $a) { __typename ... on OptimizationSnapshot { ${SNAPSHOT_FIELDS} ${EXPLANATION_FIELDS} } ${ERROR_FIELDS} } }`,
    { a: agentId },
  )
  return runOptimizer.id
    ? { snapshot: runOptimizer as unknown as Snapshot }
    : { error: runOptimizer.message ?? 'the run failed' }
}

export async function saveParameters(_state: ParametersState, form: FormData): Promise<ParametersState> {
  const input: Record<string, number> = {}
  const issues: NonNullable<ParametersState['issues']> = []
  for (const field of ['compressionTrigger', 'fullMessageWindow', 'minRelevance'] as const) {
    const raw = String(form.get(field) ?? '').trim()
    if (raw === '') continue
    const value = Number(raw)
    if (!Number.isFinite(value)) issues.push({ field, message: 'must be a number', limit: null })
    else input[field] = value
  }
  if (issues.length) return { ok: false, issues }
  const { setOptimizerParameters } = await gql<{ setOptimizerParameters: ErrorPayload }>(
    `mutation($a: ID!, $input: OptimizerParametersInput!) { setOptimizerParameters(agentId: $a, input: $input) { __typename ${ERROR_FIELDS} } }`,
    { a: String(form.get('agentId')), input },
  )
  if (setOptimizerParameters.__typename === 'OptimizerParameters') {
    revalidatePath('/optimizer')
    return { ok: true, message: 'Parameters saved.' }
  }
  return { ok: false, message: setOptimizerParameters.message, issues: setOptimizerParameters.issues }
}
