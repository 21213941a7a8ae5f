import type { KNOWLEDGE_CATEGORIES, MEMORY_CATEGORIES, ROLES } from '@engram/core'
import type { AgentArchive, ArchivedGraph } from '../ports/agent-archive.ts'
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportDocument, type GraphDocument } from './document.ts'
import { trajectoryMemoryDocument } from './trajectory-document.ts'

const iso = (d: Date | null) => (d ? d.toISOString() : null)

/**
 * The export document of an archive. Rows are named by refs the document defines (memories `m1…`,
 * messages `conversation#n`, facts `category/key`) so an import into another store or agent can
 * rebuild the links (supersession, vector owners, a memory's source turn) without the old ids.
 */
export function toExportDocument(archive: AgentArchive, embeddingModel: string): ExportDocument {
  const { agent, memories, knowledge, sessions, vectors, parameters, snapshots, graph, trajectories } =
    archive
  const storedSettings = agent.memorySettings
  const policy = agent.privacyPolicy
  const memoryRef = new Map(memories.map((m, i) => [m.id, `m${i + 1}`]))
  const messageRef = new Map<string, string>()
  for (const session of sessions)
    for (const [i, message] of session.messages.entries())
      messageRef.set(message.id, `${session.conversationId}#${i + 1}`)
  const knowledgeRef = new Map(knowledge.map((k) => [k.id, `${k.category}/${k.key}`]))
  const ownerRef = (kind: string, id: string) =>
    kind === 'memory' ? memoryRef.get(id) : kind === 'message' ? messageRef.get(id) : knowledgeRef.get(id)
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    agent: { id: agent.id, name: agent.name },
    settings: {
      settings: storedSettings.settings ?? {},
      contextBudgets: storedSettings.contextBudgets ?? {},
    },
    parameters: parameters.map((p) => ({ key: p.key, value: p.value })),
    privacyPolicy: { mode: policy.mode, patterns: policy.patterns },
    ...(snapshots
      ? {
          snapshots: snapshots.map((s) => ({
            tokensBefore: s.tokensBefore,
            tokensAfter: s.tokensAfter,
            entriesCompressed: s.entriesCompressed,
            entriesDropped: s.entriesDropped,
            entriesPromoted: s.entriesPromoted,
            usageRatio: s.usageRatio,
            compressionTriggerRatio: s.compressionTriggerRatio,
            fullMessageWindow: s.fullMessageWindow,
            minRelevanceScore: s.minRelevanceScore,
            timestamp: s.timestamp.toISOString(),
          })),
        }
      : {}),
    embeddingModel,
    memories: memories.map((m) => ({
      ref: memoryRef.get(m.id) as string,
      content: m.content,
      category: m.category as (typeof MEMORY_CATEGORIES)[number],
      tags: m.tags,
      importance: m.importance,
      confidence: m.confidence,
      pinned: m.pinned,
      userId: m.userId,
      sourceConversationId: m.sourceConversationId,
      // The turn it was formed from, by its ref when the document holds it: an import writes the
      // turns anew, and search reaches a memory through its source turn.
      sourceMessageId:
        m.sourceMessageId == null ? null : (messageRef.get(m.sourceMessageId) ?? m.sourceMessageId),
      accessCount: m.accessCount,
      lastAccessedAt: iso(m.lastAccessedAt),
      validFrom: m.validFrom.toISOString(),
      validUntil: iso(m.validUntil),
      supersededBy: m.supersededById == null ? null : (memoryRef.get(m.supersededById) ?? null),
      metadata: m.metadata,
      createdAt: m.createdAt.toISOString(),
      updatedAt: m.updatedAt.toISOString(),
    })),
    knowledge: knowledge.map((k) => ({
      category: k.category as (typeof KNOWLEDGE_CATEGORIES)[number],
      key: k.key,
      value: k.value,
      confidence: k.confidence,
      storeCount: k.storeCount,
      useCount: k.useCount,
      lastUsedAt: iso(k.lastUsedAt),
      lastDecayAt: iso(k.lastDecayAt),
      createdAt: k.createdAt.toISOString(),
      updatedAt: k.updatedAt.toISOString(),
    })),
    sessions: sessions.map((s) => ({
      conversationId: s.conversationId,
      createdAt: s.createdAt.toISOString(),
      updatedAt: s.updatedAt.toISOString(),
      messages: s.messages.map((m) => ({
        role: m.role as (typeof ROLES)[number],
        speaker: m.speaker,
        content: m.content,
        tokenCount: m.tokenCount,
        isCompressed: m.isCompressed,
        metadata: m.metadata,
        timestamp: m.timestamp.toISOString(),
        createdAt: m.createdAt.toISOString(),
        entry: m.entry
          ? {
              type: m.entry.type,
              content: m.entry.content,
              tokenCount: m.entry.tokenCount,
              relevance: m.entry.relevance,
              isCompressed: m.entry.isCompressed,
              metadata: m.entry.metadata,
              timestamp: m.entry.timestamp.toISOString(),
              createdAt: m.entry.createdAt.toISOString(),
            }
          : null,
      })),
    })),
    vectors: vectors
      .flatMap((v) => {
        const ref = ownerRef(v.kind, v.ownerId)
        return ref
          ? [
              {
                owner: `${v.kind}:${ref}`,
                dimensions: v.dimensions,
                vector: Buffer.from(v.vector).toString('base64'),
              },
            ]
          : []
      })
      .sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0)),
    graph: graphDocument(graph, memoryRef, messageRef),
    trajectoryMemory: trajectoryMemoryDocument(trajectories),
  }
}

