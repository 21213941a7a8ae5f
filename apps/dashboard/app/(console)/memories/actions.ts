'use server'

import { revalidatePath } from 'next/cache'
import { submitted } from '../../../lib/answers'
import { ERROR_FIELDS, type ErrorPayload, gql } from '../../../lib/api'
import {
  EMBEDDING_PROGRESS_FIELDS,
  type EmbeddingProgress,
  MEMORY_CATEGORY_LABELS,
  parseTags,
  SEARCH_HIT_FIELDS,
  SEARCH_SCOPES,
  SEARCH_STRATEGIES,
  type SearchHit,
} from '../../../lib/memories'

type Issue = NonNullable<ErrorPayload['issues']>[number]

/** What a write did, in the words the form shows. */
type MemoryRef = { id: string; content: string }

export interface WriteOutcome {
  outcome: 'STORED' | 'DUPLICATE' | 'SUPERSEDED'
  /** The stored memory, or for a duplicate the existing one. */
  memory: MemoryRef
  duplicateOf: MemoryRef | null
  superseded: MemoryRef | null
  layer: string | null
  similarity: number | null
  evicted: MemoryRef[]
}

export interface MemoryFormState {
  ok?: boolean
  message?: string
  issues?: Issue[]
  write?: WriteOutcome
  /** What was submitted, when it was refused: React resets a form after its action, the fields show these. */
  values?: Record<string, string>
}

const WRITE_FIELDS = `... on MemoryWrite { outcome layer similarity memory { id content } duplicateOf { id content } superseded { id content } evicted { id content } }`

/** A number field: null when empty, an issue when it is not a number (the API checks the range). */
function numberField(form: FormData, field: string, issues: Issue[]): number | null {
  const raw = String(form.get(field) ?? '').trim()
  if (raw === '') return null
  const value = Number(raw)
  if (Number.isFinite(value)) return value
  issues.push({ field, message: 'must be a number between 0.0 and 1.0', limit: '0..1' })
  return null
}

/** tags.3 → tags: the form has one field for all tags. */
function formIssues(issues: Issue[] | undefined): Issue[] | undefined {
  return issues?.map((issue) => ({ ...issue, field: issue.field.replace(/(^|\.)tags\.\d+$/, '$1tags') }))
}

function failed(payload: ErrorPayload, form: FormData): MemoryFormState {
  return { ok: false, message: payload.message, issues: formIssues(payload.issues), values: submitted(form) }
}

export async function createMemory(_state: MemoryFormState, form: FormData): Promise<MemoryFormState> {
  const issues: Issue[] = []
  const importance = numberField(form, 'importance', issues)
  const category = String(form.get('category') ?? '')
  if (!(category in MEMORY_CATEGORY_LABELS))
    issues.push({ field: 'category', message: 'choose a category', limit: null })
  if (issues.length) return { ok: false, issues, values: submitted(form) }
  const { createMemory: result } = await gql<{
    createMemory: ErrorPayload & {
      outcome?: WriteOutcome['outcome']
      layer?: string | null
      similarity?: number | null
      memory?: MemoryRef
      duplicateOf?: MemoryRef | null
      superseded?: MemoryRef | null
      evicted?: MemoryRef[]
    }
  }>(
    `mutation($input: CreateMemoryInput!) { createMemory(input: $input) { __typename ${WRITE_FIELDS} ${ERROR_FIELDS} } }`,
    {
      input: {
        agentId: String(form.get('agentId') ?? ''),
        content: String(form.get('content') ?? ''),
        category,
        tags: parseTags(String(form.get('tags') ?? '')),
        importance,
        pinned: form.get('pinned') === 'on',
      },
    },
  )
  if (result.__typename !== 'MemoryWrite' || !result.outcome || !result.memory) return failed(result, form)
  revalidatePath('/memories')
  return {
    ok: true,
    write: {
      outcome: result.outcome,
      memory: result.memory,
      duplicateOf: result.duplicateOf ?? null,
      superseded: result.superseded ?? null,
      layer: result.layer ?? null,
      similarity: result.similarity ?? null,
      evicted: result.evicted ?? [],
    },
  }
}

