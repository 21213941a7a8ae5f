import { randomUUID } from 'node:crypto'
import { AGENT_ID_PATTERN, NotFoundError, ValidationError } from '@engram/core'
import type { Database } from '@engram/store-sqlite'
import { generateApiKey, hashApiKey, keyPrefix } from '../auth.ts'

export const MAX_LABEL_CHARS = 200

/** Agents own every record; keys give an agent (or an operator) access. Admin-only operations. */
export class AgentService {
  constructor(private readonly db: Database) {}

  async createAgent(id: string, name?: string | null) {
    assertAgentId(id)
    assertLabel(name ?? '', 'name')
    return this.db.agent.upsert({
      where: { id },
      create: { id, name: name ?? id },
      update: name ? { name } : {},
    })
  }

  async requireAgent(id: string) {
    assertAgentId(id)
    const agent = await this.db.agent.findUnique({ where: { id } })
    if (!agent) throw new NotFoundError('Agent', id)
    return agent
  }

  /** Creates the agent on first use, so onboarding is one call; the key is shown only here. */
  async createApiKey(agentId: string, label?: string | null) {
    assertAgentId(agentId)
    assertLabel(label ?? '', 'label')
    const key = generateApiKey()
    const apiKey = await this.db.$transaction(async (tx) => {
      await tx.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
      return tx.apiKey.create({
        data: {
          id: randomUUID(),
          agentId,
          role: 'AGENT',
          label: label ?? '',
          keyHash: hashApiKey(key),
          keyPrefix: keyPrefix(key),
        },
      })
    })
    return { key, apiKey }
  }

  async revokeApiKey(id: string) {
    const row = await this.db.apiKey.findUnique({ where: { id } })
    if (!row) throw new NotFoundError('ApiKey', id)
    if (row.revokedAt) return row
    if (row.role === 'ADMIN') {
      const others = await this.db.apiKey.count({
        where: { role: 'ADMIN', revokedAt: null, id: { not: id } },
      })
      if (others === 0) {
        throw new ValidationError([{ field: 'id', message: 'the last admin key cannot be revoked' }])
      }
    }
    return this.db.apiKey.update({ where: { id }, data: { revokedAt: new Date() } })
  }

  async deleteAgent(id: string) {
    const agent = await this.requireAgent(id)
    await this.db.agent.delete({ where: { id } })
    return agent
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
