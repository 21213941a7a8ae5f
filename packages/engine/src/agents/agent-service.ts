import { randomUUID, timingSafeEqual } from 'node:crypto'
import { AGENT_ID_PATTERN, isPoolStorageAgent, NotFoundError, ValidationError } from '@engram/core'
import type { ApiKeyRecord, ApiKeyRepository } from '../ports/api-keys.ts'
import type { AgentRecord, AgentRepository } from '../ports/repositories.ts'
import { generateApiKey, hashApiKey, keyPrefix } from './api-keys.ts'

export const MAX_LABEL_CHARS = 200

/** Who a stored key speaks for, once its secret matched. */
export type KeyHolder = { kind: 'admin'; keyId: string } | { kind: 'agent'; keyId: string; agentId: string }

/** Agents own every record; keys give an agent (or an operator) access. Admin-only operations. */
export class AgentService {
  constructor(
    private readonly agents: AgentRepository,
    private readonly keys: ApiKeyRepository,
    /** When a key is revoked: wall-clock time, not the domain clock tests hold still. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  async createAgent(id: string, name?: string | null): Promise<AgentRecord> {
    assertAgentId(id)
    assertLabel(name ?? '', 'name')
    return this.agents.upsert(id, name ?? null)
  }

  /** The agent, or null (a subscription asks whether the agent it was opened for still exists). */
  findAgent(id: string): Promise<AgentRecord | null> {
    return this.agents.find(id)
  }

  /** Whether a key still exists unrevoked (read afresh: another process may have revoked it). */
  async isKeyActive(keyId: string): Promise<boolean> {
    const key = await this.keys.find(keyId)
    return key !== null && !key.revokedAt
  }

  async requireAgent(id: string): Promise<AgentRecord> {
    assertAgentId(id)
    const agent = await this.agents.find(id)
    if (!agent) throw new NotFoundError('Agent', id)
    return agent
  }

  /** Creates the agent on first use, so onboarding is one call; the key is shown only here. */
  async createApiKey(agentId: string, label?: string | null): Promise<{ key: string; apiKey: ApiKeyRecord }> {
    assertAgentId(agentId)
    assertLabel(label ?? '', 'label')
    const key = generateApiKey()
    const apiKey = await this.keys.issueForAgent(agentId, {
      id: randomUUID(),
      label: label ?? '',
      keyHash: hashApiKey(key),
      keyPrefix: keyPrefix(key),
    })
    return { key, apiKey }
  }

  async revokeApiKey(id: string): Promise<ApiKeyRecord> {
    const row = await this.keys.find(id)
    if (!row) throw new NotFoundError('ApiKey', id)
    if (row.revokedAt) return row
    if (row.role === 'ADMIN' && (await this.keys.countActiveAdmins(id)) === 0) {
      throw new ValidationError([{ field: 'id', message: 'the last admin key cannot be revoked' }])
    }
    return this.keys.revoke(id, this.now())
  }

  /** Every agent for an operator; an agent sees only itself. */
  async listAgents(viewer: { agentId: string } | 'admin'): Promise<AgentRecord[]> {
    // A pool's storage agent (issue 17) is internal: it holds the pool's memories, it is no agent.
    if (viewer === 'admin') return (await this.agents.list()).filter((a) => !isPoolStorageAgent(a.id))
    const own = await this.agents.find(viewer.agentId)
    return own ? [own] : []
  }

  /** The keys of one agent, or every key. */
  listApiKeys(agentId: string | null): Promise<ApiKeyRecord[]> {
    return this.keys.list(agentId)
  }

  async deleteAgent(id: string): Promise<AgentRecord> {
    const agent = await this.requireAgent(id)
    await this.agents.delete(id)
    return agent
  }

  /**
   * Who holds a key, or null for an unknown or revoked one. Looked up on every request, with no
   * cache, so a revoked key stops working with the very next request.
   */
  async holderOf(key: string): Promise<KeyHolder | null> {
    const hash = hashApiKey(key)
    const row = await this.keys.findByHash(hash)
    // The lookup matched on the hash already; the constant-time compare guards against a future
    // lookup that is not an exact index match.
    if (!row || row.revokedAt || !timingSafeEqual(Buffer.from(row.keyHash), Buffer.from(hash))) return null
    if (row.role === 'ADMIN') return { kind: 'admin', keyId: row.id }
    if (!row.agentId) return null
    return { kind: 'agent', keyId: row.id, agentId: row.agentId }
  }

  /**
   * Makes sure an admin key exists. A configured key is registered (hashed); with none configured
   * and none stored, one is generated and returned so the caller can print it once.
   */
  async ensureAdminKey(configuredKey: string | undefined): Promise<string | null> {
    if (configuredKey) {
      await this.keys.putAdmin({
        id: randomUUID(),
        label: 'ENGRAM_ADMIN_KEY',
        keyHash: hashApiKey(configuredKey),
        keyPrefix: keyPrefix(configuredKey),
      })
      return null
    }
    if ((await this.keys.countActiveAdmins()) > 0) return null
    const key = generateApiKey()
    await this.keys.putAdmin({
      id: randomUUID(),
      label: 'generated on first start',
      keyHash: hashApiKey(key),
      keyPrefix: keyPrefix(key),
    })
    return key
  }
}

export function assertAgentId(id: string, field = 'agentId'): void {
  if (!AGENT_ID_PATTERN.test(id)) {
    throw new ValidationError([
      {
        field,
        message:
          'must be 1 to 64 characters: lowercase letters, digits, _ and - (starting with a letter or digit)',
        limit: 64,
      },
    ])
  }
}

function assertLabel(label: string, field: string): void {
  if (label.length > MAX_LABEL_CHARS) {
    throw new ValidationError([
      { field, message: `must be at most ${MAX_LABEL_CHARS} characters`, limit: MAX_LABEL_CHARS },
    ])
  }
}
