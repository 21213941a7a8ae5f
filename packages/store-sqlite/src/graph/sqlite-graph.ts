import {
  type EntityType,
  type GraphOrigin,
  type GraphTime,
  NotFoundError,
  nameTokens,
  normalizeEntityName,
} from '@engram/core'
import type {
  GraphEntityQuery,
  GraphEntityRecord,
  GraphEvidenceRecord,
  GraphForgetResult,
  GraphRelationshipFilter,
  GraphRelationshipRecord,
  GraphRepository,
} from '@engram/engine'
import type { Database, Transaction } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import type {
  GraphEntity as EntityRow,
  GraphEvidence as EvidenceRow,
  Prisma,
  GraphRelationship as RelationshipRow,
} from '../generated/prisma/client.ts'
import { parseRowId } from '../mappers.ts'

/** Ids bound in one `IN (...)`: well under SQLite's bound-parameter limit, whatever a deletion brings. */
const IDS_PER_STATEMENT = 500

const chunks = <T>(items: readonly T[]): T[][] => {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += IDS_PER_STATEMENT) out.push(items.slice(i, i + IDS_PER_STATEMENT))
  return out
}

/** The float32 bytes of an embedding, as stored, and back (copied: the row's buffer is not shared). */
const embeddingBytes = (vector: Float32Array | null | undefined): Uint8Array<ArrayBuffer> | null =>
  vector ? new Uint8Array(Float32Array.from(vector).buffer) : null
const embeddingOf = (bytes: Uint8Array | null) =>
  bytes ? new Float32Array(Uint8Array.from(bytes).buffer) : null

function parseAliases(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value.filter((a): a is string => typeof a === 'string') : []
  } catch {
    return []
  }
}

