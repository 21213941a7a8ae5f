import { createHash } from 'node:crypto'

/** The hash a text's vector is filed under (the cache, and whether a stored vector is current). */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}
