import { randomUUID } from 'node:crypto'
import {
  type EntityType,
  type GraphOrigin,
  normalizeEntityName,
  PRIVACY_MODES,
  type PrivacyMode,
  type PrivacyPattern,
} from '@engram/core'
import type {
  AgentArchiveRepository,
  ArchivedEntry,
  ArchivedGraph,
  ArchivedPrivacyPolicy,
  StoredMemorySettings,
} from '@engram/engine'
import { entityTerms } from '../graph/sqlite-graph.ts'
import { parseMetadata } from '../mappers.ts'
import type { Executor } from '../repositories/prisma-repositories.ts'
import { trajectoriesIn } from '../trajectories/sqlite-trajectories.ts'

/** Ids the engine hands back are ours: a string that is no row id names nothing. */
const rowId = (id: string) => {
  const value = Number(id)
  if (!Number.isSafeInteger(value)) throw new Error(`not a row id: ${id}`)
  return value
}

/** The stored settings JSON; a broken value reads as no settings rather than failing an export. */
function storedSettings(text: string): StoredMemorySettings {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as StoredMemorySettings) : {}
  } catch {
    return {}
  }
}

/** As the privacy guard reads it: an unknown mode is `redact`, unreadable patterns are none. */
function storedPolicy(mode: string, patterns: string): ArchivedPrivacyPolicy {
  const safeMode = (PRIVACY_MODES as readonly string[]).includes(mode) ? (mode as PrivacyMode) : 'redact'
  try {
    const parsed = JSON.parse(patterns) as PrivacyPattern[]
    return { mode: safeMode, patterns: Array.isArray(parsed) ? parsed : [] }
  } catch {
    return { mode: safeMode, patterns: [] }
  }
}

/**
 * An agent's whole memory on Prisma (export reads, import writes, clearing). Reads run side by
 * side outside a transaction, as the export always did; writes run on the transaction's client.
 */
