import type { OutputOf } from '@engram/contract'
import { DEFAULT_RECENT_MEMORY_LIMIT, type Role, type WorkingContextState } from '@engram/core'
import type { Engine } from '../engine.ts'
import type { RecentItem, WorkingContextFlush } from '../working-context/working-context-service.ts'
import type { OperationHandlers } from './handlers.ts'

// The working context (spec 002's L1) and recency retrieval, issue 17.

export type WorkingContextHandlerName =
  | 'workingContext'
  | 'recentMemory'
  | 'appendWorkingContext'
  | 'setWorkingScratchpad'
  | 'recordToolResult'
  | 'flushWorkingContext'
  | 'clearWorkingContext'

type RoleOut = OutputOf<'workingContext'>['messages'][number]['role']
const upper = (role: Role) => role.toUpperCase() as RoleOut

/**
 * No operation is admin-only: an agent key works on its own agent's working context, an admin key
 * names the agent (agentScope), as with conversations.
 */
export function workingContextHandlers(engine: Engine): Pick<OperationHandlers, WorkingContextHandlerName> {
  const wc = engine.workingContext
  const contextOut = (state: WorkingContextState): OutputOf<'workingContext'> => ({
    agentId: state.agentId,
    conversationId: state.conversationId,
    messages: state.messages.map((m) => ({
      id: m.id,
      conversationId: m.conversationId,
      role: upper(m.role),
      content: m.content,
      name: m.name,
      toolCallId: m.toolCallId,
      tokenCount: m.tokenCount,
      at: m.at,
    })),
    toolResults: state.toolResults.map((r) => ({
      toolCallId: r.toolCallId,
      conversationId: r.conversationId,
      name: r.name,
      content: r.content,
      isError: r.isError,
      tokenCount: r.tokenCount,
      at: r.at,
    })),
    scratchpad: state.scratchpad,
    tokenCount: state.tokenCount,
    flushThresholdTokens: wc.rules.flushThresholdTokens,
    updatedAt: state.updatedAt,
    expiresAt: state.expiresAt,
  })
  const flushOut = (flush: WorkingContextFlush | null) =>
    flush
      ? {
          reason: flush.reason === 'threshold' ? ('THRESHOLD' as const) : ('REQUEST' as const),
          messages: flush.messages,
          toolResults: flush.toolResults,
          tokens: flush.tokens,
          conversationIds: flush.conversationIds,
        }
      : null
  const changeOut = (change: { context: WorkingContextState; flush: WorkingContextFlush | null }) => ({
    context: contextOut(change.context),
    flush: flushOut(change.flush),
  })
  const itemOut = (item: RecentItem) => ({
    id: item.id,
    source: item.source,
    conversationId: item.conversationId,
    role: upper(item.role),
    content: item.content,
    name: item.name,
    toolCallId: item.toolCallId,
    tokenCount: item.tokenCount,
    at: item.at.toISOString(),
  })
  return {
    async workingContext(call, input) {
      return contextOut(await wc.get(await call.agentScope(input.agentId)))
    },
    async recentMemory(call, input) {
      const scope = await call.agentScope(input.agentId)
      const items = await wc.recent(
        scope,
        input.conversationId ?? null,
        input.limit ?? DEFAULT_RECENT_MEMORY_LIMIT,
      )
      return items.map(itemOut)
    },
    async appendWorkingContext(call, input) {
      const scope = await call.agentScope(input.agentId)
      // What the agent says passes its sensitive-data policy before it is held anywhere (Redis).
      const guarded = await engine.privacy.guard(
        scope,
        input.messages.map((m, i) => ({ field: `messages.${i}.content`, text: m.content })),
      )
      const messages = input.messages.map((m, i) => ({
        role: m.role.toLowerCase() as Role,
        content: guarded.texts[i] as string,
        name: m.name ?? null,
        toolCallId: m.toolCallId ?? null,
      }))
      return changeOut(await wc.append(scope, messages, input.conversationId ?? null))
    },
    async setWorkingScratchpad(call, input) {
      const scope = await call.agentScope(input.agentId)
      const guarded = await engine.privacy.guard(scope, [{ field: 'scratchpad', text: input.scratchpad }])
      return contextOut(await wc.setScratchpad(scope, guarded.texts[0] ?? ''))
    },
    async recordToolResult(call, input) {
      const scope = await call.agentScope(input.agentId)
      const guarded = await engine.privacy.guard(scope, [{ field: 'content', text: input.content }])
      return changeOut(
        await wc.recordToolResult(scope, {
          toolCallId: input.toolCallId,
          name: input.name,
          content: guarded.texts[0] ?? '',
          isError: input.isError ?? false,
          conversationId: input.conversationId ?? null,
        }),
      )
    },
    async flushWorkingContext(call, input) {
      return changeOut(await wc.flush(await call.agentScope(input.agentId), 'request'))
    },
    async clearWorkingContext(call, input) {
      return contextOut(await wc.clear(await call.agentScope(input.agentId)))
    },
  }
}
