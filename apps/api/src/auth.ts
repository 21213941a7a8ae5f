import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { ForbiddenError, ValidationError } from '@engram/core'
import type { Database } from './db/client.ts'

/** Who is calling: an operator with the admin key, or one agent with its own key. */
export type Viewer = { kind: 'admin'; keyId: string } | { kind: 'agent'; keyId: string; agentId: string }

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

export function bearerToken(header: string | null | undefined): string | null {
  if (!header) return null
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match?.[1] ?? null
}

/** Credentials of a graphql-ws connection: `{ authorization: "Bearer <key>" }` or `{ apiKey }`. */
export function keyFromConnectionParams(params: unknown): string | null {
  if (!params || typeof params !== 'object') return null
  const record = params as Record<string, unknown>
  const header = record.authorization ?? record.Authorization
  if (typeof header === 'string') return bearerToken(header)
  return typeof record.apiKey === 'string' ? record.apiKey : null
}

export async function resolveViewer(db: Database, key: string | null): Promise<Viewer | null> {
  if (!key || key.length > 512) return null
  const hash = hashApiKey(key)
  const row = await db.apiKey.findUnique({ where: { keyHash: hash } })
  // findUnique matched on the hash already; the constant-time compare guards against a future
  // lookup that is not an exact index match.
  if (!row || row.revokedAt || !timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(hash))) return null
  if (row.role === 'ADMIN') return { kind: 'admin', keyId: row.id }
  if (!row.agentId) return null
  return { kind: 'agent', keyId: row.id, agentId: row.agentId }
}

/**
 * Makes sure an admin key exists. A key given in ENGRAM_ADMIN_KEY is registered (hashed); with
 * none configured and none stored, one is generated and returned so the caller can print it once.
 */
export async function ensureAdminKey(
  db: Database,
  configuredKey: string | undefined,
): Promise<string | null> {
  if (configuredKey) {
    const keyHash = hashApiKey(configuredKey)
    await db.apiKey.upsert({
      where: { keyHash },
      create: {
        id: randomUUID(),
        role: 'ADMIN',
        label: 'ENGRAM_ADMIN_KEY',
        keyHash,
        keyPrefix: keyPrefix(configuredKey),
      },
      update: { revokedAt: null },
    })
    return null
  }
  const existing = await db.apiKey.findFirst({ where: { role: 'ADMIN', revokedAt: null } })
  if (existing) return null
  const key = generateApiKey()
  await db.apiKey.create({
    data: {
      id: randomUUID(),
      role: 'ADMIN',
      label: 'generated on first start',
      keyHash: hashApiKey(key),
      keyPrefix: keyPrefix(key),
    },
  })
  return key
}

/**
 * The agent whose data an operation touches. An agent key always means its own agent (naming
 * another is refused); an admin key must name the agent.
 */
export function scopeFor(viewer: Viewer, requestedAgentId: string | null | undefined): string {
  if (viewer.kind === 'agent') {
    if (requestedAgentId != null && requestedAgentId !== viewer.agentId) {
      throw new ForbiddenError('this key belongs to another agent')
    }
    return viewer.agentId
  }
  if (!requestedAgentId) {
    throw new ValidationError([{ field: 'agentId', message: 'is required when calling with an admin key' }])
  }
  return requestedAgentId
}

export function requireAdmin(viewer: Viewer): void {
  if (viewer.kind !== 'admin') throw new ForbiddenError('this operation needs an admin key')
}
