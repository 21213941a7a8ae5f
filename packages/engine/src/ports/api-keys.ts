/** Who a key speaks for: an operator (every agent) or one agent. */
export type ApiKeyRole = 'ADMIN' | 'AGENT'

/** A key as stored: its hash and prefix, never the key itself. */
export interface ApiKeyRecord {
  id: string
  agentId: string | null
  role: string
  label: string
  keyHash: string
  keyPrefix: string
  createdAt: Date
  revokedAt: Date | null
}

export interface NewApiKey {
  id: string
  agentId: string | null
  role: ApiKeyRole
  label: string
  keyHash: string
  keyPrefix: string
}

/** API keys, looked up by their hash on every request. */
export interface ApiKeyRepository {
  find(id: string): Promise<ApiKeyRecord | null>
  /** The key with this hash, revoked or not (the caller decides what a revoked key means). */
  findByHash(keyHash: string): Promise<ApiKeyRecord | null>
  /**
   * Stores an agent's key, creating the agent first when it is new, in one transaction: onboarding
   * is one call, and a key never exists for an agent that does not.
   */
  issueForAgent(agentId: string, key: Omit<NewApiKey, 'agentId' | 'role'>): Promise<ApiKeyRecord>
  /** Stores an admin key, or un-revokes the one with the same hash (a configured key restarts). */
  putAdmin(key: Omit<NewApiKey, 'agentId' | 'role'>): Promise<ApiKeyRecord>
  /** Admin keys not revoked, other than `exceptId` (the last one must never be revoked). */
  countActiveAdmins(exceptId?: string): Promise<number>
  revoke(id: string, at: Date): Promise<ApiKeyRecord>
  /** Keys of one agent, or every key (admin keys too) for null; oldest first. */
  list(agentId: string | null): Promise<ApiKeyRecord[]>
}
