import {
  type Clock,
  DEFAULT_GRAPH_LIMITS,
  type EntityType,
  type GraphLimits,
  ValidationError,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { GraphEntityRecord, GraphRepository } from '../ports/graph.ts'
import { InMemoryGraph } from '../testing/in-memory-graph.ts'
import { InMemoryRecallSources } from '../testing/in-memory-recall-sources.ts'
import { entityMatchScore, spellingSimilarity } from './entity-match.ts'
import { GraphService, SOURCE_EXCERPT_CHARS } from './graph-service.ts'

const A = 'agent-a'
const B = 'agent-b'

/** A clock the test moves by hand. */
function handClock(start: string) {
  let now = new Date(start)
  const clock: Clock = { now: () => new Date(now) }
  return {
    clock,
    set: (at: string) => {
      now = new Date(at)
    },
  }
}

/** Counts what the walk reads, to show a dense hub cannot make it read without bound. */
function counting(repository: GraphRepository) {
  const reads = { relationshipRows: 0, relationshipCalls: 0, entityRows: 0 }
  const wrapped: GraphRepository = {
    ...repository,
    relationships: async (...args) => {
      const rows = await repository.relationships(...args)
      reads.relationshipCalls++
      reads.relationshipRows += rows.length
      return rows
    },
    entitiesByIds: async (...args) => {
      const rows = await repository.entitiesByIds(...args)
      reads.entityRows += rows.length
      return rows
    },
  }
  return { wrapped, reads }
}

function setup(limits: Partial<GraphLimits> = {}, start = '2026-03-01T12:00:00.000Z') {
  const time = handClock(start)
  const memory = new InMemoryGraph()
  const recall = new InMemoryRecallSources()
  const { wrapped, reads } = counting(memory.repository)
  const graph = new GraphService({
    repository: wrapped,
    clock: time.clock,
    recall,
    limits: { ...DEFAULT_GRAPH_LIMITS, ...limits },
  })
  const entity = (name: string, type: EntityType = 'PERSON', aliases: string[] = [], agentId = A) =>
    graph.createEntity(agentId, { type, name, aliases })
  const link = (source: GraphEntityRecord, relation: string, target: GraphEntityRecord, extra = {}) =>
    graph.createRelationship(source.agentId, { sourceId: source.id, relation, targetId: target.id, ...extra })
  return { graph, repository: memory.repository, recall, reads, time, entity, link }
}

async function issuesOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ValidationError)
  return (error as ValidationError).issues
}