export function toGraphEntity(row: EntityRow): GraphEntityRecord {
  return {
    id: String(row.id),
    agentId: row.agentId,
    userId: row.userId,
    type: row.type as EntityType,
    name: row.name,
    normalizedName: row.normalizedName,
    aliases: parseAliases(row.aliases),
    summary: row.summary,
    embedding: embeddingOf(row.embedding),
    mentionCount: row.mentionCount,
    origin: row.origin as GraphOrigin,
    firstSeenAt: row.firstSeenAt,
    lastSeenAt: row.lastSeenAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

export function toGraphRelationship(row: RelationshipRow): GraphRelationshipRecord {
  return {
    id: String(row.id),
    agentId: row.agentId,
    userId: row.userId,
    sourceId: String(row.sourceId),
    relation: row.relation,
    targetId: String(row.targetId),
    confidence: row.confidence,
    validFrom: row.validFrom,
    validUntil: row.validUntil,
    learntAt: row.learntAt,
    retiredAt: row.retiredAt,
    retiredReason: row.retiredReason,
    supersededById: row.supersededById == null ? null : String(row.supersededById),
    origin: row.origin as GraphOrigin,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

export function toGraphEvidence(row: EvidenceRow): GraphEvidenceRecord {
  return {
    entityId: row.entityId == null ? null : String(row.entityId),
    relationshipId: row.relationshipId == null ? null : String(row.relationshipId),
    memoryId: row.memoryId,
    messageId: row.messageId,
    createdAt: row.createdAt,
  }
}

/**
 * The terms an entity is found by (GraphEntityTerm): NAME rows for its normalised name and each
 * normalised alias (entitiesByName), TOKEN rows for their words (entitiesByTokens).
 */
export function entityTerms(
  name: string,
  aliases: readonly string[],
): { kind: 'NAME' | 'TOKEN'; term: string }[] {
  const names = [...new Set([normalizeEntityName(name), ...aliases.map(normalizeEntityName)])].filter(Boolean)
  const tokens = [...new Set(names.flatMap(nameTokens))]
  return [
    ...names.map((term) => ({ kind: 'NAME' as const, term })),
    ...tokens.map((term) => ({ kind: 'TOKEN' as const, term })),
  ]
}

/** The bi-temporal read (core's edgeHoldsAt) as a where: validFrom ≤ asOf < validUntil, learntAt ≤ knownAt < retiredAt. */
export function holdsAt(time: GraphTime): Prisma.GraphRelationshipWhereInput[] {
  return [
    { OR: [{ validFrom: null }, { validFrom: { lte: time.asOf } }] },
    { OR: [{ validUntil: null }, { validUntil: { gt: time.asOf } }] },
    { learntAt: { lte: time.knownAt } },
    { OR: [{ retiredAt: null }, { retiredAt: { gt: time.knownAt } }] },
  ]
}

const rowIds = (ids: readonly string[]) => ids.flatMap((id) => parseRowId(id) ?? [])

function entityWhere(
  agentId: string | null,
  query: GraphEntityQuery,
  dialect: SqlDialect,
): Prisma.GraphEntityWhereInput {
  return {
    ...(agentId ? { agentId } : {}),
    ...(query.type ? { type: query.type } : {}),
    ...(query.userId !== undefined ? { userId: query.userId } : {}),
    ...(query.learntBy ? { createdAt: { lte: query.learntBy } } : {}),
    // The NAME terms hold the normalised name and every normalised alias.
    ...(query.nameContains
      ? { terms: { some: { kind: 'NAME', term: dialect.ignoringCase({ contains: query.nameContains }) } } }
      : {}),
  }
}

function relationshipWhere(
  agentId: string | null,
  filter: GraphRelationshipFilter,
): Prisma.GraphRelationshipWhereInput {
  const and: Prisma.GraphRelationshipWhereInput[] = []
  if (filter.entityIds) {
    const ids = rowIds(filter.entityIds)
    and.push({ OR: [{ sourceId: { in: ids } }, { targetId: { in: ids } }] })
  }
  if (filter.at) and.push(...holdsAt(filter.at))
  return {
    ...(agentId ? { agentId } : {}),
    ...(filter.relations ? { relation: { in: [...filter.relations] } } : {}),
    ...(filter.minConfidence != null ? { confidence: { gte: filter.minConfidence } } : {}),
    ...(filter.userId !== undefined ? { userId: filter.userId } : {}),
    ...(and.length ? { AND: and } : {}),
  }
}

const BY_MENTIONS: Prisma.GraphEntityOrderByWithRelationInput[] = [{ mentionCount: 'desc' }, { id: 'asc' }]
const BY_CONFIDENCE: Prisma.GraphRelationshipOrderByWithRelationInput[] = [
  { confidence: 'desc' },
  { learntAt: 'desc' },
  { id: 'asc' },
]

/** The knowledge graph on SQLite (and on Postgres through the shared view): Prisma's model API. */
export function sqliteGraph(db: Database, dialect: SqlDialect = sqliteDialect): GraphRepository {
  return graphIn(db, (fn) => db.$transaction((tx) => fn(graphIn(tx, null, dialect))), dialect)
}

function graphIn(
  db: Database | Transaction,
  transaction: GraphRepository['transaction'] | null,
  dialect: SqlDialect,
): GraphRepository {
  const ownedEntity = async (agentId: string, id: string) => {
    const rowId = parseRowId(id)
    const row = rowId == null ? null : await db.graphEntity.findFirst({ where: { id: rowId, agentId } })
    if (!row) throw new NotFoundError('GraphEntity', id)
    return row
  }
  const ownedRelationship = async (agentId: string, id: string) => {
    const rowId = parseRowId(id)
    const row = rowId == null ? null : await db.graphRelationship.findFirst({ where: { id: rowId, agentId } })
    if (!row) throw new NotFoundError('GraphRelationship', id)
    return row
  }
  const writeTerms = async (agentId: string, entityId: number, name: string, aliases: readonly string[]) => {
    await db.graphEntityTerm.deleteMany({ where: { entityId } })
    await db.graphEntityTerm.createMany({
      data: entityTerms(name, aliases).map((t) => ({ entityId, agentId, ...t })),
    })
  }
  /** Entities whose terms of `kind` include one of `terms`: an index seek on (agentId, kind, term). */
  const entityIdsByTerm = async (agentId: string, kind: 'NAME' | 'TOKEN', terms: readonly string[]) => {
    const ids = new Set<number>()
    for (const part of chunks([...new Set(terms)])) {
      const rows = await db.graphEntityTerm.findMany({
        where: { agentId, kind, term: { in: part } },
        select: { entityId: true },
      })
      for (const row of rows) ids.add(row.entityId)
    }
    return [...ids]
  }
  /** The entities of these ids, most mentioned first; each chunk reads at most `limit` rows. */
  const entitiesOrdered = async (agentId: string, ids: readonly number[], limit?: number) => {
    if (ids.length === 0) return []
    const rows: EntityRow[] = []
    for (const part of chunks(ids))
      rows.push(
        ...(await db.graphEntity.findMany({
          where: { agentId, id: { in: part } },
          orderBy: BY_MENTIONS,
          ...(limit == null ? {} : { take: limit }),
        })),
      )
    rows.sort((a, b) => b.mentionCount - a.mentionCount || a.id - b.id)
    return (limit == null ? rows : rows.slice(0, limit)).map(toGraphEntity)
  }
  /** The given evidence rows' subjects that have none left. */
  const unsupported = async (field: 'entityId' | 'relationshipId', ids: readonly number[]) => {
    const left = new Set<number>()
    for (const part of chunks(ids)) {
      const rows = await db.graphEvidence.findMany({
        where: { [field]: { in: part } },
        select: { [field]: true },
        distinct: [field],
      })
      for (const row of rows) left.add((row as Record<string, number>)[field] as number)
    }
    return ids.filter((id) => !left.has(id))
  }

  const repository: GraphRepository = {
    // Inside a transaction already: the work joins it.
    transaction: transaction ?? ((fn) => fn(repository)),

    findEntity: async (agentId, id) => {
      const rowId = parseRowId(id)
      const row = rowId == null ? null : await db.graphEntity.findFirst({ where: { id: rowId, agentId } })
      return row ? toGraphEntity(row) : null
    },
    entitiesByIds: async (agentId, ids) => {
      const rows = new Map<number, EntityRow>()
      for (const part of chunks(rowIds(ids)))
        for (const row of await db.graphEntity.findMany({ where: { agentId, id: { in: part } } }))
          rows.set(row.id, row)
      // In the order asked, as the in-memory adapter answers.
      return ids.flatMap((id) => {
        const row = rows.get(parseRowId(id) ?? -1)
        return row ? [toGraphEntity(row)] : []
      })
    },
    entitiesByName: async (agentId, normalizedName) =>
      entitiesOrdered(agentId, await entityIdsByTerm(agentId, 'NAME', [normalizedName])),
    entitiesByTokens: async (agentId, tokens, limit) =>
      tokens.length === 0 || limit <= 0
        ? []
        : entitiesOrdered(agentId, await entityIdsByTerm(agentId, 'TOKEN', tokens), limit),
    searchEntities: async (agentId, query, offset, limit) =>
      (
        await db.graphEntity.findMany({
          where: entityWhere(agentId, query, dialect),
          orderBy: BY_MENTIONS,
          skip: offset,
          take: limit,
        })
      ).map(toGraphEntity),
    countEntities: (agentId, query) => db.graphEntity.count({ where: entityWhere(agentId, query, dialect) }),
    createEntity: async (agentId, input) => {
      const row = await db.graphEntity.create({
        data: {
          agentId,
          userId: input.userId,
          type: input.type,
          name: input.name,
          normalizedName: normalizeEntityName(input.name),
          aliases: JSON.stringify(input.aliases),
          summary: input.summary,
          embedding: embeddingBytes(input.embedding),
          mentionCount: input.mentionCount,
          origin: input.origin,
          firstSeenAt: input.firstSeenAt,
          lastSeenAt: input.lastSeenAt,
          createdAt: input.createdAt,
          updatedAt: input.createdAt,
        },
      })
      await writeTerms(agentId, row.id, input.name, input.aliases)
      return toGraphEntity(row)
    },
    updateEntity: async (agentId, id, changes) => {
      const current = await ownedEntity(agentId, id)
      const { embedding, aliases, name, ...rest } = changes
      const row = await db.graphEntity.update({
        where: { id: current.id },
        data: {
          ...rest,
          ...(name !== undefined ? { name, normalizedName: normalizeEntityName(name) } : {}),
          ...(aliases !== undefined ? { aliases: JSON.stringify(aliases) } : {}),
          ...(embedding !== undefined ? { embedding: embeddingBytes(embedding) } : {}),
        },
      })
      if (name !== undefined || aliases !== undefined)
        await writeTerms(agentId, row.id, row.name, parseAliases(row.aliases))
      return toGraphEntity(row)
    },
    deleteEntity: async (agentId, id) => {
      const rowId = parseRowId(id)
      // The schema's cascades take its relationships, their evidence, its own evidence and terms.
      const { count } =
        rowId == null ? { count: 0 } : await db.graphEntity.deleteMany({ where: { id: rowId, agentId } })
      if (count === 0) throw new NotFoundError('GraphEntity', id)
    },

    findRelationship: async (agentId, id) => {
      const rowId = parseRowId(id)
      const row =
        rowId == null ? null : await db.graphRelationship.findFirst({ where: { id: rowId, agentId } })
      return row ? toGraphRelationship(row) : null
    },
    relationships: async (agentId, filter, offset, limit) =>
      (
        await db.graphRelationship.findMany({
          where: relationshipWhere(agentId, filter),
          orderBy: BY_CONFIDENCE,
          skip: offset,
          take: limit,
        })
      ).map(toGraphRelationship),
    countRelationships: (agentId, filter) =>
      db.graphRelationship.count({ where: relationshipWhere(agentId, filter) }),
    countEdgesOf: async (agentId, entityId) => {
      const rowId = parseRowId(entityId)
      if (rowId == null) return 0
      return db.graphRelationship.count({
        where: { agentId, OR: [{ sourceId: rowId }, { targetId: rowId }] },
      })
    },
    createRelationship: async (agentId, input) => {
      const source = await ownedEntity(agentId, input.sourceId)
      const target = await ownedEntity(agentId, input.targetId)
      const row = await db.graphRelationship.create({
        data: {
          agentId,
          userId: input.userId,
          sourceId: source.id,
          relation: input.relation,
          targetId: target.id,
          confidence: input.confidence,
          validFrom: input.validFrom,
          validUntil: input.validUntil,
          learntAt: input.learntAt,
          origin: input.origin,
          createdAt: input.createdAt,
          updatedAt: input.createdAt,
        },
      })
      return toGraphRelationship(row)
    },
    updateRelationship: async (agentId, id, changes) => {
      const current = await ownedRelationship(agentId, id)
      const { sourceId, targetId, supersededById, ...rest } = changes
      const source = sourceId !== undefined ? await ownedEntity(agentId, sourceId) : null
      const target = targetId !== undefined ? await ownedEntity(agentId, targetId) : null
      const superseding =
        supersededById == null ? supersededById : (await ownedRelationship(agentId, supersededById)).id
      const row = await db.graphRelationship.update({
        where: { id: current.id },
        data: {
          ...rest,
          ...(source ? { sourceId: source.id } : {}),
          ...(target ? { targetId: target.id } : {}),
          ...(superseding !== undefined ? { supersededById: superseding } : {}),
        },
      })
      return toGraphRelationship(row)
    },
    deleteRelationship: async (agentId, id) => {
      const rowId = parseRowId(id)
      // Its evidence goes by cascade; an edge it superseded keeps its row with the link cut (SET NULL).
      const { count } =
        rowId == null
          ? { count: 0 }
          : await db.graphRelationship.deleteMany({ where: { id: rowId, agentId } })
      if (count === 0) throw new NotFoundError('GraphRelationship', id)
    },
    reassignEntity: async (agentId, fromId, intoId, at) => {
      const from = await ownedEntity(agentId, fromId)
      const into = await ownedEntity(agentId, intoId)
      await db.graphRelationship.updateMany({
        where: { agentId, sourceId: from.id },
        data: { sourceId: into.id, updatedAt: at },
      })
      await db.graphRelationship.updateMany({
        where: { agentId, targetId: from.id },
        data: { targetId: into.id, updatedAt: at },
      })
      // A source both already cite stays once: the merged entity's copy goes with it.
      const kept = await db.graphEvidence.findMany({ where: { entityId: into.id } })
      const cited = new Set(kept.map((ev) => `${ev.memoryId}|${ev.messageId}`))
      const moving = await db.graphEvidence.findMany({ where: { entityId: from.id } })
      const moved = moving.filter((ev) => {
        const key = `${ev.memoryId}|${ev.messageId}`
        if (cited.has(key)) return false
        cited.add(key)
        return true
      })
      for (const part of chunks(moved.map((ev) => ev.id)))
        await db.graphEvidence.updateMany({ where: { id: { in: part } }, data: { entityId: into.id } })
      await db.graphEntity.delete({ where: { id: from.id } })
    },

    addEvidence: async (agentId, evidence, at) => {
      if (evidence.length === 0) return
      const entityIds = new Map<string, number>()
      const relationshipIds = new Map<string, number>()
      for (const ev of evidence) {
        if (ev.entityId) entityIds.set(ev.entityId, (await ownedEntity(agentId, ev.entityId)).id)
        else
          relationshipIds.set(
            ev.relationshipId ?? '',
            (await ownedRelationship(agentId, ev.relationshipId ?? '')).id,
          )
      }
      const existing = await db.graphEvidence.findMany({
        where: {
          OR: [
            { entityId: { in: [...entityIds.values()] } },
            { relationshipId: { in: [...relationshipIds.values()] } },
          ],
        },
      })
      const key = (
        entityId: number | null,
        relationshipId: number | null,
        memoryId: string | null,
        messageId: string | null,
      ) => `${entityId}|${relationshipId}|${memoryId}|${messageId}`
      const seen = new Set(
        existing.map((ev) => key(ev.entityId, ev.relationshipId, ev.memoryId, ev.messageId)),
      )
      const data: Prisma.GraphEvidenceCreateManyInput[] = []
      for (const ev of evidence) {
        const entityId = ev.entityId ? (entityIds.get(ev.entityId) as number) : null
        const relationshipId = ev.entityId ? null : (relationshipIds.get(ev.relationshipId ?? '') as number)
        const k = key(entityId, relationshipId, ev.memoryId, ev.messageId)
        if (seen.has(k)) continue
        seen.add(k)
        data.push({
          agentId,
          entityId,
          relationshipId,
          memoryId: ev.memoryId,
          messageId: ev.messageId,
          createdAt: at,
        })
      }
      if (data.length) await db.graphEvidence.createMany({ data })
    },
    evidenceOf: async (agentId, subject) => {
      const relationshipIds = rowIds(subject.relationshipIds ?? [])
      const entityIds = rowIds(subject.entityIds ?? [])
      const rows: EvidenceRow[] = []
      for (const part of chunks(relationshipIds))
        rows.push(
          ...(await db.graphEvidence.findMany({
            where: { agentId, relationshipId: { in: part } },
            orderBy: { id: 'asc' },
          })),
        )
      for (const part of chunks(entityIds))
        rows.push(
          ...(await db.graphEvidence.findMany({
            where: { agentId, entityId: { in: part } },
            orderBy: { id: 'asc' },
          })),
        )
      return rows.map(toGraphEvidence)
    },
    forgetSources: async (agentId, sources): Promise<GraphForgetResult> => {
      const touched: EvidenceRow[] = []
      for (const part of chunks([...new Set(sources.memoryIds ?? [])]))
        touched.push(...(await db.graphEvidence.findMany({ where: { agentId, memoryId: { in: part } } })))
      for (const part of chunks([...new Set(sources.messageIds ?? [])]))
        touched.push(...(await db.graphEvidence.findMany({ where: { agentId, messageId: { in: part } } })))
      if (touched.length === 0) return { relationships: 0, entities: 0 }
      for (const part of chunks([...new Set(touched.map((ev) => ev.id))]))
        await db.graphEvidence.deleteMany({ where: { id: { in: part } } })
      // Formed edges left without a source go; their ends may have lost their last use with them.
      const touchedEdges = [
        ...new Set(touched.flatMap((ev) => (ev.relationshipId == null ? [] : [ev.relationshipId]))),
      ]
      const bareEdges: number[] = []
      for (const id of await unsupported('relationshipId', touchedEdges)) bareEdges.push(id)
      const candidates = new Set(touched.flatMap((ev) => (ev.entityId == null ? [] : [ev.entityId])))
      let relationships = 0
      for (const part of chunks(bareEdges)) {
        const formed = await db.graphRelationship.findMany({
          where: { agentId, id: { in: part }, origin: 'FORMED' },
          select: { id: true, sourceId: true, targetId: true },
        })
        for (const edge of formed) {
          candidates.add(edge.sourceId)
          candidates.add(edge.targetId)
        }
        relationships += (
          await db.graphRelationship.deleteMany({ where: { id: { in: formed.map((e) => e.id) } } })
        ).count
      }
      let entities = 0
      for (const part of chunks(await unsupported('entityId', [...candidates]))) {
        const { count } = await db.graphEntity.deleteMany({
          where: {
            agentId,
            id: { in: part },
            origin: 'FORMED',
            outgoing: { none: {} },
            incoming: { none: {} },
          },
        })
        entities += count
      }
      return { relationships, entities }
    },
    clear: async (agentId) => {
      const relationships = (await db.graphRelationship.deleteMany({ where: { agentId } })).count
      // Terms and evidence go with their entities (cascade).
      const entities = (await db.graphEntity.deleteMany({ where: { agentId } })).count
      return { relationships, entities }
    },
  }
  if (!transaction) return repository
  // Outside a transaction, a write of several statements opens one and runs on its client.
  const atomic = <K extends (typeof SEVERAL_STATEMENTS)[number]>(name: K) =>
    ((...args: unknown[]) =>
      transaction((graph) =>
        (graph[name] as (...a: unknown[]) => Promise<unknown>)(...args),
      )) as GraphRepository[K]
  return {
    ...repository,
    ...(Object.fromEntries(SEVERAL_STATEMENTS.map((name) => [name, atomic(name)])) as Pick<
      GraphRepository,
      (typeof SEVERAL_STATEMENTS)[number]
    >),
  }
}

/** The writes of several statements: each runs in one transaction. */
const SEVERAL_STATEMENTS = [
  'createEntity',
  'updateEntity',
  'createRelationship',
  'updateRelationship',
  'reassignEntity',
  'addEvidence',
  'forgetSources',
  'clear',
] as const
