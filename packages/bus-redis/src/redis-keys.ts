// Key names under ENGRAM_REDIS_PREFIX. Agent ids are `[a-z0-9][a-z0-9_-]*` (core's
// AGENT_ID_PATTERN): no `:` and no glob character, so they stand in keys and SCAN patterns as they
// are. Conversation ids may hold `:` (and `/`, `@`, `.`), so they come last in a key.

/** Spec 002's L2 set of one conversation: `<prefix>:l2:<agent>:<conversation>`. */
export function episodicKey(prefix: string, agentId: string, conversationId: string): string {
  return `${prefix}:l2:${agentId}:${conversationId}`
}

/** Its version and announced writes: `<prefix>:l2meta:<agent>:<conversation>`. */
export function episodicMetaKey(prefix: string, agentId: string, conversationId: string): string {
  return `${prefix}:l2meta:${agentId}:${conversationId}`
}

/**
 * The SCAN patterns that find an agent's keys: `<prefix>:*:<agent>*` (every kind of key names its
 * agent after a colon, e.g. `<prefix>:l2:<agent>:…`, `<prefix>:lease:optimizer:<agent>`); with
 * no agent, every agent's episodic keys. The pattern over-matches (agent `a` matches `…:ab:…`):
 * keyNamesAgent decides.
 */
export function agentKeyPatterns(prefix: string, agentId: string | null): string[] {
  const literal = escapeGlob(prefix)
  if (agentId === null) return [`${literal}:l2:*`, `${literal}:l2meta:*`]
  return [`${literal}:*:${escapeGlob(agentId)}*`]
}

/**
 * Whether a key under the prefix belongs to the agent: one of its colon-separated segments after
 * the prefix is the agent id. The episodic keys name it in the second segment exactly, before the
 * conversation (whose id may equal another agent's: `l2:bob:alice` is bob's, not alice's).
 */
export function keyNamesAgent(prefix: string, key: string, agentId: string): boolean {
  if (!key.startsWith(`${prefix}:`)) return false
  const segments = key.slice(prefix.length + 1).split(':')
  const kind = segments[0]
  if (kind === 'l2' || kind === 'l2meta') return segments[1] === agentId
  // Channels are not keys; other kinds (leases, queues) name the agent as a whole segment.
  if (kind === 'events') return false
  return segments.slice(1).includes(agentId)
}

/** A prefix or an id matched literally inside a glob pattern (PSUBSCRIBE, SCAN MATCH). */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&')
}

/** Spec 002's L1 working context of one agent, shared by the replicas: `<prefix>:wc:<agent>`. */
export function workingContextKey(prefix: string, agentId: string): string {
  return `${prefix}:wc:${agentId}`
}