export function agentArchiveIn(db: Executor): AgentArchiveRepository {
  return {
    read: async (agentId, { vectorModel, includeSnapshots }) => {
      const agent = await db.agent.findUnique({ where: { id: agentId } })
      if (!agent) return null
      const [memories, knowledge, sessions, vectors, parameters, snapshots, graph, trajectories] =
        await Promise.all([
          db.memoryItem.findMany({ where: { agentId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
          db.knowledge.findMany({ where: { agentId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
          db.session.findMany({
            where: { agentId },
            orderBy: [{ createdAt: 'asc' }, { conversationId: 'asc' }],
            include: {
              messages: { orderBy: [{ timestamp: 'asc' }, { id: 'asc' }], include: { entry: true } },
            },
          }),
          db.embedding.findMany({ where: { agentId, model: vectorModel } }),
          db.adaptiveParameter.findMany({ where: { agentId }, orderBy: { key: 'asc' } }),
          includeSnapshots
            ? db.optimizationSnapshot.findMany({
                where: { agentId },
                orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
              })
            : Promise.resolve(null),
          readGraph(db, agentId),
          trajectoriesIn(db).snapshot(agentId),
        ])
      return {
        agent: {
          id: agent.id,
          name: agent.name,
          memorySettings: storedSettings(agent.memorySettings),
          privacyPolicy: storedPolicy(agent.privacyMode, agent.privacyPatterns),
        },
        memories: memories.map((m) => ({
          id: String(m.id),
          content: m.content,
          category: m.category,
          tags: JSON.parse(m.tags) as string[],
          importance: m.importance,
          confidence: m.confidence,
          pinned: m.pinned,
          userId: m.userId,
          sourceConversationId: m.sourceConversationId,
          sourceMessageId: m.sourceMessageId,
          accessCount: m.accessCount,
          lastAccessedAt: m.lastAccessedAt,
          validFrom: m.validFrom,
          validUntil: m.validUntil,
          supersededById: m.supersededById == null ? null : String(m.supersededById),
          metadata: parseMetadata(m.metadata),
          createdAt: m.createdAt,
          updatedAt: m.updatedAt,
        })),
        knowledge: knowledge.map((k) => ({
          id: String(k.id),
          category: k.category,
          key: k.key,
          value: k.value,
          confidence: k.confidence,
          storeCount: k.storeCount,
          useCount: k.useCount,
          lastUsedAt: k.lastUsedAt,
          lastDecayAt: k.lastDecayAt,
          createdAt: k.createdAt,
          updatedAt: k.updatedAt,
        })),
        sessions: sessions.map((s) => ({
          conversationId: s.conversationId,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
          messages: s.messages.map((m) => ({
            id: String(m.id),
            role: m.role,
            speaker: m.speaker,
            content: m.content,
            tokenCount: m.tokenCount,
            isCompressed: m.isCompressed,
            metadata: parseMetadata(m.metadata),
            timestamp: m.timestamp,
            createdAt: m.createdAt,
            entry: m.entry
              ? {
                  type: m.entry.type as ArchivedEntry['type'],
                  content: m.entry.content,
                  tokenCount: m.entry.tokenCount,
                  relevance: m.entry.relevance,
                  isCompressed: m.entry.isCompressed,
                  metadata: parseMetadata(m.entry.metadata),
                  timestamp: m.entry.timestamp,
                  createdAt: m.entry.createdAt,
                }
              : null,
          })),
        })),
        vectors: vectors.map((v) => ({
          kind: v.kind,
          ownerId: String(v.ownerId),
          dimensions: v.dimensions,
          vector: new Uint8Array(v.vector),
        })),
        parameters: parameters.map((p) => ({ key: p.key, value: p.value })),
        snapshots: snapshots
          ? snapshots.map((s) => ({
              tokensBefore: s.tokensBefore,
              tokensAfter: s.tokensAfter,
              entriesCompressed: s.entriesCompressed,
              entriesDropped: s.entriesDropped,
              entriesPromoted: s.entriesPromoted,
              usageRatio: s.usageRatio,
              compressionTriggerRatio: s.compressionTriggerRatio,
              fullMessageWindow: s.fullMessageWindow,
              minRelevanceScore: s.minRelevanceScore,
              timestamp: s.timestamp,
            }))
          : null,
        graph,
        trajectories,
      }
    },

    clear: async (agentId) => {
      // Supersession links point between the agent's own memories: cut them so the rows can go.
      await db.memoryItem.updateMany({ where: { agentId }, data: { supersededById: null } })
      const counts = await Promise.all([
        db.memoryItem.deleteMany({ where: { agentId } }),
        db.knowledge.deleteMany({ where: { agentId } }),
        db.session.deleteMany({ where: { agentId } }),
        db.memoryEntry.deleteMany({ where: { agentId } }),
        db.embedding.deleteMany({ where: { agentId } }),
        db.embeddingCache.deleteMany({ where: { agentId } }),
        db.optimizationSnapshot.deleteMany({ where: { agentId } }),
        db.adaptiveParameter.deleteMany({ where: { agentId } }),
        db.job.deleteMany({ where: { agentId } }),
        // Automatic summaries (also gone with their sessions), their cursors and the profile's versions.
        db.summary.deleteMany({ where: { agentId } }),
        db.summaryCursor.deleteMany({ where: { agentId } }),
        db.profileVersion.deleteMany({ where: { agentId } }),
      ])
      // The knowledge graph: its terms and evidence go with the entities and relationships (cascade).
      await db.graphRelationship.deleteMany({ where: { agentId } })
      await db.graphEntity.deleteMany({ where: { agentId } })
      // Trajectory memory: the run registry and every scope's records.
      await trajectoriesIn(db).clear(agentId)
      return { memories: counts[0].count, knowledge: counts[1].count, sessions: counts[2].count }
    },

    agentIds: async () => (await db.agent.findMany({ select: { id: true } })).map((a) => a.id),

    setMemorySettings: async (agentId, settings) => {
      await db.agent.update({ where: { id: agentId }, data: { memorySettings: JSON.stringify(settings) } })
    },

    setPrivacyPolicy: async (agentId, policy) => {
      await db.agent.update({
        where: { id: agentId },
        data: { privacyMode: policy.mode, privacyPatterns: JSON.stringify(policy.patterns) },
      })
    },

    existingConversation: async (agentId, conversationIds) => {
      const clash = await db.session.findFirst({
        where: { agentId, conversationId: { in: [...conversationIds] } },
      })
      return clash?.conversationId ?? null
    },

    addMemories: async (agentId, memories) => {
      const ids: string[] = []
      for (const m of memories) {
        const row = await db.memoryItem.create({
          data: {
            agentId,
            userId: m.userId,
            content: m.content,
            category: m.category,
            tags: JSON.stringify(m.tags),
            importance: m.importance,
            confidence: m.confidence,
            pinned: m.pinned,
            sourceConversationId: m.sourceConversationId,
            sourceMessageId: m.sourceMessageId,
            accessCount: m.accessCount,
            lastAccessedAt: m.lastAccessedAt,
            validFrom: m.validFrom,
            validUntil: m.validUntil,
            metadata: JSON.stringify(m.metadata),
            contentHash: m.contentHash,
            tokenCount: m.tokenCount,
            createdAt: m.createdAt,
            updatedAt: m.updatedAt,
          },
        })
        ids.push(String(row.id))
      }
      return ids
    },

    linkSupersessions: async (agentId, links) => {
      for (const link of links)
        await db.memoryItem.update({
          where: { id: rowId(link.id), agentId },
          data: { supersededById: rowId(link.supersededById) },
        })
    },

    putKnowledge: async (agentId, facts) => {
      const ids: string[] = []
      for (const k of facts) {
        const fact = {
          category: k.category,
          key: k.key,
          value: k.value,
          confidence: k.confidence,
          storeCount: k.storeCount,
          useCount: k.useCount,
          lastUsedAt: k.lastUsedAt,
          lastDecayAt: k.lastDecayAt,
          createdAt: k.createdAt,
          updatedAt: k.updatedAt,
        }
        const row = await db.knowledge.upsert({
          where: { agentId_category_key: { agentId, category: k.category, key: k.key } },
          create: { agentId, ...fact },
          update: fact,
        })
        ids.push(String(row.id))
      }
      return ids
    },

    removeVectors: async (agentId, kind, ownerIds) => {
      await db.embedding.deleteMany({ where: { agentId, kind, ownerId: { in: ownerIds.map(rowId) } } })
    },

    addConversation: async (agentId, s) => {
      const session = await db.session.create({
        data: {
          id: randomUUID(),
          agentId,
          conversationId: s.conversationId,
          messageCount: s.messages.length,
          createdAt: s.createdAt,
          updatedAt: s.updatedAt,
        },
      })
      const ids: string[] = []
      for (const m of s.messages) {
        const row = await db.message.create({
          data: {
            sessionId: session.id,
            agentId,
            role: m.role,
            speaker: m.speaker,
            content: m.content,
            tokenCount: m.tokenCount,
            isCompressed: m.isCompressed,
            metadata: JSON.stringify(m.metadata),
            timestamp: m.timestamp,
            createdAt: m.createdAt,
          },
        })
        ids.push(String(row.id))
        if (m.entry)
          await db.memoryEntry.create({
            data: {
              agentId,
              sessionId: session.id,
              messageId: row.id,
              type: m.entry.type,
              role: m.role,
              content: m.entry.content,
              tokenCount: m.entry.tokenCount,
              relevance: m.entry.relevance,
              isCompressed: m.entry.isCompressed,
              metadata: JSON.stringify(m.entry.metadata),
              timestamp: m.entry.timestamp,
              createdAt: m.entry.createdAt,
            },
          })
      }
      return ids
    },

    addSnapshots: async (agentId, snapshots) => {
      await db.optimizationSnapshot.createMany({
        data: snapshots.map((s) => ({
          agentId,
          tokensBefore: s.tokensBefore,
          tokensAfter: s.tokensAfter,
          entriesCompressed: s.entriesCompressed,
          entriesDropped: s.entriesDropped,
          entriesPromoted: s.entriesPromoted,
          usageRatio: s.usageRatio,
          compressionTriggerRatio: s.compressionTriggerRatio,
          fullMessageWindow: s.fullMessageWindow,
          minRelevanceScore: s.minRelevanceScore,
          timestamp: s.timestamp,
        })),
      })
    },

    addGraph: (agentId, graph) => addGraph(db, agentId, graph),

    addTrajectoryMemory: (agentId, memory) => trajectoriesIn(db).restore(agentId, memory),

    addVectors: async (agentId, vectors) => {
      await db.embedding.createMany({
        data: vectors.map((v) => ({
          kind: v.kind,
          ownerId: rowId(v.ownerId),
          agentId,
          model: v.model,
          dimensions: v.dimensions,
          vector: new Uint8Array(v.vector),
          contentHash: v.contentHash,
          createdAt: v.createdAt,
        })),
      })
    },
  }
}

/** The agent's graph, oldest first, evidence in the order recorded. */
async function readGraph(db: Executor, agentId: string): Promise<ArchivedGraph> {
  const byAge = [{ createdAt: 'asc' as const }, { id: 'asc' as const }]
  const [entities, relationships, evidence] = await Promise.all([
    db.graphEntity.findMany({ where: { agentId }, orderBy: byAge }),
    db.graphRelationship.findMany({ where: { agentId }, orderBy: byAge }),
    db.graphEvidence.findMany({ where: { agentId }, orderBy: { id: 'asc' } }),
  ])
  const id = (value: number | null) => (value == null ? null : String(value))
  return {
    entities: entities.map((e) => ({
      id: String(e.id),
      userId: e.userId,
      type: e.type as EntityType,
      name: e.name,
      aliases: JSON.parse(e.aliases) as string[],
      summary: e.summary,
      embedding: e.embedding ? new Uint8Array(e.embedding) : null,
      mentionCount: e.mentionCount,
      origin: e.origin as GraphOrigin,
      firstSeenAt: e.firstSeenAt,
      lastSeenAt: e.lastSeenAt,
      createdAt: e.createdAt,
      updatedAt: e.updatedAt,
    })),
    relationships: relationships.map((r) => ({
      id: String(r.id),
      userId: r.userId,
      sourceId: String(r.sourceId),
      relation: r.relation,
      targetId: String(r.targetId),
      confidence: r.confidence,
      validFrom: r.validFrom,
      validUntil: r.validUntil,
      learntAt: r.learntAt,
      retiredAt: r.retiredAt,
      retiredReason: r.retiredReason,
      supersededById: id(r.supersededById),
      origin: r.origin as GraphOrigin,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
    })),
    evidence: evidence.map((ev) => ({
      entityId: id(ev.entityId),
      relationshipId: id(ev.relationshipId),
      memoryId: ev.memoryId,
      messageId: ev.messageId,
      createdAt: ev.createdAt,
    })),
  }
}

/** Writes a graph under new ids, its keys mapped: entities, then relationships, their supersessions, evidence. */
async function addGraph(db: Executor, agentId: string, graph: ArchivedGraph): Promise<void> {
  const entityIds = new Map<string, number>()
  for (const e of graph.entities) {
    const row = await db.graphEntity.create({
      data: {
        agentId,
        userId: e.userId,
        type: e.type,
        name: e.name,
        normalizedName: normalizeEntityName(e.name),
        aliases: JSON.stringify(e.aliases),
        summary: e.summary,
        embedding: e.embedding ? new Uint8Array(e.embedding) : null,
        mentionCount: e.mentionCount,
        origin: e.origin,
        firstSeenAt: e.firstSeenAt,
        lastSeenAt: e.lastSeenAt,
        createdAt: e.createdAt,
        updatedAt: e.updatedAt,
      },
    })
    await db.graphEntityTerm.createMany({
      data: entityTerms(e.name, e.aliases).map((t) => ({ entityId: row.id, agentId, ...t })),
    })
    entityIds.set(e.id, row.id)
  }
  const known = (ids: Map<string, number>, key: string | null, what: string) => {
    if (key == null) return null
    const id = ids.get(key)
    if (id == null) throw new Error(`the graph names no ${what} ${key}`)
    return id
  }
  const relationshipIds = new Map<string, number>()
  for (const r of graph.relationships) {
    const row = await db.graphRelationship.create({
      data: {
        agentId,
        userId: r.userId,
        sourceId: known(entityIds, r.sourceId, 'entity') as number,
        relation: r.relation,
        targetId: known(entityIds, r.targetId, 'entity') as number,
        confidence: r.confidence,
        validFrom: r.validFrom,
        validUntil: r.validUntil,
        learntAt: r.learntAt,
        retiredAt: r.retiredAt,
        retiredReason: r.retiredReason,
        origin: r.origin,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
      },
    })
    relationshipIds.set(r.id, row.id)
  }
  for (const r of graph.relationships)
    if (r.supersededById != null)
      await db.graphRelationship.update({
        where: { id: relationshipIds.get(r.id) as number },
        data: { supersededById: known(relationshipIds, r.supersededById, 'relationship') },
      })
  if (graph.evidence.length)
    await db.graphEvidence.createMany({
      data: graph.evidence.map((ev) => ({
        agentId,
        entityId: known(entityIds, ev.entityId, 'entity'),
        relationshipId: known(relationshipIds, ev.relationshipId, 'relationship'),
        memoryId: ev.memoryId,
        messageId: ev.messageId,
        createdAt: ev.createdAt,
      })),
    })
}
