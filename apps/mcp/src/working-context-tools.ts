import { catalog, type OutputOf, type Result } from '@engram/contract'
import type { MemoryTool } from './tools.ts'

// Spec 002's L1 working context and recency retrieval (issue 17): what an agent in the middle of
// a task keeps at hand, and how it reads back what happened last.

const withoutAgent = <S extends typeof catalog.workingContext.input>(schema: S) =>
  schema.omit({ agentId: true } as never).strict()

type Context = OutputOf<'workingContext'>
type Change = OutputOf<'appendWorkingContext'>

/** The working context as a model reads it: what is held, how full it is, when it goes. */
function compactContext(c: Context) {
  return {
    messages: c.messages.map((m) => ({
      role: m.role,
      content: m.content,
      name: m.name,
      toolCallId: m.toolCallId,
    })),
    toolResults: c.toolResults.map((r) => ({
      toolCallId: r.toolCallId,
      name: r.name,
      content: r.content,
      isError: r.isError,
    })),
    scratchpad: c.scratchpad,
    tokenCount: c.tokenCount,
    flushThresholdTokens: c.flushThresholdTokens,
    expiresAt: c.expiresAt,
  }
}

function compactChange(change: Change) {
  return {
    tokenCount: change.context.tokenCount,
    flushThresholdTokens: change.context.flushThresholdTokens,
    held: change.context.messages.length + change.context.toolResults.length,
    flushed: change.flush && {
      reason: change.flush.reason,
      messages: change.flush.messages,
      conversationIds: change.flush.conversationIds,
    },
  }
}

function shaped<T, U>(result: Result<T>, shape: (data: T) => U): Result<U> {
  return result.ok ? { ok: true, data: shape(result.data) } : result
}

export const WORKING_CONTEXT_TOOLS: MemoryTool[] = [
  {
    name: 'working_context',
    title: 'Read the working context',
    operation: 'workingContext',
    description:
      'Read your working context: the messages and tool results of the task in progress that are not yet stored, your scratchpad, and how many tokens they hold against the flush threshold. It is empty after 30 minutes without a write, or after a flush or clear.',
    input: withoutAgent(catalog.workingContext.input),
    run: async (client, input) => shaped(await client.workingContext(input), compactContext),
  },
  {
    name: 'append_working_context',
    title: 'Append to the working context',
    operation: 'appendWorkingContext',
    description:
      'Keep the turns of the task in progress at hand (fast: not yet stored). Give them oldest first with their role; conversationId is where they are stored when the context flushes, which happens by itself past the threshold (32,000 tokens by default) — the answer says when. Use add_messages instead for turns that should be stored at once.',
    input: withoutAgent(catalog.appendWorkingContext.input),
    run: async (client, input) => shaped(await client.appendWorkingContext(input), compactChange),
  },
  {
    name: 'set_scratchpad',
    title: 'Set the scratchpad',
    operation: 'setWorkingScratchpad',
    description:
      'Replace your scratchpad: private notes for your own reasoning during a task (a plan, what is left to check). It survives flushes and is never stored in the conversation; an empty text clears it.',
    input: withoutAgent(catalog.setWorkingScratchpad.input),
    run: async (client, input) => shaped(await client.setWorkingScratchpad(input), compactContext),
  },
  {
    name: 'record_tool_result',
    title: 'Record a tool result',
    operation: 'recordToolResult',
    description:
      'Keep a tool call’s result in the working context by its toolCallId (the same id again replaces it), with the tool’s name and whether it failed (isError). It is stored as a TOOL message when the context flushes.',
    input: withoutAgent(catalog.recordToolResult.input),
    run: async (client, input) => shaped(await client.recordToolResult(input), compactChange),
  },
  {
    name: 'flush_working_context',
    title: 'Flush the working context',
    operation: 'flushWorkingContext',
    description:
      'Store the working context’s messages and tool results in their conversations now (so recall and memory formation see them), e.g. at the end of a task; the scratchpad stays.',
    input: withoutAgent(catalog.flushWorkingContext.input),
    run: async (client, input) => shaped(await client.flushWorkingContext(input), compactChange),
  },
  {
    name: 'clear_working_context',
    title: 'Clear the working context',
    operation: 'clearWorkingContext',
    description:
      'Throw the working context away, scratchpad included, storing nothing: for a task abandoned or restarted. What was not flushed is lost.',
    input: withoutAgent(catalog.clearWorkingContext.input),
    run: async (client, input) => shaped(await client.clearWorkingContext(input), compactContext),
  },
  {
    name: 'recent_memory',
    title: 'Recent memory',
    operation: 'recentMemory',
    description:
      'The newest things you have, newest first: the working context first, then stored turns (from the shared cache when the server has one, else the database); each item says its source. Name a conversationId for one conversation; limit 1-100 (default 20). Use recall instead to search by meaning.',
    input: withoutAgent(catalog.recentMemory.input),
    run: async (client, input) =>
      shaped(await client.recentMemory(input), (items) =>
        items.map((i) => ({
          source: i.source,
          conversationId: i.conversationId,
          role: i.role,
          name: i.name,
          content: i.content,
          at: i.at,
        })),
      ),
  },
]
