import { createHash, randomBytes } from 'node:crypto'

const KEY_PREFIX = 'engram_'

/** Keys are random 32-byte secrets; only their SHA-256 is stored, so a leaked database leaks no key. */
export function generateApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

/** The first characters, kept in clear so an operator can tell keys apart in a list. */
export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6)
}
