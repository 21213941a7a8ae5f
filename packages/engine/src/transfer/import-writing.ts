import { createHash } from 'node:crypto'
import { type TokenCounter, ValidationError } from '@engram/core'
import type { NewArchivedVector, StoredMemorySettings } from '../ports/agent-archive.ts'
import type { Repositories } from '../ports/repositories.ts'
import type { TransferPrivacyPolicy } from './collaborators.ts'
import type { ImportMode, ImportReport, ParsedDocument } from './document.ts'
import { trajectoryMemoryRecords } from './trajectory-document.ts'

/**
 * The hash an embedding row keeps of the text it was computed from. It must be the embedding
 * service's (sha256, hex): a vector whose hash differs from its owner's text is embedded again.
 */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** What the checks settled before the transaction: the writing itself decides nothing. */
export interface ImportPlan {
  scope: string
  doc: ParsedDocument
  mode: ImportMode
  /** REPLACE only: the settings and (admin) policy the document brings. */
  settings?: StoredMemorySettings
  policy?: TransferPrivacyPolicy
  /** Vector owners (kind:ref) whose text the privacy guard changed: their vectors are not kept. */
  redacted: Set<string>
  /** The document's vectors are of the current model, so they are kept. */
  sameModel: boolean
  now: Date
}

/**
 * Writes a checked document with the repositories of one unit of work, so a failure part-way
 * (a conversation that already exists, a constraint) leaves nothing half-written.
 */
