import { scopeFor } from './auth.ts'
import type { Context } from './context.ts'

/**
 * The agent an operation acts for. Agent keys act for their own agent only; admin keys name an
 * existing agent. Every resolver that touches agent data goes through here.
 */
export async function agentScope(ctx: Context, agentId: string | null | undefined): Promise<string> {
  const scope = scopeFor(ctx.viewer, agentId)
  if (ctx.viewer.kind === 'admin') await ctx.services.agents.requireAgent(scope)
  if (ctx.isMutation) {
    // Before and after the write: a read between the two cannot cache the old state as new.
    ctx.writes.add(scope)
    ctx.services.writes.touch(scope)
  }
  return scope
}

/**
 * The scope of a list: an agent key lists its own agent; an admin key one named agent, or every
 * agent when it names none (null).
 */
export async function listScope(ctx: Context, agentId: string | null | undefined): Promise<string | null> {
  if (ctx.viewer.kind === 'admin' && !agentId) return null
  return agentScope(ctx, agentId)
}
