import { NotFoundError } from '@engram/core'
import type { ApiKeyRecord, ApiKeyRepository } from '../ports/api-keys.ts'
import type { PrivacyPolicyRepository, StoredPrivacyPolicy } from '../ports/privacy-policies.ts'
import type { AgentRepository } from '../ports/repositories.ts'

/** Privacy policies and API keys in memory, beside the in-memory agents they belong to. */
export class InMemoryAgentRecords {
  private readonly policies = new Map<string, StoredPrivacyPolicy>()
  private readonly keys = new Map<string, ApiKeyRecord>()
  readonly privacyPolicies: PrivacyPolicyRepository
  readonly apiKeys: ApiKeyRepository

  constructor(
    private readonly agents: AgentRepository,
    private readonly now: () => Date,
  ) {
    this.privacyPolicies = {
      find: async (agentId) => {
        if (!(await this.agents.find(agentId))) return null
        // A new agent's defaults, as the SQLite columns have them.
        return structuredClone(this.policies.get(agentId) ?? { mode: 'redact', patterns: [] })
      },
      save: async (agentId, policy) => {
        if (!(await this.agents.find(agentId))) throw new NotFoundError('Agent', agentId)
        this.policies.set(agentId, structuredClone(policy))
      },
    }
    const copy = (key: ApiKeyRecord) => ({ ...key })
    const require = (id: string) => {
      const key = this.keys.get(id)
      if (!key) throw new NotFoundError('ApiKey', id)
      return key
    }
    this.apiKeys = {
      find: async (id) => {
        const key = this.keys.get(id)
        return key ? copy(key) : null
      },
      findByHash: async (keyHash) => {
        for (const key of this.keys.values()) if (key.keyHash === keyHash) return copy(key)
        return null
      },
      issueForAgent: async (agentId, key) => {
        await this.agents.upsert(agentId, null)
        const record = { ...key, agentId, role: 'AGENT', createdAt: this.now(), revokedAt: null }
        this.keys.set(record.id, record)
        return copy(record)
      },
      putAdmin: async (key) => {
        for (const existing of this.keys.values())
          if (existing.keyHash === key.keyHash) {
            existing.revokedAt = null
            return copy(existing)
          }
        const record = { ...key, agentId: null, role: 'ADMIN', createdAt: this.now(), revokedAt: null }
        this.keys.set(record.id, record)
        return copy(record)
      },
      countActiveAdmins: async (exceptId) =>
        [...this.keys.values()].filter((k) => k.role === 'ADMIN' && !k.revokedAt && k.id !== exceptId).length,
      revoke: async (id, at) => {
        const key = require(id)
        key.revokedAt = at
        return copy(key)
      },
      // Insertion order is creation order here.
      list: async (agentId) =>
        [...this.keys.values()].filter((k) => agentId == null || k.agentId === agentId).map(copy),
    }
  }

  /** What the agent owned goes with it, as the SQLite schema's cascades do. */
  forgetAgent(agentId: string): void {
    this.policies.delete(agentId)
    for (const [id, key] of this.keys) if (key.agentId === agentId) this.keys.delete(id)
  }
}
