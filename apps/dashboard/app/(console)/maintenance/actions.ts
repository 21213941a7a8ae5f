'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'

export interface RunState {
  message?: string
  runId?: string
}

/** Runs maintenance now (dry or for real); the page re-reads the runs table. */
export async function runMaintenanceNow(dryRun: boolean): Promise<RunState> {
  const { runMaintenance } = await gql<{
    runMaintenance: ErrorPayload & { id?: string; removed?: { conversations: number; messages: number } }
  }>(
    `mutation($d: Boolean) { runMaintenance(dryRun: $d) { __typename ... on MaintenanceRun { id removed { conversations messages } } ${ERROR_FIELDS} } }`,
    { d: dryRun },
  )
  revalidatePath('/maintenance')
  if (runMaintenance.__typename !== 'MaintenanceRun') return { message: runMaintenance.message ?? 'failed' }
  const removed = runMaintenance.removed
  return {
    runId: runMaintenance.id,
    message: `${dryRun ? 'Dry run: would remove' : 'Removed'} ${removed?.conversations ?? 0} conversation(s), ${removed?.messages ?? 0} message(s).`,
  }
}

export interface RetentionState {
  message?: string
  issues?: ErrorPayload['issues']
}

/** An agent's own retention in days; empty returns it to the server's. */
export async function setRetention(_state: RetentionState, form: FormData): Promise<RetentionState> {
  const agentId = String(form.get('agentId') ?? '')
  const raw = String(form.get('retentionDays') ?? '').trim()
  const days = raw === '' ? null : Number(raw)
  const { updateMaintenanceSettings } = await gql<{
    updateMaintenanceSettings: ErrorPayload & { effectiveRetentionDays?: number }
  }>(
    `mutation($a: ID!, $d: Int) { updateMaintenanceSettings(agentId: $a, retentionDays: $d) { __typename ... on AgentMaintenanceSettings { effectiveRetentionDays } ${ERROR_FIELDS} } }`,
    { a: agentId, d: days },
  )
  if (updateMaintenanceSettings.__typename !== 'AgentMaintenanceSettings')
    return { message: updateMaintenanceSettings.message, issues: updateMaintenanceSettings.issues }
  revalidatePath('/maintenance')
  return {
    message: `${agentId} keeps episodic memory ${updateMaintenanceSettings.effectiveRetentionDays} days.`,
  }
}
