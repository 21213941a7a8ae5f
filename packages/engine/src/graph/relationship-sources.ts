import type { GraphSource } from '../ports/graph.ts'
import type { RecallSources } from '../ports/recall-sources.ts'
import type { RelationshipSource } from './graph-views.ts'

/** How much of a source's text a relationship shows: enough to read the sentence it came from. */
export const SOURCE_EXCERPT_CHARS = 240

/** The first SOURCE_EXCERPT_CHARS characters, whole code points (never half an emoji). */
function excerptOf(text: string): string {
  const chars = [...text]
  return chars.length <= SOURCE_EXCERPT_CHARS ? text : chars.slice(0, SOURCE_EXCERPT_CHARS).join('')
}

/**
 * Reads the memories and turns behind a relationship's evidence in two batched reads, both scoped
 * to the agent (an id of another agent's row resolves to nothing), and answers each source with
 * its excerpt. Superseded and expired memories are read too: an edge may well outlive the
 * memory's validity, and the operator wants to see what it said. Search's GRAPH hits use it too.
 */
export async function relationshipSourceReader(
  recall: Pick<RecallSources, 'memoryItems' | 'messages'>,
  agentId: string,
  evidence: readonly GraphSource[],
  now: Date,
): Promise<(source: GraphSource) => RelationshipSource> {
  const memoryIds = [...new Set(evidence.flatMap((e) => (e.memoryId ? [e.memoryId] : [])))]
  const messageIds = [...new Set(evidence.flatMap((e) => (e.messageId ? [e.messageId] : [])))]
  const [memories, messages] = await Promise.all([
    memoryIds.length ? recall.memoryItems(agentId, memoryIds, { includeSuperseded: true, asOf: now }) : [],
    messageIds.length ? recall.messages(agentId, messageIds, { set: 'messages' }) : [],
  ])
  const memoryById = new Map(memories.map((m) => [m.id, m]))
  const messageById = new Map(messages.map((m) => [m.message.id, m]))
  return ({ memoryId, messageId }) => {
    const memory = memoryId ? memoryById.get(memoryId) : undefined
    const message = messageId ? messageById.get(messageId) : undefined
    const text = memory?.content ?? message?.message.content ?? null
    return {
      memoryId,
      messageId,
      conversationId: message?.conversationId ?? null,
      excerpt: text === null ? null : excerptOf(text),
      at: memory?.createdAt ?? message?.message.timestamp ?? null,
    }
  }
}
