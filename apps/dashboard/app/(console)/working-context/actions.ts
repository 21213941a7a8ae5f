'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'

export interface WorkingContextActionResult {
  message?: string
  error?: string
}

/** Stores the agent's working context in its conversations now (the scratchpad stays). */
export async function flushWorkingContext(agentId: string): Promise<WorkingContextActionResult> {
  const { flushWorkingContext: result } = await gql<{
    flushWorkingContext: ErrorPayload & { flush?: { messages: number; conversationIds: string[] } | null }
  }>(
    `mutation($a: ID) { flushWorkingContext(agentId: $a) { __typename ... on WorkingContextChange { flush { messages conversationIds } } ${ERROR_FIELDS} } }`,
    { a: agentId },
  )
  if (result.__typename !== 'WorkingContextChange') return { error: result.message ?? 'the flush failed' }
  revalidatePath('/working-context')
  const flush = result.flush
  return {
    message: flush
      ? `Stored ${flush.messages} message${flush.messages === 1 ? '' : 's'} in ${flush.conversationIds.join(', ')}.`
      : 'Nothing to flush.',
  }
}

/** Empties the agent's working context, scratchpad included, storing nothing. */
export async function clearWorkingContext(agentId: string): Promise<WorkingContextActionResult> {
  const { clearWorkingContext: result } = await gql<{ clearWorkingContext: ErrorPayload }>(
    `mutation($a: ID) { clearWorkingContext(agentId: $a) { __typename ${ERROR_FIELDS} } }`,
    { a: agentId },
  )
  if (result.__typename !== 'WorkingContext') return { error: result.message ?? 'the clear failed' }
  revalidatePath('/working-context')
  return { message: 'Cleared.' }
}
