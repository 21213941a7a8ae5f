import { edgeHoldsAt, NotFoundError, nameTokens, normalizeEntityName } from '@engram/core'
import type {
  GraphEntityQuery,
  GraphEntityRecord,
  GraphEvidenceRecord,
  GraphRelationshipFilter,
  GraphRelationshipRecord,
  GraphRepository,
} from '../ports/graph.ts'
import { SerialState } from './serial-state.ts'

interface State {
  entities: Map<string, GraphEntityRecord>
  relationships: Map<string, GraphRelationshipRecord>
  evidence: GraphEvidenceRecord[]
  nextId: number
}

const byMentions = (a: GraphEntityRecord, b: GraphEntityRecord) =>
  b.mentionCount - a.mentionCount || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
const byConfidence = (a: GraphRelationshipRecord, b: GraphRelationshipRecord) =>
  b.confidence - a.confidence ||
  b.learntAt.getTime() - a.learntAt.getTime() ||
  (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Every normalised form an entity answers to: its name and each alias. */
const namesOf = (e: GraphEntityRecord) => [e.normalizedName, ...e.aliases.map(normalizeEntityName)]

/** The knowledge graph in memory: the reference the conformance spec holds the SQL adapters to. */
export class InMemoryGraph {
  private readonly store = new SerialState<State>({
    entities: new Map(),
    relationships: new Map(),
    evidence: [],
    nextId: 1,
  })
  readonly repository: GraphRepository

  constructor() {
    this.repository = this.build()
  }

  forgetAgent(agentId: string): void {
    const s = this.store.state
    for (const [id, e] of s.entities) if (e.agentId === agentId) s.entities.delete(id)
    for (const [id, r] of s.relationships) if (r.agentId === agentId) s.relationships.delete(id)
    const entityIds = new Set(s.entities.keys())
    const relationshipIds = new Set(s.relationships.keys())
    s.evidence = s.evidence.filter((ev) =>
      ev.entityId ? entityIds.has(ev.entityId) : relationshipIds.has(ev.relationshipId ?? ''),
    )
  }

  /** What the agent holds in the graph, per kind of row (the agent data count lists them). */
  owned(agentId: string): { entities: number; relationships: number; evidence: number } {
    const s = this.store.state
    const entities = new Set([...s.entities.values()].filter((e) => e.agentId === agentId).map((e) => e.id))
    const relationships = new Set(
      [...s.relationships.values()].filter((r) => r.agentId === agentId).map((r) => r.id),
    )
    const evidence = s.evidence.filter((ev) =>
      ev.entityId ? entities.has(ev.entityId) : relationships.has(ev.relationshipId ?? ''),
    ).length
    return { entities: entities.size, relationships: relationships.size, evidence }
  }

  private build(): GraphRepository {
    const s = () => this.store.state
    const nextId = (prefix: string) => `${prefix}${String(s().nextId++).padStart(8, '0')}`
    const entity = (agentId: string | null, id: string) => {
      const e = s().entities.get(id)
      return e && (agentId == null || e.agentId === agentId) ? e : null
    }
    const relationship = (agentId: string | null, id: string) => {
      const r = s().relationships.get(id)
      return r && (agentId == null || r.agentId === agentId) ? r : null
    }
    const copyEntity = (e: GraphEntityRecord): GraphEntityRecord => ({
      ...e,
      aliases: [...e.aliases],
      embedding: e.embedding ? new Float32Array(e.embedding) : null,
    })
    const copyRelationship = (r: GraphRelationshipRecord): GraphRelationshipRecord => ({ ...r })
    const entityMatches = (agentId: string | null, q: GraphEntityQuery) => (e: GraphEntityRecord) =>
      (agentId == null || e.agentId === agentId) &&
      (!q.type || e.type === q.type) &&
      (q.userId === undefined || e.userId === q.userId) &&
      (!q.learntBy || e.createdAt.getTime() <= q.learntBy.getTime()) &&
      (!q.nameContains || namesOf(e).some((n) => n.includes(q.nameContains as string)))
    const edgeMatches =
      (agentId: string | null, f: GraphRelationshipFilter) => (r: GraphRelationshipRecord) =>
        (agentId == null || r.agentId === agentId) &&
        (!f.relations || f.relations.includes(r.relation)) &&
        (!f.entityIds || f.entityIds.includes(r.sourceId) || f.entityIds.includes(r.targetId)) &&
        (f.minConfidence == null || r.confidence >= f.minConfidence) &&
        (f.userId === undefined || r.userId === f.userId) &&
        (!f.at || edgeHoldsAt(r, f.at))
    const dropRelationship = (id: string) => {
      s().relationships.delete(id)
      s().evidence = s().evidence.filter((ev) => ev.relationshipId !== id)
      // An edge it superseded keeps its row and its ended validity; the link to nothing goes (SET NULL in SQL).
      for (const r of s().relationships.values()) if (r.supersededById === id) r.supersededById = null
    }

    const repository: GraphRepository = {
      transaction: (fn) => this.store.transaction(() => fn(repository)),

      findEntity: async (agentId, id) => {
        const e = entity(agentId, id)
        return e ? copyEntity(e) : null
      },
      entitiesByIds: async (agentId, ids) =>
        ids.flatMap((id) => {
          const e = entity(agentId, id)
          return e ? [copyEntity(e)] : []
        }),
      entitiesByName: async (agentId, normalizedName) =>
        [...s().entities.values()]
          .filter((e) => e.agentId === agentId && namesOf(e).includes(normalizedName))
          .sort(byMentions)
          .map(copyEntity),
      entitiesByTokens: async (agentId, tokens, limit) => {
        const wanted = new Set(tokens)
        return [...s().entities.values()]
          .filter(
            (e) => e.agentId === agentId && namesOf(e).some((n) => nameTokens(n).some((t) => wanted.has(t))),
          )
          .sort(byMentions)
          .slice(0, limit)
          .map(copyEntity)
      },
      searchEntities: async (agentId, query, offset, limit) =>
        [...s().entities.values()]
          .filter(entityMatches(agentId, query))
          .sort(byMentions)
          .slice(offset, offset + limit)
          .map(copyEntity),
      countEntities: async (agentId, query) =>
        [...s().entities.values()].filter(entityMatches(agentId, query)).length,
      createEntity: async (agentId, input) => {
        const id = nextId('ent')
        const row: GraphEntityRecord = {
          id,
          agentId,
          userId: input.userId,
          type: input.type,
          name: input.name,
          normalizedName: normalizeEntityName(input.name),
          aliases: [...input.aliases],
          summary: input.summary,
          embedding: input.embedding ? new Float32Array(input.embedding) : null,
          mentionCount: input.mentionCount,
          origin: input.origin,
          firstSeenAt: input.firstSeenAt,
          lastSeenAt: input.lastSeenAt,
          createdAt: input.createdAt,
          updatedAt: input.createdAt,
        }
        s().entities.set(id, row)
        return copyEntity(row)
      },
      updateEntity: async (agentId, id, changes) => {
        const e = entity(agentId, id)
        if (!e) throw new NotFoundError('GraphEntity', id)
        const { embedding, aliases, ...rest } = changes
        Object.assign(e, rest)
        if (aliases) e.aliases = [...aliases]
        if (embedding !== undefined) e.embedding = embedding ? new Float32Array(embedding) : null
        if (changes.name !== undefined) e.normalizedName = normalizeEntityName(changes.name)
        return copyEntity(e)
      },
      deleteEntity: async (agentId, id) => {
        if (!entity(agentId, id)) throw new NotFoundError('GraphEntity', id)
        for (const r of [...s().relationships.values()])
          if (r.sourceId === id || r.targetId === id) dropRelationship(r.id)
        s().entities.delete(id)
        s().evidence = s().evidence.filter((ev) => ev.entityId !== id)
      },

      findRelationship: async (agentId, id) => {
        const r = relationship(agentId, id)
        return r ? copyRelationship(r) : null
      },
      relationships: async (agentId, filter, offset, limit) =>
        [...s().relationships.values()]
          .filter(edgeMatches(agentId, filter))
          .sort(byConfidence)
          .slice(offset, offset + limit)
          .map(copyRelationship),
      countRelationships: async (agentId, filter) =>
        [...s().relationships.values()].filter(edgeMatches(agentId, filter)).length,
      countEdgesOf: async (agentId, entityId) =>
        [...s().relationships.values()].filter(
          (r) => r.agentId === agentId && (r.sourceId === entityId || r.targetId === entityId),
        ).length,
      createRelationship: async (agentId, input) => {
        for (const end of [input.sourceId, input.targetId])
          if (!entity(agentId, end)) throw new NotFoundError('GraphEntity', end)
        const id = nextId('rel')
        const row: GraphRelationshipRecord = {
          id,
          agentId,
          userId: input.userId,
          sourceId: input.sourceId,
          relation: input.relation,
          targetId: input.targetId,
          confidence: input.confidence,
          validFrom: input.validFrom,
          validUntil: input.validUntil,
          learntAt: input.learntAt,
          retiredAt: null,
          retiredReason: null,
          supersededById: null,
          origin: input.origin,
          createdAt: input.createdAt,
          updatedAt: input.createdAt,
        }
        s().relationships.set(id, row)
        return copyRelationship(row)
      },
      updateRelationship: async (agentId, id, changes) => {
        const r = relationship(agentId, id)
        if (!r) throw new NotFoundError('GraphRelationship', id)
        for (const end of [changes.sourceId, changes.targetId])
          if (end !== undefined && !entity(agentId, end)) throw new NotFoundError('GraphEntity', end)
        Object.assign(r, changes)
        return copyRelationship(r)
      },
      deleteRelationship: async (agentId, id) => {
        if (!relationship(agentId, id)) throw new NotFoundError('GraphRelationship', id)
        dropRelationship(id)
      },
      reassignEntity: async (agentId, fromId, intoId, at) => {
        if (!entity(agentId, fromId)) throw new NotFoundError('GraphEntity', fromId)
        if (!entity(agentId, intoId)) throw new NotFoundError('GraphEntity', intoId)
        for (const r of s().relationships.values()) {
          if (r.agentId !== agentId) continue
          if (r.sourceId === fromId) Object.assign(r, { sourceId: intoId, updatedAt: at })
          if (r.targetId === fromId) Object.assign(r, { targetId: intoId, updatedAt: at })
        }
        for (const ev of s().evidence) if (ev.entityId === fromId) ev.entityId = intoId
        s().evidence = dedupe(s().evidence)
        s().entities.delete(fromId)
      },

      addEvidence: async (agentId, evidence, at) => {
        for (const ev of evidence) {
          const owner = ev.entityId
            ? entity(agentId, ev.entityId)
            : relationship(agentId, ev.relationshipId ?? '')
          if (!owner)
            throw new NotFoundError(
              ev.entityId ? 'GraphEntity' : 'GraphRelationship',
              ev.entityId ?? ev.relationshipId ?? '',
            )
          s().evidence.push({ ...ev, createdAt: at })
        }
        s().evidence = dedupe(s().evidence)
      },
      evidenceOf: async (agentId, subject) => {
        const rel = new Set(subject.relationshipIds ?? [])
        const ent = new Set(subject.entityIds ?? [])
        return s()
          .evidence.filter((ev) =>
            ev.relationshipId
              ? rel.has(ev.relationshipId) && relationship(agentId, ev.relationshipId)
              : ent.has(ev.entityId ?? '') && entity(agentId, ev.entityId ?? ''),
          )
          .map((ev) => ({ ...ev }))
      },
      forgetSources: async (agentId, sources) => {
        const memories = new Set(sources.memoryIds ?? [])
        const messages = new Set(sources.messageIds ?? [])
        const owned = (ev: GraphEvidenceRecord) =>
          ev.entityId ? entity(agentId, ev.entityId) : relationship(agentId, ev.relationshipId ?? '')
        const touched = s().evidence.filter(
          (ev) =>
            owned(ev) &&
            ((ev.memoryId != null && memories.has(ev.memoryId)) ||
              (ev.messageId != null && messages.has(ev.messageId))),
        )
        if (touched.length === 0) return { relationships: 0, entities: 0 }
        const gone = new Set(touched)
        s().evidence = s().evidence.filter((ev) => !gone.has(ev))
        const supported = (kind: 'entityId' | 'relationshipId', id: string) =>
          s().evidence.some((ev) => ev[kind] === id)
        let relationships = 0
        // Ends of a deleted edge may have lost their last use too.
        const candidates = new Set(touched.flatMap((ev) => (ev.entityId ? [ev.entityId] : [])))
        for (const relId of new Set(
          touched.flatMap((ev) => (ev.relationshipId ? [ev.relationshipId] : [])),
        )) {
          const r = relationship(agentId, relId)
          if (r && r.origin === 'FORMED' && !supported('relationshipId', relId)) {
            candidates.add(r.sourceId)
            candidates.add(r.targetId)
            dropRelationship(relId)
            relationships++
          }
        }
        let entities = 0
        for (const entityId of candidates) {
          const e = entity(agentId, entityId)
          if (e?.origin !== 'FORMED' || supported('entityId', entityId)) continue
          const used = [...s().relationships.values()].some(
            (r) => r.sourceId === entityId || r.targetId === entityId,
          )
          if (used) continue
          s().entities.delete(entityId)
          entities++
        }
        return { relationships, entities }
      },
      clear: async (agentId) => {
        const relationships = [...s().relationships.values()].filter((r) => r.agentId === agentId).length
        const entities = [...s().entities.values()].filter((e) => e.agentId === agentId).length
        this.forgetAgent(agentId)
        return { relationships, entities }
      },
    }
    return repository
  }
}

function dedupe(evidence: GraphEvidenceRecord[]): GraphEvidenceRecord[] {
  const seen = new Set<string>()
  return evidence.filter((ev) => {
    const key = `${ev.entityId}|${ev.relationshipId}|${ev.memoryId}|${ev.messageId}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
