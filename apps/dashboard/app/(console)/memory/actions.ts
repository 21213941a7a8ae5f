'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'

const MUTATIONS = { COMPRESS: 'compressEntry', DROP: 'dropEntry', PROMOTE: 'promoteEntry' } as const

/** Applies one of the analyzer's suggestions to its entry. */
export async function applySuggestion(
  agentId: string,
  entryId: string,
  action: keyof typeof MUTATIONS,
): Promise<string | null> {
  const field = MUTATIONS[action]
  const data = await gql<Record<string, ErrorPayload>>(
    `mutation($a: ID, $id: ID!) { ${field}(agentId: $a, id: $id) { __typename ${ERROR_FIELDS} } }`,
    { a: agentId, id: entryId },
  )
  revalidatePath('/memory')
  const payload = data[field] as ErrorPayload
  return payload.__typename === 'MemoryEntry' ? null : (payload.message ?? 'failed')
}
