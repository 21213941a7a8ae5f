import type { PrivacyMode, PrivacyPattern } from '@engram/core'

/** An agent's sensitive-data policy (spec 001) as stored: its mode and its own patterns. */
export interface StoredPrivacyPolicy {
  mode: PrivacyMode
  patterns: PrivacyPattern[]
}

/** Each agent's privacy policy, kept with the agent. */
export interface PrivacyPolicyRepository {
  /**
   * The agent's policy, or null when there is no such agent. Asked on every write the agent
   * makes, so adapters answer it from their fastest path. A stored mode the engine does not know
   * reads as `redact` and unreadable patterns as none (see readStoredPrivacyPolicy): a damaged
   * row fails safe, not open.
   */
  find(agentId: string): Promise<StoredPrivacyPolicy | null>
  save(agentId: string, policy: StoredPrivacyPolicy): Promise<void>
}
