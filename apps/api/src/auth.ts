import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { type Clock, ForbiddenError } from '@engram/core'
import { type AgentService, type Principal, scopeOf } from '@engram/engine'

/** Who is calling: an operator with the admin key, or one agent with its own key. */
export type Viewer =
  | { kind: 'admin'; keyId: string }
  | { kind: 'agent'; keyId: string; agentId: string }
  /** A short-lived token that may only subscribe to snapshots (of one agent, or all). */
  | { kind: 'live'; agentId: string | null; expiresAt: Date }

const LIVE_PREFIX = 'live_'
export const DEFAULT_LIVE_TOKEN_TTL_MS = 10 * 60_000

/**
 * Subscription tokens for browsers. The dashboard keeps the admin key in an httpOnly cookie; a
 * page gets one of these instead, good only for subscribing and only for minutes. Signed with a
 * per-process secret, so a restart invalidates them (the page simply asks for a new one).
 */
export class LiveTokens {
  constructor(
    private readonly clock: Clock,
    private readonly secret: Buffer = randomBytes(32),
    /** The agent's incarnation (AgentWrites): a token for an agent dies with it. */
    private readonly incarnation: (agentId: string) => string = () => '0',
  ) {}

  issue(agentId: string | null, ttlMs = DEFAULT_LIVE_TOKEN_TTL_MS): { token: string; expiresAt: Date } {
    const expiresAt = new Date(this.clock.now().getTime() + ttlMs)
    const payload = Buffer.from(
      JSON.stringify({
        a: agentId,
        e: expiresAt.getTime(),
        ...(agentId ? { i: this.incarnation(agentId) } : {}),
      }),
    ).toString('base64url')
    return { token: `${LIVE_PREFIX}${payload}.${this.sign(payload)}`, expiresAt }
  }

  verify(token: string): { agentId: string | null; expiresAt: Date } | null {
    if (!token.startsWith(LIVE_PREFIX)) return null
    const [payload, signature] = token.slice(LIVE_PREFIX.length).split('.')
    if (!payload || !signature) return null
    const expected = Buffer.from(this.sign(payload))
    const given = Buffer.from(signature)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null
    try {
      const { a, e, i } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        a: string | null
        e: number
        i?: string
      }
      if (typeof e !== 'number' || e <= this.clock.now().getTime()) return null
      // Issued for an agent since deleted: the next owner of its id is someone else.
      if (typeof a === 'string' && i !== this.incarnation(a)) return null
      return { agentId: typeof a === 'string' ? a : null, expiresAt: new Date(e) }
    } catch {
      return null
    }
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.secret).update(payload).digest('base64url')
  }
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

/** The caller of a request or connection, from its key (looked up afresh each time: revoking works at once). */
export async function resolveViewer(
  keys: AgentService,
  key: string | null,
  liveTokens?: LiveTokens,
): Promise<Viewer | null> {
  if (!key || key.length > 512) return null
  if (key.startsWith(LIVE_PREFIX)) {
    const live = liveTokens?.verify(key)
    return live ? { kind: 'live', ...live } : null
  }
  return (await keys.holderOf(key)) ?? null
}

/**
 * The agent whose data an operation touches. An agent key always means its own agent (naming
 * another is refused); an admin key must name the agent.
 */
export function scopeFor(viewer: Viewer, requestedAgentId: string | null | undefined): string {
  if (viewer.kind === 'live')
    throw new ForbiddenError('a live token can only subscribe to optimizer snapshots')
  return scopeOf(principalOf(viewer), requestedAgentId)
}

/** The operations layer's principal of a key: the operator for an admin key, else its agent. */
export function principalOf(viewer: Exclude<Viewer, { kind: 'live' }>): Principal {
  return viewer.kind === 'admin' ? { kind: 'operator' } : { kind: 'agent', agentId: viewer.agentId }
}

export function requireAdmin(viewer: Viewer): void {
  if (viewer.kind !== 'admin') throw new ForbiddenError('this operation needs an admin key')
}
