'use server'

import { revalidatePath } from 'next/cache'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'

export interface FormState {
  ok?: boolean
  message?: string
  issues?: ErrorPayload['issues']
}

const CATEGORIES = ['DOMAIN', 'EXECUTION_PATTERN', 'USER_PREFERENCE', 'WEBSITE_KNOWLEDGE', 'ERROR_PATTERN']

function confidenceOf(form: FormData): number | null | 'invalid' {
  const raw = String(form.get('confidence') ?? '').trim()
  if (raw === '') return null
  const value = Number(raw)
  return Number.isFinite(value) ? value : 'invalid'
}

function result(payload: ErrorPayload, success: string): FormState {
  if (payload.__typename === 'Knowledge' || payload.__typename === 'DeleteKnowledgeItemsPayload') {
    revalidatePath('/knowledge')
    return { ok: true, message: success }
  }
  return { ok: false, message: payload.message, issues: payload.issues }
}

export async function createKnowledge(_state: FormState, form: FormData): Promise<FormState> {
  const confidence = confidenceOf(form)
  if (confidence === 'invalid')
    return {
      ok: false,
      issues: [{ field: 'confidence', message: 'must be a number between 0.0 and 1.0', limit: '0..1' }],
    }
  const category = String(form.get('category'))
  if (!CATEGORIES.includes(category))
    return { ok: false, issues: [{ field: 'category', message: 'choose a category', limit: null }] }
  const { storeKnowledge } = await gql<{ storeKnowledge: ErrorPayload }>(
    `mutation($input: StoreKnowledgeInput!) { storeKnowledge(input: $input) { __typename ${ERROR_FIELDS} } }`,
    {
      input: {
        agentId: String(form.get('agentId') ?? ''),
        category,
        key: String(form.get('key') ?? ''),
        value: String(form.get('value') ?? ''),
        confidence,
      },
    },
  )
  return result(storeKnowledge, 'Saved.')
}

export async function updateKnowledge(_state: FormState, form: FormData): Promise<FormState> {
  const confidence = confidenceOf(form)
  if (confidence === 'invalid')
    return {
      ok: false,
      issues: [{ field: 'confidence', message: 'must be a number between 0.0 and 1.0', limit: '0..1' }],
    }
  const { updateKnowledge } = await gql<{ updateKnowledge: ErrorPayload }>(
    `mutation($input: UpdateKnowledgeInput!) { updateKnowledge(input: $input) { __typename ${ERROR_FIELDS} } }`,
    {
      input: {
        agentId: String(form.get('agentId')),
        id: String(form.get('id')),
        value: String(form.get('value') ?? ''),
        category: String(form.get('category')),
        confidence,
      },
    },
  )
  return result(updateKnowledge, 'Updated.')
}

export async function deleteKnowledge(agentId: string, id: string): Promise<FormState> {
  const { deleteKnowledge } = await gql<{ deleteKnowledge: ErrorPayload }>(
    `mutation($a: ID, $id: ID!) { deleteKnowledge(agentId: $a, id: $id) { __typename ${ERROR_FIELDS} } }`,
    { a: agentId, id },
  )
  return result(deleteKnowledge, 'Deleted.')
}

export async function deleteKnowledgeItems(ids: string[]): Promise<FormState> {
  const { deleteKnowledgeItems } = await gql<{ deleteKnowledgeItems: ErrorPayload }>(
    `mutation($ids: [ID!]!) { deleteKnowledgeItems(ids: $ids) { __typename ${ERROR_FIELDS} } }`,
    { ids },
  )
  return result(deleteKnowledgeItems, `Deleted ${ids.length}.`)
}
