import type { z } from 'zod'

export type OperationKind = 'query' | 'mutation' | 'subscription'

/**
 * Where an operation lives in the GraphQL schema, so the remote client and the drift test can
 * find it: the field, whether its arguments are wrapped in one `input` object, whether it answers
 * a connection (flattened to `{ totalCount, pageInfo, <list> }`), and arguments fixed by the
 * operation (the profile is memoryContext's PROFILE section).
 */
export interface GraphqlBinding {
  field: string
  inputArg?: 'input'
  connection?: string
  fixed?: Record<string, unknown>
}

export interface OperationSpec<I extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  kind: OperationKind
  /** Written for a model as much as for a person: what it does and when to use it. */
  description: string
  input: I
  output: O
  /** Changes nothing (MCP readOnlyHint). */
  readOnly: boolean
  /** Removes or overwrites data that cannot be had back (MCP destructiveHint). */
  destructive: boolean
  /** Needs an admin key: an agent key is answered FORBIDDEN. */
  admin: boolean
  graphql: GraphqlBinding
}

export function operation<K extends OperationKind, I extends z.ZodObject, O extends z.ZodType>(
  spec: Omit<OperationSpec<I, O>, 'admin' | 'readOnly' | 'destructive' | 'kind'> & { kind: K } & Partial<
      Pick<OperationSpec<I, O>, 'admin' | 'readOnly' | 'destructive'>
    >,
): OperationSpec<I, O> & { kind: K } {
  return {
    admin: false,
    // Queries and subscriptions change nothing unless said otherwise (memory/search count accesses,
    // which is bookkeeping, not a change the caller asked for).
    readOnly: spec.kind !== 'mutation',
    destructive: false,
    ...spec,
  }
}
