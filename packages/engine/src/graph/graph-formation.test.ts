import {
  type Clock,
  createTokenCounter,
  DEFAULT_GRAPH_LIMITS,
  type GraphLimits,
  type LlmProvider,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { createInMemoryStorage, scriptedLlm } from '../testing/index.ts'
import { GRAPH_JOB } from './graph-formation.ts'

const START = new Date('2026-01-15T10:00:00.000Z').getTime()

async function setup(
  options: { llm?: LlmProvider; limits?: Partial<GraphLimits>; automaticGraph?: boolean } = {},
) {
  let at = START
  const clock: Clock = { now: () => new Date(at) }
  const storage = createInMemoryStorage(clock)
  const warnings: string[] = []
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn: (m: string) => warnings.push(m), error() {} } as unknown as Console,
    llm: options.llm ?? null,
    automaticSummaries: false,
    automaticProfile: false,
    automaticGraph: options.automaticGraph ?? true,
    ...(options.limits ? { graphLimits: { ...DEFAULT_GRAPH_LIMITS, ...options.limits } } : {}),
  })
  for (const id of ['a', 'b']) await storage.repositories.agents.upsert(id, null)
  const remember = async (
    agent: string,
    content: string,
    extra: { userId?: string; sourceMessageId?: string } = {},
  ) => {
    const written = await engine.memoryItems.create(agent, { content, category: 'fact', ...extra })
    await engine.jobs.runDue()
    return written.item
  }
  const graph = storage.graph
  const entities = async (agent: string) => graph.searchEntities(agent, {}, 0, 100)
  const nameOf = async (agent: string, id: string) => (await graph.findEntity(agent, id))?.name
  /** Edges holding at a time, as "source -relation-> target". */
  const edgesAt = async (agent: string, asOf: Date, knownAt = new Date(at)) => {
    const rows = await graph.relationships(agent, { at: { asOf, knownAt } }, 0, 100)
    return Promise.all(
      rows.map(
        async (r) => `${await nameOf(agent, r.sourceId)} -${r.relation}-> ${await nameOf(agent, r.targetId)}`,
      ),
    )
  }
  const allEdges = async (agent: string) => graph.relationships(agent, {}, 0, 100)
  return {
    engine,
    storage,
    graph,
    remember,
    entities,
    edgesAt,
    allEdges,
    warnings,
    advance: (ms: number) => (at += ms),
  }
}

