import { operation } from './operation.ts'
import * as s from './schemas.ts'

/**
 * Spec 002's L1 working memory, the working context in Engram (issue 17), and recency retrieval.
 * Part of the catalog (spread into it in catalog.ts). An agent key works on its own agent's
 * context; an admin key names the agent.
 */
export const workingContextOperations = {
  workingContext: operation({
    kind: 'query',
    description:
      'The agent’s working context (spec 002’s L1): the messages and tool results of the current execution not yet stored, the scratchpad, their token count and the flush threshold. Empty when nothing was written in the last 30 minutes.',
    input: s.WorkingContextInputSchema,
    output: s.WorkingContextSchema,
    graphql: { field: 'workingContext' },
  }),
  recentMemory: operation({
    kind: 'query',
    description:
      'The newest items the agent has, newest first (spec 002’s recency strategy): its working context first, then stored turns from the Redis L2 layer when configured, then the database; each item says where it came from (WORKING_CONTEXT, L2, DATABASE). Name a conversation to read only it.',
    input: s.RecentMemoryInputSchema,
    output: s.RecentMemoryItemSchema.array(),
    graphql: { field: 'recentMemory' },
  }),
  appendWorkingContext: operation({
    kind: 'mutation',
    description:
      'Appends messages to the working context (fast, not yet stored). Past the flush threshold (32,000 tokens by default) the context is flushed into the stored conversation (conversationId, or the default one) automatically; the answer says when that happened.',
    input: s.AppendWorkingContextInputSchema,
    output: s.WorkingContextChangeSchema,
    graphql: { field: 'appendWorkingContext' },
  }),
  setWorkingScratchpad: operation({
    kind: 'mutation',
    description:
      'Replaces the working context’s scratchpad: notes for the agent’s own reasoning, kept across flushes and never stored in the conversation. An empty text empties it.',
    input: s.SetWorkingScratchpadInputSchema,
    output: s.WorkingContextSchema,
    destructive: true,
    graphql: { field: 'setWorkingScratchpad' },
  }),
  recordToolResult: operation({
    kind: 'mutation',
    description:
      'Records a tool call’s result in the working context (a second result for the same toolCallId replaces the first). A flush stores it as a TOOL message; past the threshold it flushes like an append.',
    input: s.RecordToolResultInputSchema,
    output: s.WorkingContextChangeSchema,
    graphql: { field: 'recordToolResult' },
  }),
  flushWorkingContext: operation({
    kind: 'mutation',
    description:
      'Stores the working context’s messages and tool results in their conversations now (so search and memory formation see them) and empties them; the scratchpad stays.',
    input: s.FlushWorkingContextInputSchema,
    output: s.WorkingContextChangeSchema,
    graphql: { field: 'flushWorkingContext' },
  }),
  clearWorkingContext: operation({
    kind: 'mutation',
    description:
      'Empties the working context, scratchpad included, without storing anything (what was not flushed is lost).',
    input: s.ClearWorkingContextInputSchema,
    output: s.WorkingContextSchema,
    destructive: true,
    graphql: { field: 'clearWorkingContext' },
  }),
}
