'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'

export interface CreateKeyState {
  key?: string
  agentId?: string
  message?: string
  issues?: ErrorPayload['issues']
}

export async function createKey(_state: CreateKeyState, form: FormData): Promise<CreateKeyState> {
  const agentId = String(form.get('agentId') ?? '').trim()
  const { createApiKey } = await gql<{ createApiKey: ErrorPayload & { key?: string } }>(
    `mutation($a: ID!, $l: String) { createApiKey(agentId: $a, label: $l) { __typename ... on CreatedApiKey { key } ${ERROR_FIELDS} } }`,
    { a: agentId, l: String(form.get('label') ?? '') || null },
  )
  if (createApiKey.key) {
    revalidatePath('/keys')
    return { key: createApiKey.key, agentId }
  }
  return { message: createApiKey.message, issues: createApiKey.issues }
}

export async function revokeKey(id: string): Promise<string | null> {
  const { revokeApiKey } = await gql<{ revokeApiKey: ErrorPayload }>(
    `mutation($id: ID!) { revokeApiKey(id: $id) { __typename ${ERROR_FIELDS} } }`,
    { id },
  )
  revalidatePath('/keys')
  return revokeApiKey.__typename === 'ApiKey' ? null : (revokeApiKey.message ?? 'failed')
}
