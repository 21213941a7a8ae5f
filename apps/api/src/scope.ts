import { scopeFor } from './auth.ts'
import type { Context } from './context.ts'

/**
 * The agent an operation acts for. Agent keys act for their own agent only; admin keys name an
 * existing agent. Every resolver that touches agent data goes through here.
 */
export async function agentScope(ctx: Context, agentId: string | null | undefined): Promise<string> {
  const scope = scopeFor(ctx.viewer, agentId)
  if (ctx.viewer.kind === 'admin') await ctx.services.agents.requireAgent(scope)
  return scope
}