export async function writeImport(
  tx: Repositories,
  tokenCounter: TokenCounter,
  plan: ImportPlan,
): Promise<Omit<ImportReport, 'reembedded'>> {
  const { scope, doc, mode, settings, policy, redacted, sameModel, now } = plan
  const archive = tx.archive
  if (mode === 'REPLACE') {
    await archive.clear(scope)
    if (settings) await archive.setMemorySettings(scope, settings)
    if (policy) await archive.setPrivacyPolicy(scope, policy)
    for (const p of doc.parameters ?? []) await tx.parameters.put(scope, p.key, p.value)
  } else {
    const clash = await archive.existingConversation(
      scope,
      doc.sessions.map((s) => s.conversationId),
    )
    if (clash)
      throw new ValidationError([
        { field: 'document.sessions', message: `conversation ${clash} already exists (use REPLACE)` },
      ])
  }
  /** The text each vector owner (kind:ref) is embedded from, for the vectors' content hash. */
  const ownerText = new Map<string, string>()
  // Turns first: a memory's source turn is named by its ref in the document.
  const messageIds = new Map<string, string>()
  let messages = 0
  for (const s of doc.sessions) {
    const ids = await archive.addConversation(scope, {
      conversationId: s.conversationId,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      messages: s.messages.map((m) => ({ ...m, speaker: m.speaker ?? null })),
    })
    for (const [j, m] of s.messages.entries()) {
      messageIds.set(`${s.conversationId}#${j + 1}`, ids[j] as string)
      ownerText.set(`message:${s.conversationId}#${j + 1}`, m.content)
      messages++
    }
  }
  const memoryRows = await archive.addMemories(
    scope,
    doc.memories.map((m) => {
      ownerText.set(`memory:${m.ref}`, m.content)
      return {
        userId: m.userId,
        content: m.content,
        category: m.category,
        tags: m.tags,
        importance: m.importance,
        confidence: m.confidence,
        pinned: m.pinned,
        sourceConversationId: m.sourceConversationId,
        // A ref (`conversation#n`) names a turn of this document, written above under a new id;
        // anything else is kept as it was (documents before the refs).
        sourceMessageId:
          m.sourceMessageId == null ? null : (messageIds.get(m.sourceMessageId) ?? m.sourceMessageId),
        accessCount: m.accessCount,
        lastAccessedAt: m.lastAccessedAt,
        validFrom: m.validFrom,
        validUntil: m.validUntil,
        metadata: m.metadata,
        contentHash: contentHash(m.content),
        tokenCount: tokenCounter.count(m.content),
        createdAt: m.createdAt,
        updatedAt: m.updatedAt,
      }
    }),
  )
  const memoryIds = new Map(doc.memories.map((m, i) => [m.ref, memoryRows[i] as string]))
  const supersessions = doc.memories.flatMap((m) =>
    m.supersededBy
      ? [{ id: memoryIds.get(m.ref) as string, supersededById: memoryIds.get(m.supersededBy) as string }]
      : [],
  )
  if (supersessions.length) await archive.linkSupersessions(scope, supersessions)
  const knowledgeRows = await archive.putKnowledge(scope, doc.knowledge)
  const knowledgeIds = new Map<string, string>()
  for (const [i, k] of doc.knowledge.entries()) {
    knowledgeIds.set(`${k.category}/${k.key}`, knowledgeRows[i] as string)
    ownerText.set(`knowledge:${k.category}/${k.key}`, `${k.key}: ${k.value}`)
  }
  // A merged fact the agent already had keeps its row: its vectors are of the old value (and
  // the document's would collide with them).
  if (mode === 'MERGE' && knowledgeIds.size > 0)
    await archive.removeVectors(scope, 'knowledge', [...knowledgeIds.values()])
  if (doc.snapshots?.length) await archive.addSnapshots(scope, doc.snapshots)
  const graph = doc.graph
  if (graph && (graph.entities.length > 0 || graph.relationships.length > 0))
    await archive.addGraph(scope, {
      // Refs are the keys linking the rows; the evidence's sources are the rows written above.
      entities: graph.entities.map(({ ref, embedding, ...e }) => ({
        ...e,
        id: ref,
        // A name embedding is kept only when of the current model and of the name as written.
        embedding:
          embedding != null && sameModel && !redacted.has(`entity:${ref}`)
            ? Buffer.from(embedding, 'base64')
            : null,
      })),
      relationships: graph.relationships.map(({ ref, source, target, supersededBy, ...r }) => ({
        ...r,
        id: ref,
        sourceId: source,
        targetId: target,
        supersededById: supersededBy,
      })),
      // A source the document does not hold is dropped (never kept as an id that could name
      // another row here); evidence left with none is not written.
      evidence: graph.evidence.flatMap((ev) => {
        const memoryId = ev.memory == null ? null : (memoryIds.get(ev.memory) ?? null)
        const messageId = ev.message == null ? null : (messageIds.get(ev.message) ?? null)
        if (memoryId == null && messageId == null) return []
        return [
          {
            entityId: ev.entity,
            relationshipId: ev.relationship,
            memoryId,
            messageId,
            createdAt: ev.createdAt,
          },
        ]
      }),
    })
  // Trajectory memory as it was (ids kept; REPLACE cleared the agent's first, MERGE replaces
  // records with the same id).
  if (doc.trajectoryMemory)
    await archive.addTrajectoryMemory(scope, trajectoryMemoryRecords(scope, doc.trajectoryMemory))
  let vectors = 0
  if (sameModel && doc.embeddingModel) {
    const model = doc.embeddingModel
    const rows = doc.vectors.flatMap((v): NewArchivedVector[] => {
      const [kind, ...rest] = v.owner.split(':')
      const ref = rest.join(':')
      const ownerId =
        kind === 'memory'
          ? memoryIds.get(ref)
          : kind === 'message'
            ? messageIds.get(ref)
            : knowledgeIds.get(ref)
      // A redacted text's vector was computed from what was redacted: it is embedded again.
      // Owners and sizes were checked (assertReferences): a miss here is a redacted text.
      if (ownerId == null || !kind || redacted.has(v.owner)) return []
      return [
        {
          kind,
          ownerId,
          model,
          dimensions: v.dimensions,
          vector: Buffer.from(v.vector, 'base64'),
          contentHash: contentHash(ownerText.get(v.owner) ?? ''),
          createdAt: now,
        },
      ]
    })
    if (rows.length) await archive.addVectors(scope, rows)
    vectors = rows.length
  }
  return {
    memories: doc.memories.length,
    knowledge: doc.knowledge.length,
    sessions: doc.sessions.length,
    messages,
    vectors,
  }
}
