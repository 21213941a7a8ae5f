import { ForbiddenError, ValidationError } from '@engram/core'
import type { AgentService } from '../agents/agent-service.ts'

/**
 * Who an operation acts as: one agent (an agent key, an embedded client for one agent), or the
 * operator (an admin key, the process that owns the file). Doors turn their credentials into one.
 */
export type Principal = { kind: 'agent'; agentId: string } | { kind: 'operator' }

/**
 * The agent whose data an operation touches. An agent always means itself (naming another is
 * refused, FORBIDDEN); the operator must name the agent (VALIDATION naming agentId).
 */
export function scopeOf(principal: Principal, requestedAgentId: string | null | undefined): string {
  if (principal.kind === 'agent') {
    if (requestedAgentId != null && requestedAgentId !== principal.agentId) {
      throw new ForbiddenError('this key belongs to another agent')
    }
    return principal.agentId
  }
  if (!requestedAgentId) {
    throw new ValidationError([{ field: 'agentId', message: 'is required when calling with an admin key' }])
  }
  return requestedAgentId
}

/** Operator work (keys, agents, backups): an agent is refused. */
export function requireOperator(principal: Principal): void {
  if (principal.kind !== 'operator') throw new ForbiddenError('this operation needs an admin key')
}

/**
 * The scope of an operation on existing data: for the operator the named agent must exist
 * (NOT_FOUND otherwise), so a typo never reads as an empty agent.
 */
export async function agentScopeOf(
  agents: Pick<AgentService, 'requireAgent'>,
  principal: Principal,
  requestedAgentId: string | null | undefined,
): Promise<string> {
  const scope = scopeOf(principal, requestedAgentId)
  if (principal.kind === 'operator') await agents.requireAgent(scope)
  return scope
}

/** A list's scope: the operator lists every agent when it names none (null). */
export async function listScopeOf(
  agents: Pick<AgentService, 'requireAgent'>,
  principal: Principal,
  requestedAgentId: string | null | undefined,
): Promise<string | null> {
  if (principal.kind === 'operator' && !requestedAgentId) return null
  return agentScopeOf(agents, principal, requestedAgentId)
}