describe('fuzzy entity search', () => {
  it('ranks exact names and aliases (1), then shared words, then close spellings', async () => {
    const { graph, entity } = setup()
    const dana = await entity('Dana Kim', 'PERSON', ['DK'])
    const danaLee = await entity('Dana Lee')
    await entity('Acme Corp', 'COMPANY')
    const exact = await graph.searchEntities(A, { name: 'dana KIM' })
    expect(exact.matches[0]).toEqual({ entity: expect.objectContaining({ id: dana.id }), score: 1 })
    expect((await graph.searchEntities(A, { name: 'dk' })).matches[0]?.entity.id).toBe(dana.id)
    // One shared word of two: 0.5 + 0.45 × 1/2 for both Danas, Acme not at all.
    const word = await graph.searchEntities(A, { name: 'Dana' })
    expect(word.matches.map((m) => [m.entity.name, m.score])).toEqual([
      ['Dana Kim', 0.725],
      ['Dana Lee', 0.725],
    ])
    expect(word.totalCount).toBe(2)
    // A swap of two letters: a close spelling, below every shared-word match.
    const typo = await graph.searchEntities(A, { name: 'Dnaa' })
    expect(typo.matches.map((m) => m.entity.id).sort()).toEqual([dana.id, danaLee.id].sort())
    expect(typo.matches[0]?.score).toBeCloseTo(0.45 * 0.93)
    expect((await graph.searchEntities(A, { name: 'Zebra' })).matches).toEqual([])
  })

  it('filters by type and pages, and lists by mentions without a name', async () => {
    const { graph, entity } = setup()
    await entity('Berlin', 'PLACE')
    await entity('Berlin Partners', 'COMPANY')
    const places = await graph.searchEntities(A, { name: 'berlin', type: 'PLACE' })
    expect(places.matches.map((m) => m.entity.name)).toEqual(['Berlin'])
    const page = await graph.searchEntities(A, { offset: 1, limit: 1 })
    expect(page.totalCount).toBe(2)
    expect(page.matches).toHaveLength(1)
    expect(await issuesOf(graph.searchEntities(A, { limit: 501 }))).toEqual([
      expect.objectContaining({ field: 'limit', limit: 500 }),
    ])
  })

  it('reads entities as Engram knew them at knownAt: one learnt later is not answered', async () => {
    const { graph, entity, time } = setup()
    const dana = await entity('Dana Kim')
    time.set('2026-03-05T12:00:00.000Z')
    const later = await entity('Dana Lee')
    const before = new Date('2026-03-03T00:00:00.000Z')
    // Every path of the search: the list, an exact name, shared words, a close spelling.
    const listed = await graph.searchEntities(A, { knownAt: before })
    expect(listed.matches.map((m) => m.entity.id)).toEqual([dana.id])
    expect(listed.totalCount).toBe(1)
    expect((await graph.searchEntities(A, { name: 'Dana Lee', knownAt: before })).matches).toEqual([
      expect.objectContaining({ entity: expect.objectContaining({ id: dana.id }) }),
    ])
    expect(
      (await graph.searchEntities(A, { name: 'Dnaa', knownAt: before })).matches.map((m) => m.entity.id),
    ).toEqual([dana.id])
    // Learnt exactly at knownAt counts as known; now (the default) knows both.
    expect((await graph.searchEntities(A, { knownAt: later.createdAt })).totalCount).toBe(2)
    expect((await graph.searchEntities(A, {})).totalCount).toBe(2)
    expect((await graph.entity(A, dana.id, { knownAt: before })).id).toBe(dana.id)
    await expect(graph.entity(A, later.id, { knownAt: before })).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect((await graph.entity(A, later.id)).id).toBe(later.id)
  })

  it('scores as documented', () => {
    const e = {
      normalizedName: 'dana kim',
      aliases: ['Kim, Dana'],
    } as GraphEntityRecord
    expect(entityMatchScore('Dana Kim', e)).toBe(1)
    expect(entityMatchScore('Dana', e)).toBe(0.725)
    expect(entityMatchScore('Dana Kimm', e)).toBeCloseTo(0.5 + 0.45 * 0.5)
    // Close spellings: core's signals (a slip, a nickname prefix), never a different short name.
    expect(entityMatchScore('Dnaa', e)).toBeCloseTo(0.45 * 0.93)
    expect(spellingSimilarity('mel', 'melanie')).toBe(0.9)
    expect(spellingSimilarity('paul', 'paula')).toBe(0)
    expect(entityMatchScore('Xyz', e)).toBe(0)
  })

  it('finds the entities a question names, by whole name or alias', async () => {
    const { graph, entity } = setup()
    const dana = await entity('Dana Kim', 'PERSON', ['Dana'])
    const acme = await entity('Acme Corp', 'COMPANY')
    await entity('Kimberly', 'PERSON')
    const named = await graph.entitiesNamedIn(A, 'Where does Dana work now — still at Acme Corp?')
    expect(named.map((e) => e.id).sort()).toEqual([dana.id, acme.id].sort())
    expect(await graph.entitiesNamedIn(B, 'Where does Dana work?')).toEqual([])
  })
})

