'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'
import { MEMORY_CATEGORY_LABELS } from '../../../lib/memories'

type Issue = NonNullable<ErrorPayload['issues']>[number]

/** Builds a new version of the user's profile now; earlier versions are kept. */
export async function regenerateProfile(
  agentId: string,
  userId: string | null,
): Promise<{ version?: number; error?: string }> {
  const { regenerateProfile: result } = await gql<{ regenerateProfile: ErrorPayload & { version?: number } }>(
    `mutation($a: ID, $u: String) { regenerateProfile(agentId: $a, userId: $u) { __typename ... on ProfileVersion { version } ${ERROR_FIELDS} } }`,
    { a: agentId, u: userId },
  )
  if (result.__typename !== 'ProfileVersion') return { error: result.message ?? 'the rebuild failed' }
  revalidatePath('/profile')
  return { version: result.version }
}

export interface OverrideFormState {
  ok?: boolean
  message?: string
  issues?: Issue[]
  values?: Record<string, string>
}

/** A user override is a pinned memory of that user: it always wins over what the profile says. */
export async function addOverride(_state: OverrideFormState, form: FormData): Promise<OverrideFormState> {
  const values: Record<string, string> = {}
  for (const [key, value] of form.entries()) if (typeof value === 'string') values[key] = value
  const category = String(form.get('category') ?? '')
  if (!(category in MEMORY_CATEGORY_LABELS))
    return { ok: false, issues: [{ field: 'category', message: 'choose a category', limit: null }], values }
  const userId = String(form.get('userId') ?? '')
  const { createMemory: result } = await gql<{
    createMemory: ErrorPayload & { outcome?: string; memory?: { id: string } }
  }>(
    `mutation($input: CreateMemoryInput!) { createMemory(input: $input) { __typename ... on MemoryWrite { outcome memory { id } } ${ERROR_FIELDS} } }`,
    {
      input: {
        agentId: String(form.get('agentId')),
        content: String(form.get('content') ?? ''),
        category,
        pinned: true,
        userId: userId || null,
      },
    },
  )
  if (result.__typename !== 'MemoryWrite' || !result.memory)
    return { ok: false, message: result.message, issues: result.issues, values }
  revalidatePath('/profile')
  return {
    ok: true,
    message:
      result.outcome === 'DUPLICATE'
        ? `Already known as #${result.memory.id}: not stored again.`
        : `Pinned as #${result.memory.id}.`,
  }
}

/** Removing an override unpins the memory: it stays a memory, the profile no longer has to show it. */
export async function removeOverride(agentId: string, id: string): Promise<{ error?: string }> {
  const { updateMemory: result } = await gql<{ updateMemory: ErrorPayload }>(
    `mutation($input: UpdateMemoryInput!) { updateMemory(input: $input) { __typename ${ERROR_FIELDS} } }`,
    { input: { agentId, id, pinned: false } },
  )
  if (result.__typename !== 'MemoryItem') return { error: result.message ?? 'the change failed' }
  revalidatePath('/profile')
  return {}
}
