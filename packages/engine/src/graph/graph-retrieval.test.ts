import {
  type Clock,
  createTokenCounter,
  DEFAULT_LIMITS,
  type EntityType,
  parseMemorySettings,
  type StoredMessage,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import { createEngine } from '../engine.ts'
import { createOperations } from '../operations/operations.ts'
import type { Principal } from '../operations/principal.ts'
import { SearchService } from '../search/search-service.ts'
import { createInMemoryStorage } from '../testing/index.ts'

// The knowledge graph in retrieval (issue 15), on the in-memory storage: the Key relationships
// section, the GRAPH search scope and graph expansion of search.

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const operator: Principal = { kind: 'operator' }
const agentA = { kind: 'agent', agentId: 'agent-a' } as const satisfies Principal
const quiet = { info() {}, warn() {}, error() {} }

async function setUp() {
  const engine = createEngine({
    storage: createInMemoryStorage(clock),
    clock,
    tokenCounter: createTokenCounter(),
    log: quiet,
    optimizer: { intervalMs: 0 },
  })
  const ops = createOperations(engine)
  await ops.createAgent(operator, { id: 'agent-a' })
  await ops.createAgent(operator, { id: 'agent-b' })
  const graph = engine.storage.graph
  const entity = (agentId: string, type: EntityType, name: string, aliases: string[] = []) =>
    graph.createEntity(agentId, {
      userId: null,
      type,
      name,
      aliases,
      summary: null,
      embedding: null,
      mentionCount: 1,
      origin: 'FORMED',
      firstSeenAt: clock.now(),
      lastSeenAt: clock.now(),
      createdAt: clock.now(),
    })
  const edge = async (
    agentId: string,
    sourceId: string,
    relation: string,
    targetId: string,
    more: {
      confidence?: number
      validFrom?: Date
      validUntil?: Date
      messageId?: string
      memoryId?: string
    } = {},
  ) => {
    const r = await graph.createRelationship(agentId, {
      userId: null,
      sourceId,
      relation,
      targetId,
      confidence: more.confidence ?? 0.8,
      validFrom: more.validFrom ?? null,
      validUntil: more.validUntil ?? null,
      learntAt: clock.now(),
      origin: 'FORMED',
      createdAt: clock.now(),
    })
    if (more.messageId || more.memoryId)
      await graph.addEvidence(
        agentId,
        [
          {
            entityId: null,
            relationshipId: r.id,
            memoryId: more.memoryId ?? null,
            messageId: more.messageId ?? null,
          },
        ],
        clock.now(),
      )
    return r
  }
  return { engine, ops, graph, entity, edge }
}

const section = (built: {
  sections: {
    name: string
    included: string[]
    usedTokens: number
    budgetTokens: number | null
    omitted: string[]
  }[]
}) => built.sections.find((s) => s.name === 'relationships')

describe('Key relationships from the knowledge graph', () => {
  it('fills the section with one line per current edge, those around the entities the query names first', async () => {
    const { engine, entity, edge } = await setUp()
    const dana = await entity('agent-a', 'PERSON', 'Dana Kim', ['Dana'])
    const acme = await entity('agent-a', 'COMPANY', 'Acme')
    const lee = await entity('agent-a', 'PERSON', 'Lee Park')
    const berlin = await entity('agent-a', 'PLACE', 'Berlin')
    const globex = await entity('agent-a', 'COMPANY', 'Globex')
    const works = await edge('agent-a', dana.id, 'works at', acme.id, { validFrom: new Date('2024-03-10') })
    // More confident, so first without a query: the query, not the confidence, puts Dana's first.
    const lives = await edge('agent-a', lee.id, 'lives in', berlin.id, { confidence: 0.99 })
    // An ended edge does not hold now: not shown.
    const ended = await edge('agent-a', dana.id, 'works at', globex.id, {
      validFrom: new Date('2020-01-01'),
      validUntil: new Date('2024-03-10'),
    })
    // Another agent's graph never shows.
    const theirs = await entity('agent-b', 'PERSON', 'Dana Kim')
    const theirPlace = await entity('agent-b', 'PLACE', 'Oslo')
    await edge('agent-b', theirs.id, 'lives in', theirPlace.id, { confidence: 1 })

    const plain = await engine.context.build('agent-a', { sections: ['relationships'] })
    expect(section(plain)?.included).toEqual([`relationship:${lives.id}`, `relationship:${works.id}`])
    expect(plain.text).toContain('- Lee Park lives in Berlin\n')
    expect(plain.text).toContain('- Dana Kim works at Acme (since 2024-03)\n')
    expect(plain.text).not.toContain('Globex')
    expect(plain.text).not.toContain('Oslo')

    const asked = await engine.context.build('agent-a', {
      query: 'Where does Dana work?',
      sections: ['relationships'],
    })
    expect(section(asked)?.included).toEqual([`relationship:${works.id}`, `relationship:${lives.id}`])
    expect(section(asked)?.included).not.toContain(`relationship:${ended.id}`)
  })

  it('stays within the section budget, counted with the configured tokenizer', async () => {
    const { engine, entity, edge } = await setUp()
    const hub = await entity('agent-a', 'PERSON', 'Dana Kim')
    for (let i = 0; i < 60; i++) {
      const friend = await entity('agent-a', 'PERSON', `Friend Number${i} Surname${i}`)
      await edge('agent-a', hub.id, 'is friends with', friend.id, { confidence: 0.5 + i / 200 })
    }
    await engine.memoryItems.updateSettings('agent-a', { contextBudgets: { relationships: 50 } })
    const built = await engine.context.build('agent-a', { sections: ['relationships'] })
    const report = section(built)
    expect(report?.budgetTokens).toBe(50)
    expect(report?.included.length).toBeGreaterThan(0)
    expect(report?.usedTokens).toBeLessThanOrEqual(50)
    expect(report?.omitted.length).toBeGreaterThan(0)
    // The surest edges are the ones kept.
    const counter = createTokenCounter()
    const body = built.text.slice(built.text.indexOf('## Key relationships'))
    expect(counter.count(body.slice(0, body.indexOf('</memory_context>')))).toBeLessThanOrEqual(50)
    expect(built.text).toContain('Friend Number59 Surname59')
  })

  it('falls back to the RELATIONSHIP memories while the graph has no current edge', async () => {
    // The in-memory adapter's context sources hold no memories: these answer the section's read
    // (the SQLite path is apps/api's memory-context test).
    const storage = createInMemoryStorage(clock)
    storage.contextSources = {
      memories: async (_agentId, query) =>
        query.categories?.includes('relationship')
          ? [{ id: '7', userId: null, content: 'Dana is Lee’s manager', category: 'relationship' }]
          : [],
      summaries: async () => [],
      recentTurns: async () => null,
    }
    const engine = createEngine({ storage, clock, tokenCounter: createTokenCounter(), log: quiet })
    const build = () =>
      engine.context.build('agent-a', { query: 'who manages Lee', sections: ['relationships'] })
    expect(section(await build())?.included).toEqual(['memory:7'])

    const entity = (name: string) =>
      storage.graph.createEntity('agent-a', {
        userId: null,
        type: 'PERSON',
        name,
        aliases: [],
        summary: null,
        embedding: null,
        mentionCount: 1,
        origin: 'FORMED',
        firstSeenAt: clock.now(),
        lastSeenAt: clock.now(),
        createdAt: clock.now(),
      })
    const dana = await entity('Dana')
    const lee = await entity('Lee')
    const edge = await storage.graph.createRelationship('agent-a', {
      userId: null,
      sourceId: dana.id,
      relation: 'manages',
      targetId: lee.id,
      confidence: 0.9,
      validFrom: null,
      validUntil: null,
      learntAt: clock.now(),
      origin: 'FORMED',
      createdAt: clock.now(),
    })
    engine.context.forget('agent-a')
    const built = await build()
    expect(section(built)?.included).toEqual([`relationship:${edge.id}`])
    expect(built.text).toContain('- Dana manages Lee\n')
  })
})

describe('search over the knowledge graph', () => {
  it('answers the GRAPH scope with entities and relationships, ended ones too, matched by names and relations', async () => {
    const { engine, entity, edge } = await setUp()
    const dana = await entity('agent-a', 'PERSON', 'Dana Kim', ['Dana'])
    const acme = await entity('agent-a', 'COMPANY', 'Acme Corp')
    const globex = await entity('agent-a', 'COMPANY', 'Globex')
    const now = await edge('agent-a', dana.id, 'works at', acme.id, { validFrom: new Date('2024-03-01') })
    const before = await edge('agent-a', dana.id, 'works at', globex.id, {
      validFrom: new Date('2020-01-01'),
      validUntil: new Date('2024-03-01'),
    })
    const theirs = await entity('agent-b', 'PERSON', 'Dana Kim')
    const hits = await engine.search.search('agent-a', 'Where did Dana work?', {
      scopes: ['GRAPH'],
      track: false,
    })
    const ids = hits.map((h) => h.id)
    expect(ids).toContain(`relationship:${now.id}`)
    expect(ids).toContain(`relationship:${before.id}`)
    expect(ids).toContain(`entity:${dana.id}`)
    expect(ids).not.toContain(`entity:${theirs.id}`)
    const edgeHit = hits.find((h) => h.id === `relationship:${now.id}`)
    expect(edgeHit).toMatchObject({ scope: 'GRAPH', text: 'Dana Kim works at Acme Corp (since 2024-03)' })
    expect(edgeHit?.relationship?.source.name).toBe('Dana Kim')
    expect(edgeHit?.relationship?.target.name).toBe('Acme Corp')
    expect(hits.find((h) => h.id === `entity:${dana.id}`)?.entity?.name).toBe('Dana Kim')
    // The relation word ranks an edge above the bare entity.
    expect(ids.indexOf(`relationship:${now.id}`)).toBeLessThan(ids.indexOf(`entity:${dana.id}`))

    const wire = await createOperations(engine).search(agentA, { query: 'Dana work', scopes: ['GRAPH'] })
    const shaped = wire.hits.find((h) => h.id === `relationship:${now.id}`)
    expect(shaped?.relationship).toMatchObject({
      relation: 'works at',
      current: true,
      source: { name: 'Dana Kim' },
    })
    expect(wire.hits.find((h) => h.id === `relationship:${before.id}`)?.relationship?.current).toBe(false)
    expect(await engine.search.search('agent-b', 'Acme', { scopes: ['GRAPH'], track: false })).toEqual([])
  })

  it('pulls in a turn plain search misses through the named entity’s relationships, and can be switched off', async () => {
    // Search straight on the ports: the in-memory history does not feed its full-text index.
    const storage = createInMemoryStorage(clock)
    const writes = new AgentWrites()
    const search = new SearchService({
      fullText: storage.fullText,
      recall: storage.recall,
      embeddings: {
        embedQuery: async () => null,
        index: async () => ({ dimensions: null, size: 0, search: () => [] }),
      },
      memories: {
        settings: async () => ({ settings: parseMemorySettings({}) }),
        recordAccess: async () => [],
      },
      limits: DEFAULT_LIMITS,
      clock,
      writes,
      graph: storage.graph,
    })
    let nextId = 1
    const say = (agentId: string, lines: string[]) =>
      lines.map((content, i) => {
        const id = String(nextId++)
        const message: StoredMessage = {
          id,
          sessionId: `${agentId}/c1`,
          role: 'user',
          speaker: null,
          content,
          tokenCount: content.split(' ').length,
          isCompressed: false,
          // A day apart: no dialogue context or episode between them.
          timestamp: new Date(Date.parse('2026-01-01T09:00:00Z') + i * 86_400_000),
          metadata: {},
        }
        storage.recall.addTurn(agentId, 'c1', message)
        storage.fullText.index('messages', [{ id, agentId, text: content, sessionId: message.sessionId }])
        writes.touch(agentId)
        return id
      })
    const entity = (agentId: string, type: EntityType, name: string) =>
      storage.graph.createEntity(agentId, {
        userId: null,
        type,
        name,
        aliases: [],
        summary: null,
        embedding: null,
        mentionCount: 1,
        origin: 'FORMED',
        firstSeenAt: clock.now(),
        lastSeenAt: clock.now(),
        createdAt: clock.now(),
      })
    const link = async (agentId: string, from: string, relation: string, to: string, messageId: string) => {
      const r = await storage.graph.createRelationship(agentId, {
        userId: null,
        sourceId: from,
        relation,
        targetId: to,
        confidence: 0.8,
        validFrom: null,
        validUntil: null,
        learntAt: clock.now(),
        origin: 'FORMED',
        createdAt: clock.now(),
      })
      await storage.graph.addEvidence(
        agentId,
        [{ entityId: null, relationshipId: r.id, memoryId: null, messageId }],
        clock.now(),
      )
    }
    const [, , moved] = say('agent-a', [
      'Caroline went hiking on Saturday.',
      'The weather was lovely all week.',
      'She finally packed up and headed to Sweden last spring.',
      'Melanie painted a sunset.',
    ])
    const caroline = await entity('agent-a', 'PERSON', 'Caroline')
    const sweden = await entity('agent-a', 'PLACE', 'Sweden')
    await link('agent-a', caroline.id, 'moved to', sweden.id, moved as string)
    // Agent B's graph cannot reach agent A's turns, nor A's graph B's.
    const [other] = say('agent-b', ['Caroline relocated to Norway.'])
    const theirs = await entity('agent-b', 'PERSON', 'Caroline')
    const norway = await entity('agent-b', 'PLACE', 'Norway')
    await link('agent-b', theirs.id, 'moved to', norway.id, other as string)

    const query = 'Where did Caroline move to?'
    const plain = await search.search('agent-a', query, { weights: { graph: 0 }, track: false })
    expect(plain.length).toBeGreaterThan(0)
    expect(plain.map((h) => h.id)).not.toContain(moved)
    const expanded = await search.search('agent-a', query, { weights: { graph: 1 }, track: false })
    const hit = expanded.find((h) => h.id === moved)
    expect(hit?.components).toMatchObject({ bm25: 0, vector: 0 })
    expect(hit?.components.graph).toBeGreaterThan(0)
    expect(expanded.map((h) => h.id)).not.toContain(other)
    // A mention counts too: the turn that names "Jon" is Jonathan Reyes's, whatever its words.
    const [jon] = say('agent-a', ['Jon fixed the old bike over the weekend.'])
    const jonathan = await storage.graph.createEntity('agent-a', {
      userId: null,
      type: 'PERSON',
      name: 'Jonathan Reyes',
      aliases: ['Jon'],
      summary: null,
      embedding: null,
      mentionCount: 1,
      origin: 'FORMED',
      firstSeenAt: clock.now(),
      lastSeenAt: clock.now(),
      createdAt: clock.now(),
    })
    await storage.graph.addEvidence(
      'agent-a',
      [{ entityId: jonathan.id, relationshipId: null, memoryId: null, messageId: jon as string }],
      clock.now(),
    )
    const mentionQuery = 'What did Jonathan Reyes repair?'
    const unmentioned = await search.search('agent-a', mentionQuery, { weights: { graph: 0 }, track: false })
    expect(unmentioned.map((h) => h.id)).not.toContain(jon)
    const mentioned = await search.search('agent-a', mentionQuery, { weights: { graph: 1 }, track: false })
    expect(mentioned.find((h) => h.id === jon)?.components.graph).toBeGreaterThan(0)
    // The option's weight is bounded like every weight.
    await expect(search.search('agent-a', query, { weights: { graph: 2 } })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: 'weights.graph' })],
    })
  })
})