describe('relationships as of a time (bi-temporal)', () => {
  it('ends the contradicted edge instead of overwriting it, so "as of" still answers', async () => {
    const { graph, entity, link, time } = setup()
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    const globex = await entity('Globex', 'COMPANY')
    const first = await link(dana, 'Works At', acme, { validFrom: new Date('2024-01-01T00:00:00Z') })
    expect(first.relationship.relation).toBe('works at')
    time.set('2026-03-02T12:00:00.000Z')
    const second = await link(dana, 'works at', globex, { validFrom: new Date('2025-06-01T00:00:00Z') })
    const old = await graph.relationship(A, first.relationship.id)
    expect(old.relationship).toMatchObject({
      validUntil: new Date('2025-06-01T00:00:00Z'),
      supersededById: second.relationship.id,
      retiredAt: null,
    })
    const employer = async (asOf?: string) =>
      (
        await graph.relationships(A, {
          entityId: dana.id,
          relation: 'works at',
          ...(asOf ? { asOf: new Date(asOf) } : {}),
        })
      ).relationships.map((r) => r.target.name)
    expect(await employer()).toEqual(['Globex'])
    expect(await employer('2025-01-01T00:00:00Z')).toEqual(['Acme'])
    expect(await employer('2023-01-01T00:00:00Z')).toEqual([])
    const history = await graph.relationships(A, { entityId: dana.id, includeHistory: true })
    expect(history.relationships.map((r) => r.target.name).sort()).toEqual(['Acme', 'Globex'])
  })

  it('a repeated edge is a confirmation: confidence reinforced, no new edge', async () => {
    const { graph, entity, link } = setup()
    const dana = await entity('Dana')
    const berlin = await entity('Berlin', 'PLACE')
    const first = await link(dana, 'lives in', berlin, { confidence: 0.5 })
    const again = await link(dana, 'lives in', berlin)
    expect(again.relationship.id).toBe(first.relationship.id)
    expect(again.relationship.confidence).toBeCloseTo(0.6)
    expect((await graph.relationships(A, {})).totalCount).toBe(1)
  })

  it('a historical edge (already ended) or an older fact ends nothing current', async () => {
    const { graph, entity, link } = setup()
    const dana = await entity('Dana')
    const paris = await entity('Paris', 'PLACE')
    const rome = await entity('Rome', 'PLACE')
    const now = await link(dana, 'lives in', paris, { validFrom: new Date('2025-01-01T00:00:00Z') })
    await link(dana, 'lives in', rome, {
      validFrom: new Date('2020-01-01T00:00:00Z'),
      validUntil: new Date('2022-01-01T00:00:00Z'),
    })
    expect((await graph.relationship(A, now.relationship.id)).relationship.validUntil).toBeNull()
    const asOf2021 = await graph.relationships(A, {
      relation: 'lives in',
      asOf: new Date('2021-01-01T00:00:00Z'),
    })
    expect(asOf2021.relationships.map((r) => r.target.name)).toEqual(['Rome'])
  })

  it('a retired edge answers no read made after it, and every read known before', async () => {
    const { graph, entity, link, time } = setup()
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    const edge = await link(dana, 'works at', acme)
    time.set('2026-03-05T00:00:00.000Z')
    const retired = await graph.retireRelationship(A, edge.relationship.id, 'she never worked there')
    expect(retired.relationship).toMatchObject({ retiredReason: 'she never worked there' })
    expect((await graph.relationships(A, { relation: 'works at' })).relationships).toEqual([])
    const before = await graph.relationships(A, {
      relation: 'works at',
      knownAt: new Date('2026-03-03T00:00:00.000Z'),
    })
    expect(before.relationships.map((r) => r.relationship.id)).toEqual([edge.relationship.id])
    // Retiring twice keeps the first retirement.
    time.set('2026-03-09T00:00:00.000Z')
    const twice = await graph.retireRelationship(A, edge.relationship.id, 'again')
    expect(twice.relationship.retiredAt).toEqual(new Date('2026-03-05T00:00:00.000Z'))
  })

  it('answers each edge with its ends and the memories and messages it came from', async () => {
    const { graph, entity, link, repository } = setup()
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    const edge = await link(dana, 'works at', acme)
    await repository.addEvidence(
      A,
      [{ entityId: null, relationshipId: edge.relationship.id, memoryId: 'm1', messageId: '42' }],
      new Date(),
    )
    const view = await graph.relationship(A, edge.relationship.id)
    expect(view.source.name).toBe('Dana')
    expect(view.target.name).toBe('Acme')
    // Neither row exists (deleted meanwhile): the ids alone.
    expect(view.sources).toEqual([
      { memoryId: 'm1', messageId: '42', conversationId: null, excerpt: null, at: null },
    ])
  })

  it("reads each source's excerpt, date and conversation, and never another agent's row", async () => {
    const { graph, entity, link, repository, recall } = setup()
    const said = new Date('2026-02-27T09:30:00.000Z')
    const formed = new Date('2026-02-27T09:31:00.000Z')
    const long = `Dana Kim works at Acme. ${'She leads the payments team there. '.repeat(10)}`
    recall.addTurn(A, 'conv-7', {
      id: '42',
      sessionId: 's7',
      role: 'user',
      speaker: 'Dana',
      content: 'I started at Acme last week, [REDACTED:email] is my new address',
      tokenCount: 12,
      isCompressed: false,
      timestamp: said,
      metadata: {},
    })
    recall.addTurn(B, 'conv-b', {
      id: '43',
      sessionId: 'sb',
      role: 'user',
      speaker: null,
      content: "agent B's secret turn",
      tokenCount: 4,
      isCompressed: false,
      timestamp: said,
      metadata: {},
    })
    const memory = (id: string, agentId: string, content: string, extra = {}) =>
      recall.addMemoryItem({
        id,
        agentId,
        userId: null,
        content,
        category: 'fact',
        tags: [],
        importance: 0.5,
        confidence: 1,
        pinned: false,
        sourceConversationId: null,
        sourceMessageId: null,
        accessCount: 0,
        lastAccessedAt: null,
        validFrom: formed,
        validUntil: null,
        supersededById: null,
        metadata: {},
        tokenCount: 10,
        createdAt: formed,
        updatedAt: formed,
        ...extra,
      })
    memory('7', A, long)
    // Superseded since: the edge still came from it, so it still reads.
    memory('8', A, 'Dana moved to Lisbon', { validUntil: said, supersededById: '7' })
    memory('9', B, "agent B's secret memory")
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    const edge = await link(dana, 'works at', acme)
    const source = (memoryId: string | null, messageId: string | null) => ({
      entityId: null,
      relationshipId: edge.relationship.id,
      memoryId,
      messageId,
    })
    await repository.addEvidence(
      A,
      [source('7', '42'), source(null, '42'), source('8', null), source('9', '43')],
      new Date(),
    )
    const { sources } = await graph.relationship(A, edge.relationship.id)
    const byKey = new Map(sources.map((s) => [`${s.memoryId}/${s.messageId}`, s]))
    // A memory formed from a turn: the memory's words and date, the turn's conversation.
    expect(byKey.get('7/42')).toEqual({
      memoryId: '7',
      messageId: '42',
      conversationId: 'conv-7',
      excerpt: [...long].slice(0, SOURCE_EXCERPT_CHARS).join(''),
      at: formed,
    })
    expect(byKey.get('7/42')?.excerpt).toHaveLength(SOURCE_EXCERPT_CHARS)
    // A turn alone: its text as stored (already redacted by the privacy guard).
    expect(byKey.get('null/42')).toEqual({
      memoryId: null,
      messageId: '42',
      conversationId: 'conv-7',
      excerpt: 'I started at Acme last week, [REDACTED:email] is my new address',
      at: said,
    })
    expect(byKey.get('8/null')?.excerpt).toBe('Dana moved to Lisbon')
    // Ids of agent B's rows in agent A's evidence resolve to nothing.
    expect(byKey.get('9/43')).toEqual({
      memoryId: '9',
      messageId: '43',
      conversationId: null,
      excerpt: null,
      at: null,
    })
  })

  it("never reads or changes another agent's graph", async () => {
    const { graph, entity, link } = setup()
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    const edge = await link(dana, 'works at', acme)
    await expect(graph.entity(B, dana.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(graph.relationship(B, edge.relationship.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    await expect(graph.retireRelationship(B, edge.relationship.id, null)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
    await expect(graph.neighbourhood(B, { entityId: dana.id })).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect((await graph.searchEntities(B, { name: 'Dana' })).matches).toEqual([])
    expect((await graph.relationships(B, {})).totalCount).toBe(0)
    await expect(
      graph.createRelationship(B, { sourceId: dana.id, relation: 'knows', targetId: acme.id }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' })
    expect((await graph.relationship(A, edge.relationship.id)).relationship.retiredAt).toBeNull()
  })
})

describe('neighbourhood (iterative breadth-first walk)', () => {
  async function chain() {
    const s = setup()
    const [a, b, c, d] = await Promise.all(['Ann', 'Ben', 'Cleo', 'Dev'].map((n) => s.entity(n)))
    const acme = await s.entity('Acme', 'COMPANY')
    await s.link(a as GraphEntityRecord, 'knows', b as GraphEntityRecord)
    await s.link(b as GraphEntityRecord, 'knows', c as GraphEntityRecord)
    await s.link(c as GraphEntityRecord, 'knows', d as GraphEntityRecord)
    await s.link(a as GraphEntityRecord, 'works at', acme)
    return { ...s, a: a as GraphEntityRecord, d: d as GraphEntityRecord, acme }
  }

  it('walks to the depth asked (default 2), answering each node with its depth', async () => {
    const { graph, a } = await chain()
    const two = await graph.neighbourhood(A, { entityId: a.id })
    expect(two.nodes.map((n) => [n.entity.name, n.depth])).toEqual([
      ['Ann', 0],
      ['Ben', 1],
      ['Acme', 1],
      ['Cleo', 2],
    ])
    expect(two.relationships).toHaveLength(3)
    expect(two).toMatchObject({ truncated: false, truncation: null })
    const four = await graph.neighbourhood(A, { name: 'ann', depth: 4 })
    expect(four.nodes.map((n) => n.entity.name)).toContain('Dev')
    expect(await issuesOf(graph.neighbourhood(A, { entityId: a.id, depth: 5 }))).toEqual([
      expect.objectContaining({ field: 'depth', limit: 4 }),
    ])
  })

  it('keeps only the types and relations asked, and answers null for a name nothing matches', async () => {
    const { graph, a } = await chain()
    const people = await graph.neighbourhood(A, { entityId: a.id, types: ['PERSON'] })
    expect(people.nodes.map((n) => n.entity.name)).toEqual(['Ann', 'Ben', 'Cleo'])
    const work = await graph.neighbourhood(A, { entityId: a.id, relations: ['Works At'] })
    expect(work.nodes.map((n) => n.entity.name)).toEqual(['Ann', 'Acme'])
    const none = await graph.neighbourhood(A, { name: 'Nobody Here' })
    expect(none).toMatchObject({ center: null, nodes: [], relationships: [] })
  })

  it('a dense hub of 5,000 edges answers at once with a truncation message, reading a bounded amount', async () => {
    const { graph, repository, reads, entity } = setup()
    const hub = await entity('Hub Corp', 'COMPANY')
    const at = new Date('2026-03-01T00:00:00.000Z')
    // Written through the repository: the service would stop at maxEdgesPerEntity (1,000).
    for (let i = 0; i < 5_000; i++) {
      const person = await repository.createEntity(A, {
        userId: null,
        type: 'PERSON',
        name: `Worker ${i}`,
        aliases: [],
        summary: null,
        embedding: null,
        mentionCount: i % 7,
        origin: 'FORMED',
        firstSeenAt: at,
        lastSeenAt: at,
        createdAt: at,
      })
      await repository.createRelationship(A, {
        userId: null,
        sourceId: person.id,
        relation: 'works at',
        targetId: hub.id,
        confidence: 0.5,
        validFrom: null,
        validUntil: null,
        learntAt: at,
        origin: 'FORMED',
        createdAt: at,
      })
    }
    reads.relationshipRows = 0
    reads.entityRows = 0
    const around = await graph.neighbourhood(A, { entityId: hub.id, depth: 4 })
    expect(around.nodes).toHaveLength(50)
    expect(around.relationships).toHaveLength(49)
    expect(around.truncated).toBe(true)
    expect(around.truncation).toMatch(/limit of 50 entities: up to \d+ more at depth 1 were left out/)
    // One level of edges (the cap allows 5,000 + 1 to see the cut), a level past the full answer,
    // and the entities of one fetch chunk: nowhere near the hub's whole neighbourhood twice over.
    expect(reads.relationshipRows).toBeLessThanOrEqual(2 * (DEFAULT_GRAPH_LIMITS.maxEdgesPerLevel + 1))
    expect(reads.entityRows).toBeLessThanOrEqual(256 + 50)

    // With a small edge cap, the cut is said as the edge cap's.
    const capped = new GraphService({
      repository,
      clock: { now: () => new Date('2026-03-01T12:00:00.000Z') },
      recall: new InMemoryRecallSources(),
      limits: { ...DEFAULT_GRAPH_LIMITS, maxEdgesPerLevel: 100, maxFrontier: 10 },
    })
    const cut = await capped.neighbourhood(A, { entityId: hub.id, limit: 500 })
    expect(cut.nodes).toHaveLength(101)
    expect(cut.truncation).toContain(
      'read the 100 most confident relationships and left the rest out (maxEdgesPerLevel 100)',
    )
    expect(cut.truncation).toContain('expanded the 10 most mentioned of 100 entities (maxFrontier 10)')
  })
})

describe('paths (bidirectional breadth-first search)', () => {
  it('answers every shortest chain, shortest only, in either edge direction', async () => {
    const { graph, entity, link } = setup()
    const [ann, ben, cleo, dev, eve] = await Promise.all(
      ['Ann', 'Ben', 'Cleo', 'Dev', 'Eve'].map((n) => entity(n)),
    )
    const [a, b, c, d, e] = [ann, ben, cleo, dev, eve] as [
      GraphEntityRecord,
      GraphEntityRecord,
      GraphEntityRecord,
      GraphEntityRecord,
      GraphEntityRecord,
    ]
    await link(a, 'knows', b)
    await link(b, 'knows', c)
    await link(c, 'knows', d)
    // Two chains of two hops besides the three-hop A-B-C-D: A-E-D, and A-B-D through "Dev mentors Ben" walked backwards.
    await link(a, 'knows', e)
    await link(d, 'mentors', e)
    await link(d, 'mentors', b)
    const found = await graph.paths(A, { from: { entityId: a.id }, to: { name: 'dev' } })
    expect(found.paths.map((p) => p.entities.map((x) => x.name))).toEqual(
      expect.arrayContaining([
        ['Ann', 'Eve', 'Dev'],
        ['Ann', 'Ben', 'Dev'],
      ]),
    )
    expect(found.paths).toHaveLength(2)
    for (const p of found.paths) expect(p.relationships).toHaveLength(2)
    const one = await graph.paths(A, { from: { entityId: a.id }, to: { entityId: d.id }, limit: 1 })
    expect(one.paths).toHaveLength(1)
  })

  it('stops at maxDepth, answers nothing for unlinked or unknown ends, and zero hops to itself', async () => {
    const { graph, entity, link } = setup()
    const names = ['P0', 'P1', 'P2', 'P3', 'P4', 'P5']
    const people: GraphEntityRecord[] = []
    for (const n of names) people.push(await entity(n))
    for (let i = 0; i < 5; i++)
      await link(people[i] as GraphEntityRecord, 'knows', people[i + 1] as GraphEntityRecord)
    const [first, , , , fourth, last] = people as [GraphEntityRecord, ...GraphEntityRecord[]]
    const within = await graph.paths(A, {
      from: { entityId: first.id },
      to: { entityId: (fourth as GraphEntityRecord).id },
    })
    expect(within.paths[0]?.entities.map((x) => x.name)).toEqual(['P0', 'P1', 'P2', 'P3', 'P4'])
    const tooFar = await graph.paths(A, {
      from: { entityId: first.id },
      to: { entityId: (last as GraphEntityRecord).id },
    })
    expect(tooFar.paths).toEqual([])
    const short = await graph.paths(A, {
      from: { entityId: first.id },
      to: { entityId: (fourth as GraphEntityRecord).id },
      maxDepth: 3,
    })
    expect(short.paths).toEqual([])
    const unknown = await graph.paths(A, { from: { entityId: first.id }, to: { name: 'Nobody Whatsoever' } })
    expect(unknown).toMatchObject({ to: null, paths: [] })
    const self = await graph.paths(A, { from: { entityId: first.id }, to: { name: 'P0' } })
    expect(self.paths).toEqual([{ entities: [expect.objectContaining({ id: first.id })], relationships: [] }])
    expect(
      await issuesOf(graph.paths(A, { from: { entityId: first.id }, to: { name: 'P1' }, limit: 21 })),
    ).toEqual([expect.objectContaining({ field: 'limit', limit: 20 })])
  })

  it('walks only edges holding at the read time', async () => {
    const { graph, entity, link, time } = setup()
    const a = await entity('Ann')
    const b = await entity('Ben')
    const edge = await link(a, 'knows', b)
    time.set('2026-04-01T00:00:00.000Z')
    await graph.retireRelationship(A, edge.relationship.id, 'wrong')
    expect((await graph.paths(A, { from: { entityId: a.id }, to: { entityId: b.id } })).paths).toEqual([])
    const before = await graph.paths(A, {
      from: { entityId: a.id },
      to: { entityId: b.id },
      knownAt: new Date('2026-03-15T00:00:00.000Z'),
    })
    expect(before.paths).toHaveLength(1)
  })
})

describe("an operator's corrections", () => {
  it('bounds names, aliases, summaries and relations with typed errors naming field and limit', async () => {
    const { graph, entity, link } = setup()
    expect(await issuesOf(entity('x'.repeat(201)))).toEqual([
      expect.objectContaining({ field: 'name', limit: 200 }),
    ])
    expect(await issuesOf(entity('!!!'))).toEqual([expect.objectContaining({ field: 'name', limit: 1 })])
    const aliases = Array.from({ length: 51 }, (_, i) => `alias ${i}`)
    expect(await issuesOf(entity('Dana', 'PERSON', aliases))).toEqual([
      expect.objectContaining({ field: 'aliases', limit: 50 }),
    ])
    expect(await issuesOf(entity('Dana', 'PERSON', ['ok', 'y'.repeat(201)]))).toEqual([
      expect.objectContaining({ field: 'aliases.1', limit: 200 }),
    ])
    expect(
      await issuesOf(graph.createEntity(A, { type: 'PERSON', name: 'Dana', summary: 's'.repeat(2_001) })),
    ).toEqual([expect.objectContaining({ field: 'summary', limit: 2_000 })])
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    expect(await issuesOf(link(dana, 'r'.repeat(101), acme))).toEqual([
      expect.objectContaining({ field: 'relation', limit: 100 }),
    ])
    expect(await issuesOf(link(dana, 'knows', dana))).toEqual([
      expect.objectContaining({ field: 'targetId' }),
    ])
    expect(
      await issuesOf(
        link(dana, 'works at', acme, {
          validFrom: new Date('2025-01-01T00:00:00Z'),
          validUntil: new Date('2024-01-01T00:00:00Z'),
        }),
      ),
    ).toEqual([expect.objectContaining({ field: 'validUntil' })])
    // The same name and type twice would split one entity in two.
    expect(await issuesOf(entity('dana'))).toEqual([expect.objectContaining({ field: 'name' })])
  })

  it('bounds edges per entity and entities per agent', async () => {
    const { entity, link } = setup({ maxEdgesPerEntity: 2, maxEntitiesPerAgent: 4 })
    const hub = await entity('Hub', 'COMPANY')
    const [x, y, z] = [await entity('X'), await entity('Y'), await entity('Z')]
    await link(x, 'works at', hub)
    await link(y, 'works at', hub)
    expect(await issuesOf(link(z, 'works at', hub))).toEqual([
      expect.objectContaining({ field: 'targetId', limit: 2 }),
    ])
    expect(await issuesOf(entity('W'))).toEqual([expect.objectContaining({ field: 'agentId', limit: 4 })])
    // Another agent has its own allowance.
    await expect(entity('W', 'PERSON', [], B)).resolves.toMatchObject({ agentId: B })
  })

  it('updates an entity and an edge (ends, relation, validity) within the rules', async () => {
    const { graph, entity, link } = setup()
    const dana = await entity('Dana Kimm', 'PERSON', ['D.'])
    const updated = await graph.updateEntity(A, dana.id, { name: 'Dana Kim', summary: 'An engineer.' })
    expect(updated).toMatchObject({
      name: 'Dana Kim',
      normalizedName: 'dana kim',
      summary: 'An engineer.',
      aliases: ['D.'],
    })
    const cleared = await graph.updateEntity(A, dana.id, { summary: null, type: 'PERSON' })
    expect(cleared.summary).toBeNull()
    const acme = await entity('Acme', 'COMPANY')
    const globex = await entity('Globex', 'COMPANY')
    const edge = await link(updated, 'works at', acme, { validFrom: new Date('2024-01-01T00:00:00Z') })
    const moved = await graph.updateRelationship(A, edge.relationship.id, {
      targetId: globex.id,
      relation: 'Consults For',
      validFrom: null,
      confidence: 0.4,
    })
    expect(moved.target.name).toBe('Globex')
    expect(moved.relationship).toMatchObject({ relation: 'consults for', validFrom: null, confidence: 0.4 })
    expect(
      await issuesOf(
        graph.updateRelationship(A, edge.relationship.id, {
          validFrom: new Date('2025-01-01T00:00:00Z'),
          validUntil: new Date('2025-01-01T00:00:00Z'),
        }),
      ),
    ).toEqual([expect.objectContaining({ field: 'validUntil' })])
    await expect(
      graph.updateRelationship(A, edge.relationship.id, { sourceId: 'ent-nope' }),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
  })

  it('merges two nodes into one: names, edges and sources move, loops and repeats fold', async () => {
    const { graph, entity, link, repository } = setup()
    const dana = await entity('Dana Kim', 'PERSON', ['DK'])
    const dup = await entity('Dana', 'PERSON', ['Danny'])
    const acme = await entity('Acme', 'COMPANY')
    const berlin = await entity('Berlin', 'PLACE')
    const kept = await link(dana, 'works at', acme, { confidence: 0.5 })
    const repeat = await link(dup, 'works at', acme, { confidence: 0.9 })
    await repository.addEvidence(
      A,
      [{ entityId: null, relationshipId: repeat.relationship.id, memoryId: 'm7', messageId: null }],
      new Date(),
    )
    await link(dup, 'lives in', berlin)
    await link(dup, 'same as', dana)
    const merged = await graph.mergeEntities(A, dup.id, dana.id)
    expect(merged.aliases).toEqual(['DK', 'Dana', 'Danny'])
    await expect(graph.entity(A, dup.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
    const edges = await graph.relationships(A, { entityId: dana.id })
    expect(
      edges.relationships.map((r) => [r.source.name, r.relationship.relation, r.target.name]).sort(),
    ).toEqual([
      ['Dana Kim', 'lives in', 'Berlin'],
      ['Dana Kim', 'works at', 'Acme'],
    ])
    const work = edges.relationships.find((r) => r.relationship.relation === 'works at')
    expect(work?.relationship).toMatchObject({ id: kept.relationship.id, confidence: 0.9 })
    expect(work?.sources).toEqual([
      { memoryId: 'm7', messageId: null, conversationId: null, excerpt: null, at: null },
    ])
    expect((await graph.searchEntities(A, { name: 'danny' })).matches[0]?.entity.id).toBe(dana.id)
    expect(await issuesOf(graph.mergeEntities(A, dana.id, dana.id))).toEqual([
      expect.objectContaining({ field: 'fromId' }),
    ])
  })

  it('deletes an entity with its edges, and an edge alone', async () => {
    const { graph, entity, link } = setup()
    const dana = await entity('Dana')
    const acme = await entity('Acme', 'COMPANY')
    const berlin = await entity('Berlin', 'PLACE')
    const work = await link(dana, 'works at', acme)
    await link(dana, 'lives in', berlin)
    await graph.deleteRelationship(A, work.relationship.id)
    expect((await graph.relationships(A, {})).totalCount).toBe(1)
    await graph.deleteEntity(A, dana.id)
    expect((await graph.relationships(A, { includeHistory: true })).totalCount).toBe(0)
    expect((await graph.searchEntities(A, {})).totalCount).toBe(2)
    await expect(graph.deleteEntity(A, dana.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  })
})