export async function updateMemory(_state: MemoryFormState, form: FormData): Promise<MemoryFormState> {
  const issues: Issue[] = []
  const importance = numberField(form, 'importance', issues)
  const confidence = numberField(form, 'confidence', issues)
  if (issues.length) return { ok: false, issues, values: submitted(form) }
  const { updateMemory: result } = await gql<{ updateMemory: ErrorPayload }>(
    `mutation($input: UpdateMemoryInput!) { updateMemory(input: $input) { __typename ${ERROR_FIELDS} } }`,
    {
      input: {
        agentId: String(form.get('agentId')),
        id: String(form.get('id')),
        content: String(form.get('content') ?? ''),
        category: String(form.get('category')),
        tags: parseTags(String(form.get('tags') ?? '')),
        importance,
        confidence,
        pinned: form.get('pinned') === 'on',
      },
    },
  )
  if (result.__typename !== 'MemoryItem') return failed(result, form)
  revalidatePath('/memories')
  return { ok: true, message: 'Saved.' }
}

export async function deleteMemory(agentId: string, id: string): Promise<MemoryFormState> {
  const { deleteMemory: result } = await gql<{ deleteMemory: ErrorPayload }>(
    `mutation($a: ID, $id: ID!) { deleteMemory(agentId: $a, id: $id) { __typename ${ERROR_FIELDS} } }`,
    { a: agentId, id },
  )
  if (result.__typename !== 'MemoryItem') return { ok: false, message: result.message ?? 'Delete failed.' }
  revalidatePath('/memories')
  return { ok: true, message: `Deleted #${id}.` }
}

/**
 * Starts re-embedding. The mutation answers with the state it found (the job starts in the
 * background), so the page follows the run on the embeddingProgress feed.
 */
export async function startReembed(): Promise<{ progress?: EmbeddingProgress; error?: string }> {
  const { reembed } = await gql<{ reembed: ErrorPayload & Partial<EmbeddingProgress> }>(
    `mutation { reembed { __typename ... on EmbeddingProgress { ${EMBEDDING_PROGRESS_FIELDS} } ${ERROR_FIELDS} } }`,
  )
  return reembed.__typename === 'EmbeddingProgress'
    ? { progress: reembed as unknown as EmbeddingProgress }
    : { error: reembed.message ?? 'could not start re-embedding' }
}

/** The latest state, for when the live feed is down. */
export async function embeddingStatus(): Promise<EmbeddingProgress> {
  const { embeddingStatus: status } = await gql<{ embeddingStatus: EmbeddingProgress }>(
    `{ embeddingStatus { ${EMBEDDING_PROGRESS_FIELDS} } }`,
  )
  return status
}

export interface SearchState {
  query?: string
  scopes?: string[]
  strategy?: string
  hits?: SearchHit[]
  /** The MMR λ the hits were ranked with: 1 is score order. */
  mmrLambda?: number
  error?: string
}

/**
 * Runs a search. An action rather than page URL parameters: the API counts every hit as an access,
 * so a reload, a refresh after an edit or a prefetch must not search again.
 */
export async function searchMemory(_state: SearchState, form: FormData): Promise<SearchState> {
  const query = String(form.get('query') ?? '').trim()
  const chosen = form
    .getAll('scope')
    .map(String)
    .filter((s) => s in SEARCH_SCOPES)
  const scopes = chosen.length ? chosen : ['MEMORIES']
  const strategy = String(form.get('strategy') ?? 'HYBRID')
  const echo = { query, scopes, strategy }
  if (!query) return { ...echo, error: 'Type what to look for.' }
  if (!(strategy in SEARCH_STRATEGIES)) return { ...echo, error: 'Choose a strategy.' }
  const { search } = await gql<{ search: ErrorPayload & { hits?: SearchHit[]; mmrLambda?: number } }>(
    `query($input: SearchInput!) { search(input: $input) { __typename ... on SearchResult { mmrLambda hits { ${SEARCH_HIT_FIELDS} } } ${ERROR_FIELDS} } }`,
    { input: { agentId: String(form.get('agentId') ?? ''), query, scopes, strategy } },
  )
  if (search.__typename !== 'SearchResult') return { ...echo, error: search.message ?? 'The search failed.' }
  return { ...echo, hits: search.hits ?? [], mmrLambda: search.mmrLambda ?? 1 }
}
