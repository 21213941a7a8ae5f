import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// The knowledge graph in retrieval through the API (issue 15): the GRAPH scope's hits with their
// entity and relationship, Key relationships from the graph, and graph expansion switched by
// weights.graph, on the real storage.

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { id scope text components { graph }
    entity { id name type aliases }
    relationship { id relation current validFrom validUntil source { name type } target { name } sources { messageId conversationId excerpt at } }
    message { id } } }
  ... on Error { message } } }`
const CONTEXT = `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename
  ... on MemoryContext { text sections { section included budgetTokens usedTokens } } } }`

describe('the knowledge graph in search and memoryContext', () => {
  let t: TestApp
  let key: string
  let otherKey: string
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-g')
    otherKey = await createAgentKey(t, 'agent-h')
    // A day apart: no dialogue context between them, so only the graph links the move to Dana.
    const say = async (content: string, day: number) => {
      const r = await t.gql(
        `mutation($c: String!, $at: DateTime!) { addMessage(input: { conversationId: "c1", role: USER, content: $c, timestamp: $at }) { ... on Message { id } } }`,
        { c: content, at: new Date(Date.UTC(2025, 0, day)).toISOString() },
        key,
      )
      return String(r.data.addMessage.id)
    }
    await say('Dana went hiking on Saturday.', 1)
    ids.moved = await say('She finally packed up and headed to Lisbon last spring.', 3)
    await say('The weather was lovely all week.', 5)
    const graph = t.app.services.engine.storage.graph
    const now = t.clock.now()
    const entity = (
      agentId: string,
      type: 'PERSON' | 'PLACE' | 'COMPANY',
      name: string,
      aliases: string[] = [],
    ) =>
      graph.createEntity(agentId, {
        userId: null,
        type,
        name,
        aliases,
        summary: null,
        embedding: null,
        mentionCount: 1,
        origin: 'FORMED',
        firstSeenAt: now,
        lastSeenAt: now,
        createdAt: now,
      })
    const edge = async (
      agentId: string,
      sourceId: string,
      relation: string,
      targetId: string,
      validFrom: Date | null,
      messageId?: string,
    ) => {
      const r = await graph.createRelationship(agentId, {
        userId: null,
        sourceId,
        relation,
        targetId,
        confidence: 0.8,
        validFrom,
        validUntil: null,
        learntAt: now,
        origin: 'FORMED',
        createdAt: now,
      })
      if (messageId)
        await graph.addEvidence(
          agentId,
          [{ entityId: null, relationshipId: r.id, memoryId: null, messageId }],
          now,
        )
      return r
    }
    const dana = await entity('agent-g', 'PERSON', 'Dana Kim', ['Dana'])
    const lisbon = await entity('agent-g', 'PLACE', 'Lisbon')
    const acme = await entity('agent-g', 'COMPANY', 'Acme')
    ids.dana = dana.id
    ids.movedTo = (await edge('agent-g', dana.id, 'moved to', lisbon.id, null, ids.moved)).id
    ids.worksAt = (await edge('agent-g', dana.id, 'works at', acme.id, new Date('2024-03-10T00:00:00Z'))).id
    const theirs = await entity('agent-h', 'PERSON', 'Dana Kim')
    const oslo = await entity('agent-h', 'PLACE', 'Oslo')
    await edge('agent-h', theirs.id, 'lives in', oslo.id, null)
  })
  afterAll(() => t.close())

  it('answers the GRAPH scope with the entity and the relationship, its ends and sources', async () => {
    const r = await t.gql(SEARCH, { input: { query: 'Where does Dana work?', scopes: ['GRAPH'] } }, key)
    const hits = r.data.search.hits as any[]
    const works = hits.find((h) => h.id === `relationship:${ids.worksAt}`)
    expect(works).toMatchObject({
      scope: 'GRAPH',
      text: 'Dana Kim works at Acme (since 2024-03)',
      entity: null,
      message: null,
      relationship: {
        relation: 'works at',
        current: true,
        validFrom: '2024-03-10T00:00:00.000Z',
        source: { name: 'Dana Kim', type: 'PERSON' },
        target: { name: 'Acme' },
      },
    })
    expect(hits.find((h) => h.id === `relationship:${ids.movedTo}`)?.relationship.sources).toEqual([
      // Why it is believed: the turn's words and date, and its conversation to link to.
      {
        messageId: ids.moved,
        conversationId: 'c1',
        excerpt: 'She finally packed up and headed to Lisbon last spring.',
        at: new Date(Date.UTC(2025, 0, 3)).toISOString(),
      },
    ])
    expect(hits.find((h) => h.id === `entity:${ids.dana}`)?.entity).toMatchObject({
      name: 'Dana Kim',
      aliases: ['Dana'],
    })
    // Another agent's graph is its own.
    const other = await t.gql(SEARCH, { input: { query: 'Acme Lisbon', scopes: ['GRAPH'] } }, otherKey)
    expect(other.data.search.hits).toEqual([])
  })

  it('fills Key relationships from the graph, the query’s entities first, within the section budget', async () => {
    const r = await t.gql(
      CONTEXT,
      { input: { query: 'Where does Dana work?', sections: ['RELATIONSHIPS'] } },
      key,
    )
    const section = r.data.memoryContext.sections[0]
    expect(section).toMatchObject({ section: 'RELATIONSHIPS', budgetTokens: 300 })
    expect(section.included[0]).toBe(`relationship:${ids.worksAt}`)
    expect(section.usedTokens).toBeLessThanOrEqual(300)
    expect(r.data.memoryContext.text).toContain(
      '## Key relationships\n- Dana Kim works at Acme (since 2024-03)\n',
    )
    const theirs = await t.gql(CONTEXT, { input: { sections: ['RELATIONSHIPS'] } }, otherKey)
    expect(theirs.data.memoryContext.text).toContain('Dana Kim lives in Oslo')
    expect(theirs.data.memoryContext.text).not.toContain('Acme')
  })

  it('pulls in the turn a named entity’s relationship was learnt from when weights.graph is on', async () => {
    const ask = async (graph: number) =>
      (await t.gql(SEARCH, { input: { query: 'Where did Dana move to?', weights: { graph } } }, key)).data
        .search.hits as any[]
    expect((await ask(0)).map((h) => h.message?.id)).not.toContain(ids.moved)
    const on = (await ask(1)).find((h) => h.message?.id === ids.moved)
    expect(on?.components.graph).toBeGreaterThan(0)
  })
})
