import { ApiError, type ErrorPayload } from './api'

// Server actions' answers: data, or a refusal the page shows in place (never a throw), so a bad
// input or a refused change keeps what is on screen. Shared by the pages' actions files, which
// may export only their actions.

export type Answer<T> =
  | { ok: true; value: T }
  | { ok: false; message: string; issues?: ErrorPayload['issues'] }

/** A field's result union as the API answers it: a success typename, or an Error. */
export type Payload = ErrorPayload & Record<string, unknown>

/**
 * The success member of a result union as data (the payload itself, or what `pick` takes from
 * it: a list result's `data`), anything else as a refusal with its message and field issues.
 */
export function answer<T>(
  payload: Payload | null | undefined,
  typename: string,
  what: string,
  pick?: (payload: Payload) => T,
): Answer<T> {
  if (payload?.__typename === typename)
    return { ok: true, value: pick ? pick(payload) : (payload as unknown as T) }
  return { ok: false, message: payload?.message ?? `${what} failed`, issues: payload?.issues }
}

/** Runs one call; an unreachable API or a GraphQL error becomes a refusal with its message. */
export async function attempt<T>(call: () => Promise<Answer<T>>): Promise<Answer<T>> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, message: error.message }
    throw error
  }
}

/** What a form submitted, as text: React resets a form after its action, a refused one shows these again. */
export function submitted(form: FormData): Record<string, string> {
  const values: Record<string, string> = {}
  for (const [key, value] of form.entries()) if (typeof value === 'string') values[key] = value
  return values
}
