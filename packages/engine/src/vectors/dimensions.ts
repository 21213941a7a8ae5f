import { ValidationError } from '@engram/core'

/**
 * Every adapter rejects a vector whose dimensions differ from the agent's others the same way: a
 * ValidationError naming the field and the expected size (a mixed index would compare nonsense).
 */
export function assertDimensions(expected: number | null, vector: Float32Array, field = 'vector'): void {
  if (expected == null || expected === vector.length) return
  throw new ValidationError([
    {
      field,
      message: `must have ${expected} dimensions, like this agent's other vectors (got ${vector.length})`,
      limit: expected,
    },
  ])
}