describe('graph formation', () => {
  it('makes "Dana Kim", "Dana" and "dana" (the speaker of "I") one node, the other names aliases', async () => {
    const { remember, entities, edgesAt } = await setup()
    await remember('a', 'Dana Kim works at Acme Corp.', { userId: 'dana' })
    await remember('a', 'Dana lives in Berlin.', { userId: 'dana' })
    await remember('a', 'I use Postgres every day.', { userId: 'dana' })
    const people = (await entities('a')).filter((e) => e.type === 'PERSON')
    expect(people).toHaveLength(1)
    expect(people[0]).toMatchObject({ name: 'Dana Kim', aliases: ['Dana'], mentionCount: 3 })
    expect((await edgesAt('a', new Date(START))).sort()).toEqual([
      'Dana Kim -lives in-> Berlin',
      'Dana Kim -uses-> Postgres',
      'Dana Kim -works at-> Acme Corp',
    ])
  })

  it('reads a known name written in lower case: "dana moved to Lisbon" ends Dana Kim\'s Berlin', async () => {
    const { remember, entities, edgesAt } = await setup()
    await remember('a', 'Dana Kim moved to Berlin in 2023.')
    await remember('a', 'dana moved to Lisbon in March 2025.')
    expect((await entities('a')).filter((e) => e.type === 'PERSON').map((e) => e.name)).toEqual(['Dana Kim'])
    expect(await edgesAt('a', new Date('2024-06-01T00:00:00Z'))).toEqual(['Dana Kim -lives in-> Berlin'])
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana Kim -lives in-> Lisbon'])
  })

  it('links the speaker to what casual talk is about: "a pottery class" and "pottery classes" are one node', async () => {
    const { remember, entities, edgesAt } = await setup()
    await remember('a', 'I signed up for a pottery class.', { userId: 'melanie' })
    await remember('a', 'Melanie went to the beach with her kids.', { userId: 'melanie' })
    await remember('a', 'Melanie really enjoyed her pottery classes.', { userId: 'melanie' })
    // Pottery itself is another thing than the class (common nouns resolve by their head).
    await remember('a', 'Melanie is a big fan of pottery.', { userId: 'melanie' })
    // A negation and a question form nothing.
    await remember('a', "I don't like hiking. Did Melanie attend the workshop?", { userId: 'melanie' })
    const nodes = (await entities('a')).map((e) => `${e.name}:${e.type}`).sort()
    expect(nodes).toEqual(['Melanie:PERSON', 'beach:PLACE', 'pottery class:EVENT', 'pottery:CONCEPT'])
    expect((await edgesAt('a', new Date(START))).sort()).toEqual([
      'Melanie -likes-> pottery',
      'Melanie -likes-> pottery class',
      'Melanie -signed up for-> pottery class',
      'Melanie -visited-> beach',
    ])
  })

  it('ends the old edge when a newer one contradicts it, so "as of" answers with each in its time', async () => {
    for (const order of [
      ['Dana moved to Berlin in 2023.', 'Dana moved to Lisbon in 2025.'],
      // Learnt the other way round: the older fact still ends where the newer one begins.
      ['Dana moved to Lisbon in 2025.', 'Dana moved to Berlin in 2023.'],
    ]) {
      const { remember, edgesAt, allEdges } = await setup()
      for (const text of order) await remember('a', text)
      expect(await edgesAt('a', new Date('2024-06-01T00:00:00Z'))).toEqual(['Dana -lives in-> Berlin'])
      expect(await edgesAt('a', new Date(START))).toEqual(['Dana -lives in-> Lisbon'])
      expect(await edgesAt('a', new Date('2022-06-01T00:00:00Z'))).toEqual([])
      const [lisbon, berlin] = [...(await allEdges('a'))].sort((x, y) =>
        x.validFrom! < y.validFrom! ? 1 : -1,
      )
      expect(berlin).toMatchObject({
        supersededById: lisbon?.id,
        validUntil: lisbon?.validFrom,
        retiredAt: null,
      })
      expect(lisbon).toMatchObject({ validUntil: null, supersededById: null })
    }
  })

  it('makes the ended edge current again when the memory that ended it is deleted', async () => {
    const { engine, remember, edgesAt, allEdges } = await setup()
    await remember('a', 'Dana moved to Berlin in 2023.')
    const lisbon = await remember('a', 'Dana moved to Lisbon in 2025.')
    await engine.memoryItems.delete('a', lisbon.id)
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -lives in-> Berlin'])
    expect(await allEdges('a')).toMatchObject([{ validUntil: null, supersededById: null }])
  })

  it('confirms the same edge from a second memory: one edge, higher confidence, both as evidence', async () => {
    const { remember, allEdges, graph } = await setup()
    await remember('a', 'Dana works at Acme.')
    const [first] = await allEdges('a')
    await remember('a', 'Dana Kim works at Acme as a payments engineer and loves the team.')
    const edges = await allEdges('a')
    expect(edges).toHaveLength(1)
    expect(edges[0]?.confidence).toBeGreaterThan(first?.confidence as number)
    expect(await graph.evidenceOf('a', { relationshipIds: [edges[0]?.id as string] })).toHaveLength(2)
  })

  it('deleting the only supporting memory removes the edge and its orphan entities; a second source keeps it', async () => {
    const { engine, remember, allEdges, entities } = await setup()
    const only = await remember('a', 'Jon is the tech lead on Project Atlas.')
    const first = await remember('a', 'Gina works at Initech.')
    await remember('a', 'Gina Rossi works at Initech, on the billing team, and enjoys it.')
    expect(await allEdges('a')).toHaveLength(2)

    await engine.memoryItems.delete('a', only.id)
    // The canonical name is the first written; "Gina Rossi" resolved to it and is its alias.
    expect((await entities('a')).map((e) => e.name).sort()).toEqual(['Gina', 'Initech'])
    await engine.memoryItems.delete('a', first.id)
    expect(await allEdges('a')).toHaveLength(1)
    expect((await entities('a')).map((e) => e.name).sort()).toEqual(['Gina', 'Initech'])
  })

  it('re-forms an edited memory: its old edges go, the new words form', async () => {
    const { engine, remember, edgesAt } = await setup()
    const memory = await remember('a', 'Dana works at Acme.')
    await engine.memoryItems.update('a', memory.id, { content: 'Dana works at Initech.' })
    await engine.jobs.runDue()
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -works at-> Initech'])
  })

  it('a deleted conversation takes what only its turns supported', async () => {
    const { engine, remember, allEdges } = await setup()
    const turn = await engine.sessions.addMessage('a', 'c1', { role: 'user', content: 'Dana works at Acme.' })
    await remember('a', 'Dana works at Acme.', { sourceMessageId: turn.id })
    expect(await allEdges('a')).toHaveLength(1)
    expect(await engine.sessions.delete('a', 'c1')).toBe(true)
    expect(await allEdges('a')).toHaveLength(0)
  })

  it('keeps agents apart: a name of agent b never resolves to agent a’s entity', async () => {
    const { remember, entities } = await setup()
    await remember('a', 'Dana works at Acme.')
    await remember('b', 'Dana works at Acme.')
    const [ofA, ofB] = [await entities('a'), await entities('b')]
    expect(ofA.map((e) => e.mentionCount)).toEqual([1, 1])
    expect(ofB.every((e) => e.agentId === 'b')).toBe(true)
    expect(ofB.map((e) => e.id).some((id) => ofA.some((e) => e.id === id))).toBe(false)
  })

  it('takes entities and relations from the model, validated item by item', async () => {
    const { llm, requests } = scriptedLlm(() =>
      JSON.stringify({
        entities: [
          { name: 'Dana', type: 'person' },
          { name: 'Acme', type: 'COMPANY' },
          { name: 'Mars', type: 'PLANET' },
        ],
        relations: [
          { source: 'Dana', relation: 'Works At', target: 'Acme', confidence: 0.9 },
          { source: 'Dana', relation: 'visits', target: 'Mars' },
        ],
      }),
    )
    const { engine, remember, edgesAt, storage } = await setup({ llm })
    const memory = await remember('a', 'Dana has a job at Acme.')
    expect(requests).toHaveLength(1)
    expect(requests[0]?.messages.at(-1)?.content).toContain('Dana has a job at Acme.')
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -works at-> Acme'])
    const result = await engine.graphFormation.formMemory('a', memory.id)
    expect(result).toMatchObject({ extractor: 'llm', dropped: 2, relationshipsCreated: 1 })
    expect((await storage.graph.searchEntities('a', {}, 0, 10)).map((e) => e.type).sort()).toEqual([
      'COMPANY',
      'PERSON',
    ])
  })

  it('falls back to the offline extractor when the circuit is open, and retries other failures until the last attempt', async () => {
    let failure: Error = Object.assign(new Error('circuit open'), { name: 'CircuitOpenError' })
    const { llm } = scriptedLlm(() => failure)
    const { engine, remember, edgesAt } = await setup({ llm })
    const memory = await remember('a', 'Dana works at Acme.')
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -works at-> Acme'])

    failure = new Error('model timed out')
    await engine.memoryItems.update('a', memory.id, { content: 'Dana works at Initech.' })
    await engine.jobs.runDue()
    // Failed and queued again (with backoff); nothing of the job was applied, so the graph still
    // says what it said until a later attempt succeeds.
    const stats = (await engine.jobs.stats()).find((s) => s.kind === GRAPH_JOB)
    expect(stats?.pending).toBe(1)
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -works at-> Acme'])
    const last = await engine.graphFormation.formMemory('a', memory.id, { lastAttempt: true })
    expect(last.extractor).toBe('offline-fallback')
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -works at-> Initech'])
  })

  it('stops at the limits and counts, never failing the memory write', async () => {
    const { remember, entities, allEdges, engine, warnings } = await setup({
      limits: { maxEntitiesPerAgent: 3, maxEdgesPerEntity: 2 },
    })
    await remember('a', 'Dana works at Acme.')
    await remember('a', 'Dana lives in Berlin.')
    const over = await remember('a', 'Dana uses Postgres.')
    expect(over.content).toBe('Dana uses Postgres.')
    expect(await entities('a')).toHaveLength(3)
    expect(await allEdges('a')).toHaveLength(2)
    expect(engine.graphFormation.limitStops('a')).toEqual({ entities: 1, relationships: 1 })
    expect(warnings.some((w) => w.includes('not formed'))).toBe(true)
  })

  it('forms from the memories automatic formation writes: the speaker of "I" is a person, the turn its evidence', async () => {
    const { engine, graph, edgesAt } = await setup()
    const turn = await engine.sessions.addMessage('a', 'c1', {
      role: 'user',
      speaker: 'dana',
      content: 'I work at Acme.',
    })
    await engine.syncMemory('a')
    await engine.jobs.runDue()
    expect(await edgesAt('a', new Date(START))).toEqual(['Dana -works at-> Acme'])
    const dana = (await graph.entitiesByName('a', 'dana'))[0]
    expect(dana?.type).toBe('PERSON')
    const evidence = await graph.evidenceOf('a', { entityIds: [dana?.id as string] })
    expect(evidence.map((e) => e.messageId)).toEqual([turn.id])
  })

  it('forms a whole agent on request (after an import that brought no graph): every memory once', async () => {
    // Written without their jobs, as an import writes them (the in-memory archive keeps its own
    // rows, so the import itself is for the API's transfer tests on a real store).
    const { engine, edgesAt } = await setup({ automaticGraph: false })
    await engine.memoryItems.create('a', { content: 'Dana works at Acme.', category: 'fact' })
    await engine.memoryItems.create('a', { content: 'Jon lives in Rome.', category: 'fact' })
    await engine.jobs.runDue()
    expect(await edgesAt('a', new Date(START))).toEqual([])
    expect(await engine.graphFormation.formAgent('a')).toBe(2)
    await engine.jobs.runDue()
    expect((await edgesAt('a', new Date(START))).sort()).toEqual([
      'Dana -works at-> Acme',
      'Jon -lives in-> Rome',
    ])
  })
})