/**
 * The graph by refs (`e1…`, `r1…`). Evidence names its sources by the document's memory and
 * message refs; a source the document does not hold is left out rather than kept as an old id,
 * which in another store could name an unrelated memory and let its deletion take graph rows.
 */
function graphDocument(
  graph: ArchivedGraph,
  memoryRef: ReadonlyMap<string, string>,
  messageRef: ReadonlyMap<string, string>,
): GraphDocument {
  const entityRef = new Map(graph.entities.map((e, i) => [e.id, `e${i + 1}`]))
  const relationshipRef = new Map(graph.relationships.map((r, i) => [r.id, `r${i + 1}`]))
  return {
    entities: graph.entities.map((e) => ({
      ref: entityRef.get(e.id) as string,
      userId: e.userId,
      type: e.type,
      name: e.name,
      aliases: e.aliases,
      summary: e.summary,
      embedding: e.embedding ? Buffer.from(e.embedding).toString('base64') : null,
      mentionCount: e.mentionCount,
      origin: e.origin,
      firstSeenAt: e.firstSeenAt.toISOString(),
      lastSeenAt: e.lastSeenAt.toISOString(),
      createdAt: e.createdAt.toISOString(),
      updatedAt: e.updatedAt.toISOString(),
    })),
    relationships: graph.relationships.map((r) => ({
      ref: relationshipRef.get(r.id) as string,
      userId: r.userId,
      source: entityRef.get(r.sourceId) as string,
      relation: r.relation,
      target: entityRef.get(r.targetId) as string,
      confidence: r.confidence,
      validFrom: iso(r.validFrom),
      validUntil: iso(r.validUntil),
      learntAt: r.learntAt.toISOString(),
      retiredAt: iso(r.retiredAt),
      retiredReason: r.retiredReason,
      supersededBy: r.supersededById == null ? null : (relationshipRef.get(r.supersededById) ?? null),
      origin: r.origin,
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    })),
    evidence: graph.evidence.flatMap((ev) => {
      const memory = ev.memoryId == null ? null : (memoryRef.get(ev.memoryId) ?? null)
      const message = ev.messageId == null ? null : (messageRef.get(ev.messageId) ?? null)
      if (memory == null && message == null) return []
      return [
        {
          entity: ev.entityId == null ? null : (entityRef.get(ev.entityId) ?? null),
          relationship: ev.relationshipId == null ? null : (relationshipRef.get(ev.relationshipId) ?? null),
          memory,
          message,
          createdAt: ev.createdAt.toISOString(),
        },
      ]
    }),
  }
}
