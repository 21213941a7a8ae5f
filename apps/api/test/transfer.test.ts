import fs from 'node:fs'
import path from 'node:path'
import { DEFAULT_TRAJECTORY_RULES, goalWords } from '@engram/core'
import { contentHash } from '@engram/engine'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const EXPORT = `query($a: ID) { exportMemory(agentId: $a) {
  __typename ... on MemoryExport { document memories knowledge sessions messages vectors } ... on Error { message }
} }`
const IMPORT = `mutation($a: ID, $d: JSON!, $m: ImportMode) { importMemory(agentId: $a, document: $d, mode: $m) {
  __typename
  ... on ImportReport { memories knowledge sessions messages vectors reembedded }
  ... on ValidationError { issues { field message limit } }
  ... on Error { message }
} }`
const CREATE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) {
  __typename ... on MemoryWrite { outcome memory { id } superseded { id } }
} }`
const ADD = `mutation($c: String!, $r: Role!, $t: String!) { addMessage(input: { conversationId: $c, role: $r, content: $t }) { __typename } }`
const BACKUP = `mutation { backupDatabase { __typename ... on Backup { name bytes createdAt } ... on Error { message } } }`
const BACKUPS = `{ backups { __typename ... on QueryBackupsSuccess { data { name bytes } } ... on Error { message } } }`
const RESTORE = `mutation($n: String!) { restoreDatabase(name: $n) {
  __typename ... on RestorePayload { name tables } ... on ValidationError { issues { field message } } ... on Error { message }
} }`
const CLEAR = `mutation($a: ID, $c: String!) { clearAll(agentId: $a, confirm: $c) {
  __typename ... on ClearAllPayload { memories knowledge sessions } ... on ValidationError { issues { field message limit } } ... on Error { message }
} }`
const POLICY = `mutation($a: ID!, $m: PrivacyMode!) { setPrivacyPolicy(agentId: $a, mode: $m) { __typename } }`

type Doc = Record<string, any>

describe('export, import, backups, restore and clearing', () => {
  let t: TestApp
  let keySource: string
  let keyCopy: string
  let original: Doc

  const exportOf = async (agentId: string, key: string = ADMIN_KEY) => {
    const r = await t.gql(EXPORT, key === ADMIN_KEY ? { a: agentId } : {}, key)
    expect(r.errors).toBeUndefined()
    expect(r.data.exportMemory.__typename).toBe('MemoryExport')
    return r.data.exportMemory as { document: Doc; [count: string]: unknown }
  }
  const importInto = async (agentId: string, document: unknown, mode = 'REPLACE') => {
    const r = await t.gql(IMPORT, { a: agentId, d: document, m: mode })
    expect(r.errors).toBeUndefined()
    return r.data.importMemory
  }
  /** Every row an agent owns, to show an operation changed nothing. */
  const fingerprint = async (agentId: string) => {
    const where = { where: { agentId } }
    return {
      memories: await t.db.memoryItem.findMany({ ...where, orderBy: { id: 'asc' } }),
      knowledge: await t.db.knowledge.findMany({ ...where, orderBy: { id: 'asc' } }),
      sessions: await t.db.session.findMany({ ...where, orderBy: { id: 'asc' } }),
      messages: await t.db.message.findMany({ ...where, orderBy: { id: 'asc' } }),
      entries: await t.db.memoryEntry.findMany({ ...where, orderBy: { id: 'asc' } }),
      embeddings: await t.db.embedding.findMany({
        ...where,
        orderBy: [{ kind: 'asc' }, { ownerId: 'asc' }, { model: 'asc' }],
      }),
      graphEntities: await t.db.graphEntity.findMany({ ...where, orderBy: { id: 'asc' } }),
      graphRelationships: await t.db.graphRelationship.findMany({ ...where, orderBy: { id: 'asc' } }),
      graphEvidence: await t.db.graphEvidence.findMany({ ...where, orderBy: { id: 'asc' } }),
    }
  }
  const rowCounts = async (agentId: string) => {
    const where = { where: { agentId } }
    return {
      memories: await t.db.memoryItem.count(where),
      knowledge: await t.db.knowledge.count(where),
      sessions: await t.db.session.count(where),
      messages: await t.db.message.count(where),
      entries: await t.db.memoryEntry.count(where),
      embeddings: await t.db.embedding.count(where),
      graphEntities: await t.db.graphEntity.count(where),
      graphRelationships: await t.db.graphRelationship.count(where),
      graphEvidence: await t.db.graphEvidence.count(where),
      runs: await t.db.agentRun.count(where),
      trajectories: await t.db.trajectory.count(where),
      appFacts: await t.db.appFact.count(where),
    }
  }

  /**
   * A knowledge graph for agent-src, written through the port as formation writes it: Dana lives in
   * Hamburg (from memory m2 and the first turn of c1), a contradicted earlier edge, and a source no
   * document row holds (which an export leaves out).
   */
  const seedGraph = async () => {
    const graph = t.app.services.engine.storage.graph
    const memories = await t.db.memoryItem.findMany({
      where: { agentId: 'agent-src' },
      orderBy: { id: 'asc' },
    })
    const turns = await t.db.message.findMany({ where: { agentId: 'agent-src' }, orderBy: { id: 'asc' } })
    const now = t.clock.now()
    const entity = (name: string, type: 'PERSON' | 'PLACE', aliases: string[], embedding: number[] | null) =>
      graph.createEntity('agent-src', {
        userId: 'u1',
        type,
        name,
        aliases,
        summary: `${name} as the user told it`,
        embedding: embedding && Float32Array.from(embedding),
        mentionCount: 2,
        origin: 'FORMED',
        firstSeenAt: now,
        lastSeenAt: now,
        createdAt: now,
      })
    const dana = await entity('Dana Kim', 'PERSON', ['Dana'], [0.5, -0.25])
    const berlin = await entity('Berlin', 'PLACE', [], null)
    const hamburg = await entity('Hamburg', 'PLACE', ['HH'], null)
    const edge = (targetId: string, validFrom: Date | null) =>
      graph.createRelationship('agent-src', {
        userId: 'u1',
        sourceId: dana.id,
        relation: 'lives in',
        targetId,
        confidence: 0.8,
        validFrom,
        validUntil: null,
        learntAt: now,
        origin: 'FORMED',
        createdAt: now,
      })
    const before = await edge(berlin.id, new Date('2024-01-01T00:00:00.000Z'))
    const after = await edge(hamburg.id, new Date('2025-04-01T00:00:00.000Z'))
    await graph.updateRelationship('agent-src', before.id, {
      validUntil: new Date('2025-04-01T00:00:00.000Z'),
      supersededById: after.id,
      updatedAt: now,
    })
    const m2 = String(memories[1]?.id)
    const turn = String(turns[0]?.id)
    await graph.addEvidence(
      'agent-src',
      [
        { entityId: dana.id, relationshipId: null, memoryId: m2, messageId: turn },
        { entityId: hamburg.id, relationshipId: null, memoryId: m2, messageId: null },
        { entityId: berlin.id, relationshipId: null, memoryId: String(memories[0]?.id), messageId: null },
        { entityId: null, relationshipId: after.id, memoryId: m2, messageId: turn },
        { entityId: null, relationshipId: before.id, memoryId: String(memories[0]?.id), messageId: null },
        { entityId: null, relationshipId: after.id, memoryId: '999999', messageId: null },
      ],
      now,
    )
  }

  /**
   * Trajectory memory for agent-src (issue 16), through the port as the run registry writes it: a
   * completed run and its resume, the trajectory and run session the first left, a fact and a
   * selector it contributed to, and a hint of an evaluation track's scope; `extra` on some.
   */
  async function seedTrajectoryMemory() {
    const memory = t.app.services.engine.storage.trajectories
    const at = new Date('2026-02-01T10:00:00.000Z')
    const place = { scope: 'default', domain: 'shop.example' }
    const manifest = {
      sessionId: 'session-1',
      parentRunId: null,
      kind: 'START' as const,
      isolation: 'SHARED' as const,
      scope: 'default',
      status: 'COMPLETED' as const,
      goal: 'search for red shoes',
      domain: place.domain,
      startUrl: 'https://shop.example/',
      currentUrl: 'https://shop.example/results',
      finalUrl: 'https://shop.example/results',
      turnCount: 4,
      success: true,
      summary: 'found them',
      result: null,
      reason: null,
      artifactPaths: ['shot.png'],
      model: 'model-x',
      durationMs: 9_000,
      extra: { orchestrator: 'ci' },
      startedAt: at,
      updatedAt: at,
      completedAt: at,
    }
    await memory.insertRun('agent-src', { ...manifest, id: 'run-1' })
    await memory.insertRun('agent-src', {
      ...manifest,
      id: 'run-2',
      parentRunId: 'run-1',
      kind: 'RESUME',
      status: 'RUNNING',
      success: null,
      completedAt: null,
      extra: null,
    })
    await memory.insertTrajectory(
      'agent-src',
      {
        id: 'trajectory-1',
        ...place,
        origin: 'https://shop.example',
        goal: 'search for red shoes',
        words: goalWords('search for red shoes'),
        runId: 'run-1',
        steps: [
          {
            action: 'type',
            selector: '#q',
            value: 'red shoes',
            url: null,
            verified: true,
            durationMs: 40,
            extra: null,
          },
          {
            action: 'click',
            selector: 'button "Go"',
            value: null,
            url: null,
            verified: null,
            durationMs: null,
            extra: { ref: '@e3' },
          },
        ],
        stepCount: 2,
        verifiedCount: 1,
        success: true,
        turns: 4,
        durationMs: 9_000,
        outcome: 'found them',
        model: 'model-x',
        recordedAt: at,
        extra: { version: 2 },
      },
      100,
    )
    await memory.insertRunSession(
      'agent-src',
      {
        ...place,
        sessionId: 'session-1',
        runId: 'run-1',
        goal: 'search for red shoes',
        outcome: 'found them',
        success: true,
        finalUrl: 'https://shop.example/results',
        turnsUsed: 4,
        durationMs: 9_000,
        endedAt: at,
        extra: null,
      },
      5,
    )
    const fact = { ...place, type: 'SELECTOR' as const, key: 'search box', value: '#q' }
    await memory.observeFact('agent-src', fact, at, DEFAULT_TRAJECTORY_RULES, 'run-1')
    await memory.observeSelector(
      'agent-src',
      { ...place, element: 'searchbox', selector: '#q', outcome: 'SUCCESS' },
      at,
      'run-1',
    )
    await memory.addHint('agent-src', {
      scope: 'track-b',
      text: 'prefer the search box',
      createdAt: at,
      updatedAt: at,
      extra: null,
    })
  }

  beforeAll(async () => {
    t = await createTestApp()
    keySource = await createAgentKey(t, 'agent-src')
    keyCopy = await createAgentKey(t, 'agent-copy')
    const write = async (input: Record<string, unknown>) =>
      (await t.gql(CREATE, { input: { category: 'FACT', ...input } }, keySource)).data.createMemory
    const first = await write({
      content: 'The user lives in Berlin Mitte',
      tags: ['home', 'city'],
      importance: 0.8,
      confidence: 0.9,
      userId: 'u1',
      sourceConversationId: 'c1',
      metadata: { origin: 'chat', turn: 3 },
    })
    expect(first.outcome).toBe('STORED')
    t.clock.advance(60_000)
    const second = await write({ content: 'The user lives in Hamburg Altona', userId: 'u1', importance: 0.7 })
    // A superseded pair: the export must keep the link between them.
    expect(second).toMatchObject({ outcome: 'SUPERSEDED', superseded: { id: first.memory.id } })
    t.clock.advance(60_000)
    expect(
      (await write({ content: 'Prefers tabs over spaces', category: 'PREFERENCE', pinned: true })).outcome,
    ).toBe('STORED')
    await t.gql(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "hamburg", value: "a port city in the north" }) { __typename } }`,
      {},
      keySource,
    )
    t.clock.advance(60_000)
    await t.gql(ADD, { c: 'c1', r: 'USER', t: 'I moved from Berlin to Hamburg last spring' }, keySource)
    t.clock.advance(1_000)
    await t.gql(ADD, { c: 'c1', r: 'ASSISTANT', t: 'Hamburg has a lovely harbour' }, keySource)
    t.clock.advance(1_000)
    await t.gql(ADD, { c: 'c2', r: 'USER', t: 'Which editor settings do I like?' }, keySource)
    // A search over every kind brings the vectors up to date (the offline embedder is in-process).
    const search = await t.gql(
      `{ search(input: { query: "Hamburg harbour tabs editor", scopes: [MEMORIES, MESSAGES, KNOWLEDGE] }) { __typename } }`,
      {},
      keySource,
    )
    expect(search.data.search.__typename).toBe('SearchResult')
    await seedGraph()
    await seedTrajectoryMemory()
    original = (await exportOf('agent-src', keySource)).document
  })
  afterAll(() => t.close())

  it('exports memories (with supersession), knowledge, sessions with entries and vectors', async () => {
    const exported = await exportOf('agent-src')
    expect(exported).toMatchObject({ memories: 3, knowledge: 1, sessions: 2, messages: 3, vectors: 7 })
    const doc = exported.document
    expect(doc).toMatchObject({
      format: 'engram.export',
      version: 5,
      agent: { id: 'agent-src' },
      embeddingModel: t.app.services.embeddings.model,
    })
    expect(doc.memories.map((m: Doc) => [m.ref, m.content, m.supersededBy])).toEqual([
      ['m1', 'The user lives in Berlin Mitte', 'm2'],
      ['m2', 'The user lives in Hamburg Altona', null],
      ['m3', 'Prefers tabs over spaces', null],
    ])
    expect(doc.memories[0]).toMatchObject({
      tags: ['home', 'city'],
      importance: 0.8,
      confidence: 0.9,
      userId: 'u1',
      sourceConversationId: 'c1',
      metadata: { origin: 'chat', turn: 3 },
      validFrom: '2026-01-15T10:00:00.000Z',
      validUntil: '2026-01-15T10:01:00.000Z',
    })
    expect(doc.knowledge).toMatchObject([
      { category: 'domain', key: 'hamburg', value: 'a port city in the north' },
    ])
    expect(doc.sessions.map((s: Doc) => [s.conversationId, s.messages.map((m: Doc) => m.content)])).toEqual([
      ['c1', ['I moved from Berlin to Hamburg last spring', 'Hamburg has a lovely harbour']],
      ['c2', ['Which editor settings do I like?']],
    ])
    expect(doc.sessions[0].messages[0].entry).toMatchObject({
      type: 'short_term',
      content: 'I moved from Berlin to Hamburg last spring',
    })
    expect(doc.vectors.map((v: Doc) => v.owner)).toEqual([
      'knowledge:domain/hamburg',
      'memory:m1',
      'memory:m2',
      'memory:m3',
      'message:c1#1',
      'message:c1#2',
      'message:c2#1',
    ])
    const dimensions = t.app.services.embeddings.embedder.dimensions
    for (const v of doc.vectors) {
      expect(v.dimensions).toBe(dimensions)
      expect(Buffer.from(v.vector, 'base64').byteLength).toBe(dimensions * 4)
    }
  })

  it('exports the knowledge graph by refs: entities, relationships with their supersession, evidence', async () => {
    const { graph } = original
    expect(graph.entities.map((e: Doc) => [e.ref, e.name, e.type, e.aliases])).toEqual([
      ['e1', 'Dana Kim', 'PERSON', ['Dana']],
      ['e2', 'Berlin', 'PLACE', []],
      ['e3', 'Hamburg', 'PLACE', ['HH']],
    ])
    const embedding = new Uint8Array(Buffer.from(graph.entities[0].embedding, 'base64'))
    expect([...new Float32Array(embedding.buffer)]).toEqual([0.5, -0.25])
    expect(graph.entities[1].embedding).toBeNull()
    expect(
      graph.relationships.map((r: Doc) => [r.ref, r.source, r.relation, r.target, r.supersededBy]),
    ).toEqual([
      ['r1', 'e1', 'lives in', 'e2', 'r2'],
      ['r2', 'e1', 'lives in', 'e3', null],
    ])
    expect(graph.relationships[0]).toMatchObject({
      validFrom: '2024-01-01T00:00:00.000Z',
      validUntil: '2025-04-01T00:00:00.000Z',
      confidence: 0.8,
      origin: 'FORMED',
    })
    // Sources by the document's refs; the memory no document row holds is left out.
    expect(graph.evidence.map((ev: Doc) => [ev.entity ?? ev.relationship, ev.memory, ev.message])).toEqual([
      ['e1', 'm2', 'c1#1'],
      ['e3', 'm2', null],
      ['e2', 'm1', null],
      ['r2', 'm2', 'c1#1'],
      ['r1', 'm1', null],
    ])
  })

  it('exports trajectory memory (version 5): runs, trajectories with their steps, sessions, facts, selectors, hints', async () => {
    const memory = original.trajectoryMemory
    expect(memory.runs.map((r: Doc) => [r.id, r.kind, r.parentRunId, r.status])).toEqual([
      ['run-1', 'START', null, 'COMPLETED'],
      ['run-2', 'RESUME', 'run-1', 'RUNNING'],
    ])
    expect(memory.runs[0]).toMatchObject({ extra: { orchestrator: 'ci' }, artifactPaths: ['shot.png'] })
    expect(memory.runs[0].agentId).toBeUndefined()
    expect(memory.trajectories).toEqual([
      expect.objectContaining({
        id: 'trajectory-1',
        goal: 'search for red shoes',
        runId: 'run-1',
        recordedAt: '2026-02-01T10:00:00.000Z',
        extra: { version: 2 },
      }),
    ])
    expect(memory.trajectories[0].steps[1]).toEqual({
      action: 'click',
      selector: 'button "Go"',
      value: null,
      url: null,
      verified: null,
      durationMs: null,
      extra: { ref: '@e3' },
    })
    expect(memory.runSessions.map((e: Doc) => [e.runId, e.outcome])).toEqual([['run-1', 'found them']])
    expect(memory.facts.map((f: Doc) => [f.key, f.value, f.confidence, f.sources])).toEqual([
      ['search box', '#q', 0.6, 1],
    ])
    expect(memory.selectors.map((s: Doc) => [s.element, s.selector, s.successCount])).toEqual([
      ['searchbox', '#q', 1],
    ])
    expect(memory.hints.map((h: Doc) => [h.scope, h.text])).toEqual([['track-b', 'prefer the search box']])
  })

  it("imports a version 4 document (no trajectory memory); REPLACE clears the agent's, MERGE keeps it", async () => {
    const { trajectoryMemory: _, ...older } = original
    const memory = t.app.services.engine.storage.trajectories
    await importInto('agent-copy', original)
    expect(await memory.countTrajectories('agent-copy', {})).toBe(1)
    // A merge of an older document (here with nothing else to add) leaves trajectory memory alone.
    const nothing = {
      ...older,
      version: 4,
      memories: [],
      knowledge: [],
      sessions: [],
      vectors: [],
      graph: undefined,
    }
    expect((await importInto('agent-copy', nothing, 'MERGE')).__typename).toBe('ImportReport')
    expect(await memory.countTrajectories('agent-copy', {})).toBe(1)
    expect((await importInto('agent-copy', { ...older, version: 4 })).__typename).toBe('ImportReport')
    expect(await memory.countTrajectories('agent-copy', {})).toBe(0)
    expect(await memory.findRun('agent-copy', 'run-1')).toBeNull()
    // The source keeps its own.
    expect(await memory.countTrajectories('agent-src', {})).toBe(1)
  })

  it('imports into a fresh agent (REPLACE), whose export is the same document', async () => {
    const report = await importInto('agent-copy', original)
    expect(report).toEqual({
      __typename: 'ImportReport',
      memories: 3,
      knowledge: 1,
      sessions: 2,
      messages: 3,
      vectors: 7,
      reembedded: false,
    })
    const copy = (await exportOf('agent-copy', keyCopy)).document
    expect(copy.agent).toEqual({ id: 'agent-copy', name: 'agent-copy' })
    expect({ ...copy, agent: null }).toEqual({ ...original, agent: null })
    // Trajectory memory is the copy's own, ids kept: the run is found by its id, the trajectory by
    // its goal words (recomputed and indexed on import), and deleting the run takes back its share.
    const memory = t.app.services.engine.storage.trajectories
    expect((await memory.findRun('agent-copy', 'run-1'))?.extra).toEqual({ orchestrator: 'ci' })
    const query = {
      scope: 'default',
      domain: 'shop.example',
      words: goalWords('red shoes'),
      minShared: 2,
      since: new Date(0),
    }
    expect((await memory.trajectoryCandidates('agent-copy', query, 5)).map((c) => c.id)).toEqual([
      'trajectory-1',
    ])
    // Its vectors carry the hash of the text they were embedded from, as the source's do.
    const hashes = async (agentId: string) =>
      (await t.db.embedding.findMany({ where: { agentId } })).map((e) => `${e.kind}/${e.contentHash}`).sort()
    expect(await hashes('agent-copy')).toEqual(await hashes('agent-src'))
    expect(await hashes('agent-copy')).toContain(`memory/${contentHash('Prefers tabs over spaces')}`)
    // The supersession link points at the copy's own rows.
    const rows = await t.db.memoryItem.findMany({ where: { agentId: 'agent-copy' }, orderBy: { id: 'asc' } })
    expect(rows.map((r) => r.supersededById)).toEqual([rows[1]?.id, null, null])
    // The graph is the copy's own: found by name and alias, its evidence citing the copy's rows, so
    // deleting the copy's memory and turn takes what only they supported.
    const graph = t.app.services.engine.storage.graph
    const [dana] = await graph.entitiesByName('agent-copy', 'dana')
    expect(dana).toMatchObject({ name: 'Dana Kim', aliases: ['Dana'], userId: 'u1' })
    expect([...(dana?.embedding ?? [])]).toEqual([0.5, -0.25])
    expect((await graph.entitiesByName('agent-copy', 'hh')).map((e) => e.name)).toEqual(['Hamburg'])
    const copyTurn = await t.db.message.findFirst({
      where: { agentId: 'agent-copy' },
      orderBy: { id: 'asc' },
    })
    expect(await graph.evidenceOf('agent-copy', { entityIds: [dana?.id as string] })).toEqual([
      expect.objectContaining({ memoryId: String(rows[1]?.id), messageId: String(copyTurn?.id) }),
    ])
    const asOf = (iso: string) => ({ asOf: new Date(iso), knownAt: t.clock.now() })
    const livesIn = async (iso: string) =>
      Promise.all(
        (await graph.relationships('agent-copy', { at: asOf(iso) }, 0, 10)).map(
          async (r) => (await graph.findEntity('agent-copy', r.targetId))?.name,
        ),
      )
    expect(await livesIn('2024-06-01T00:00:00.000Z')).toEqual(['Berlin'])
    expect(await livesIn('2025-06-01T00:00:00.000Z')).toEqual(['Hamburg'])
    // The copy is searchable with the imported vectors.
    const hits = await t.gql(
      `{ search(input: { query: "harbour", scopes: [MESSAGES] }) { ... on SearchResult { hits { text components { vector } } } } }`,
      {},
      keyCopy,
    )
    expect(hits.data.search.hits[0]).toMatchObject({ text: 'Hamburg has a lovely harbour' })
    expect(hits.data.search.hits[0].components.vector).toBeGreaterThan(0)
  })

  it("names a memory's source turn by its ref, and the import points it at the turn written anew", async () => {
    const key = await createAgentKey(t, 'agent-turns')
    await t.gql(ADD, { c: 'talk', r: 'USER', t: 'Hello there' }, key)
    await t.gql(ADD, { c: 'talk', r: 'USER', t: 'I took up the cello this winter' }, key)
    const [turn] = await t.db.message.findMany({
      where: { agentId: 'agent-turns', content: { contains: 'cello' } },
    })
    const write = await t.gql(
      CREATE,
      { input: { category: 'FACT', content: 'Plays the cello', sourceMessageId: String(turn?.id) } },
      key,
    )
    expect(write.data.createMemory.outcome).toBe('STORED')
    const document = (await exportOf('agent-turns', key)).document
    expect(document.memories[0]).toMatchObject({ sourceMessageId: 'talk#2' })

    // Into a fresh agent: its turns get new ids, and the memory points at its own copy of the turn.
    await createAgentKey(t, 'agent-turns-copy')
    expect((await importInto('agent-turns-copy', document)).memories).toBe(1)
    const [copied] = await t.db.message.findMany({
      where: { agentId: 'agent-turns-copy', content: { contains: 'cello' } },
    })
    expect(copied?.id).not.toBe(turn?.id)
    const [memory] = await t.db.memoryItem.findMany({ where: { agentId: 'agent-turns-copy' } })
    expect(memory?.sourceMessageId).toBe(String(copied?.id))
    expect((await exportOf('agent-turns-copy')).document.memories[0].sourceMessageId).toBe('talk#2')
  })

  it('imports into the same agent (REPLACE) and exports the identical document', async () => {
    const report = await importInto('agent-src', original)
    expect(report).toMatchObject({ memories: 3, sessions: 2, messages: 3, vectors: 7, reembedded: false })
    expect((await exportOf('agent-src')).document).toEqual(original)
    expect(await rowCounts('agent-src')).toEqual({
      memories: 3,
      knowledge: 1,
      sessions: 2,
      messages: 3,
      entries: 3,
      embeddings: 7,
      // The graph replaced, not doubled; the source no row held was left out by the export.
      graphEntities: 3,
      graphRelationships: 2,
      graphEvidence: 5,
      // Trajectory memory replaced too, ids kept.
      runs: 2,
      trajectories: 1,
      appFacts: 1,
    })
  })

  it("embeds again when the document's model is not the server's", async () => {
    await createAgentKey(t, 'agent-remodel')
    const foreign = {
      ...original,
      embeddingModel: 'someone-elses-model-v2',
      vectors: original.vectors.map((v: Doc) => ({
        ...v,
        dimensions: 4,
        vector: Buffer.from(new Float32Array([1, 0, 0, 0]).buffer).toString('base64'),
      })),
    }
    expect(await importInto('agent-remodel', foreign)).toMatchObject({
      memories: 3,
      vectors: 0,
      reembedded: true,
    })
    const model = t.app.services.embeddings.model
    const vectors = await t.db.embedding.findMany({ where: { agentId: 'agent-remodel' } })
    expect(vectors).toHaveLength(7)
    expect(new Set(vectors.map((v) => `${v.model}/${v.dimensions}`))).toEqual(
      new Set([`${model}/${t.app.services.embeddings.embedder.dimensions}`]),
    )
    const stats = await t.gql(
      `{ memoryStats(agentId: "agent-remodel") { ... on MemoryStats { embeddingModel embedded embeddingCoverage coverage { kind total embedded } } } }`,
    )
    expect(stats.data.memoryStats).toEqual({
      embeddingModel: model,
      embedded: 3,
      embeddingCoverage: 1,
      coverage: [
        { kind: 'memory', total: 3, embedded: 3 },
        { kind: 'message', total: 3, embedded: 3 },
        { kind: 'knowledge', total: 1, embedded: 1 },
        // The import carries no conversation summaries (they re-form from the conversations).
        { kind: 'summary', total: 0, embedded: 0 },
      ],
    })
    const status = await t.gql(`{ embeddingStatus { model } }`)
    expect(status.data.embeddingStatus.model).toBe(model)
    // Same content as the source, re-embedded with the same model: the same vectors.
    expect((await exportOf('agent-remodel')).document.vectors).toEqual(original.vectors)
  })

  it('MERGE adds to what the agent has', async () => {
    await createAgentKey(t, 'agent-merge')
    await importInto('agent-merge', original)
    const addition = {
      ...original,
      memories: [{ ...original.memories[2], ref: 'x1', content: 'Uses a split keyboard' }],
      knowledge: [],
      sessions: [{ ...original.sessions[1], conversationId: 'c3' }],
      vectors: [],
    }
    expect(await importInto('agent-merge', addition, 'MERGE')).toMatchObject({
      memories: 1,
      knowledge: 0,
      sessions: 1,
      messages: 1,
    })
    const doc = (await exportOf('agent-merge')).document
    expect(doc.memories.map((m: Doc) => m.content)).toEqual([
      'The user lives in Berlin Mitte',
      'The user lives in Hamburg Altona',
      'Prefers tabs over spaces',
      'Uses a split keyboard',
    ])
    expect(doc.sessions.map((s: Doc) => s.conversationId)).toEqual(['c1', 'c2', 'c3'])
  })

  it('MERGE updates a fact the agent already has, with the vector of its new value', async () => {
    const fact = { ...original.knowledge[0], value: 'a city on the Elbe', storeCount: 2 }
    const vector = original.vectors.find((v: Doc) => v.owner === 'knowledge:domain/hamburg')
    const knowledgeVectors = () =>
      t.db.embedding.findMany({ where: { agentId: 'agent-merge', kind: 'knowledge' } })
    const [before] = await knowledgeVectors()
    expect(before?.contentHash).toBe(contentHash('hamburg: a port city in the north'))
    // With no vector in the document: the old value's vector goes.
    const withoutVector = { ...original, memories: [], sessions: [], knowledge: [fact], vectors: [] }
    expect(await importInto('agent-merge', withoutVector, 'MERGE')).toMatchObject({
      knowledge: 1,
      vectors: 0,
    })
    expect(await knowledgeVectors()).toEqual([])
    // With one: it is taken.
    const newVector = {
      ...vector,
      vector: Buffer.from(new Float32Array(vector.dimensions).fill(0.5).buffer).toString('base64'),
    }
    const withVector = { ...withoutVector, vectors: [newVector] }
    expect(await importInto('agent-merge', withVector, 'MERGE')).toMatchObject({ knowledge: 1, vectors: 1 })
    const after = await knowledgeVectors()
    expect(after).toHaveLength(1)
    expect(Buffer.from(after[0]?.vector as Uint8Array).toString('base64')).toBe(newVector.vector)
    const facts = await t.db.knowledge.findMany({ where: { agentId: 'agent-merge' } })
    expect(facts.map((k) => [k.key, k.value, k.storeCount])).toEqual([['hamburg', 'a city on the Elbe', 2]])
  })

  it('MERGE refuses a conversation the agent already has, and changes nothing', async () => {
    const before = await fingerprint('agent-copy')
    const clash = {
      ...original,
      memories: [{ ...original.memories[2], ref: 'x1', supersededBy: null, content: 'Something new' }],
      sessions: [{ ...original.sessions[1], conversationId: 'c-new' }, original.sessions[0]],
      vectors: [],
    }
    const report = await importInto('agent-copy', clash, 'MERGE')
    expect(report.__typename).toBe('ValidationError')
    expect(report.issues).toEqual([
      { field: 'document.sessions', message: expect.stringContaining('c1'), limit: null },
    ])
    expect(await fingerprint('agent-copy')).toEqual(before)
  })

  const broken: [string, (doc: Doc) => Doc, string][] = [
    [
      'a memory with importance 2',
      (d) => ({
        ...d,
        memories: d.memories.map((m: Doc, i: number) => (i === 1 ? { ...m, importance: 2 } : m)),
      }),
      'document.memories.1.importance',
    ],
    [
      'supersededBy naming no memory of the document',
      (d) => ({
        ...d,
        memories: d.memories.map((m: Doc, i: number) => (i === 0 ? { ...m, supersededBy: 'm9' } : m)),
      }),
      'document.memories.0.supersededBy',
    ],
    ['another version', (d) => ({ ...d, version: 99 }), 'document.version'],
    ['another format', (d) => ({ ...d, format: 'someone.else' }), 'document.format'],
    [
      'a duplicate memory ref',
      (d) => ({ ...d, memories: d.memories.map((m: Doc, i: number) => (i === 2 ? { ...m, ref: 'm1' } : m)) }),
      'document.memories.2.ref',
    ],
    [
      'the same fact twice',
      (d) => ({ ...d, knowledge: [d.knowledge[0], { ...d.knowledge[0], value: 'another value' }] }),
      'document.knowledge.1.key',
    ],
    [
      'the same conversation twice',
      (d) => ({ ...d, sessions: [d.sessions[0], d.sessions[1], { ...d.sessions[1], messages: [] }] }),
      'document.sessions.2.conversationId',
    ],
    [
      'a message with an unknown role',
      (d) => ({
        ...d,
        sessions: [
          d.sessions[0],
          { ...d.sessions[1], messages: [{ ...d.sessions[1].messages[0], role: 'narrator' }] },
        ],
      }),
      'document.sessions.1.messages.0.role',
    ],
    [
      'a message past the content limit',
      (d) => ({
        ...d,
        sessions: [
          { ...d.sessions[0], messages: [{ ...d.sessions[0].messages[0], content: 'x'.repeat(200_001) }] },
        ],
      }),
      'document.sessions.0.messages.0.content',
    ],
  ]

  // Trajectory memory (version 5): ids unique and well-formed.
  const withRuns = (d: Doc, change: (runs: Doc[]) => Doc[]) => ({
    ...d,
    trajectoryMemory: { ...d.trajectoryMemory, runs: change(d.trajectoryMemory.runs) },
  })
  broken.push(
    [
      'the same run id twice',
      (d) => withRuns(d, (runs) => [runs[0] as Doc, runs[0] as Doc]),
      'document.trajectoryMemory.runs.1',
    ],
    [
      'a run id with a space',
      (d) => withRuns(d, (runs) => runs.map((r, i) => (i === 0 ? { ...r, id: 'run 1' } : r))),
      'document.trajectoryMemory.runs.0.id',
    ],
  )

  // The graph (version 4): refs resolve within the document, names and relations are bounded.
  const withGraph = (d: Doc, change: (graph: Doc) => Doc) => ({ ...d, graph: change(d.graph) })
  broken.push(
    [
      'a relationship naming no entity of the document',
      (d) =>
        withGraph(d, (g) => ({
          ...g,
          relationships: g.relationships.map((r: Doc, i: number) => (i === 1 ? { ...r, target: 'e9' } : r)),
        })),
      'document.graph.relationships.1.target',
    ],
    [
      'a relationship superseded by none of the document',
      (d) =>
        withGraph(d, (g) => ({
          ...g,
          relationships: g.relationships.map((r: Doc, i: number) =>
            i === 0 ? { ...r, supersededBy: 'r9' } : r,
          ),
        })),
      'document.graph.relationships.0.supersededBy',
    ],
    [
      'a duplicate entity ref',
      (d) =>
        withGraph(d, (g) => ({
          ...g,
          entities: g.entities.map((e: Doc, i: number) => (i === 2 ? { ...e, ref: 'e1' } : e)),
        })),
      'document.graph.entities.2.ref',
    ],
    [
      'evidence of both an entity and a relationship',
      (d) =>
        withGraph(d, (g) => ({
          ...g,
          evidence: g.evidence.map((ev: Doc, i: number) => (i === 0 ? { ...ev, relationship: 'r1' } : ev)),
        })),
      'document.graph.evidence.0',
    ],
    [
      'an entity name past its limit',
      (d) =>
        withGraph(d, (g) => ({
          ...g,
          entities: g.entities.map((e: Doc, i: number) => (i === 0 ? { ...e, name: 'x'.repeat(201) } : e)),
        })),
      'document.graph.entities.0.name',
    ],
    [
      'an entity of an unknown type',
      (d) =>
        withGraph(d, (g) => ({
          ...g,
          entities: g.entities.map((e: Doc, i: number) => (i === 1 ? { ...e, type: 'ANIMAL' } : e)),
        })),
      'document.graph.entities.1.type',
    ],
  )

  broken.push(
    [
      'a vector owner of an unknown kind',
      (d) => ({ ...d, vectors: [...d.vectors, { ...d.vectors[0], owner: 'bogus:DOMAIN/hamburg' }] }),
      'document.vectors.7.owner',
    ],
    [
      'a vector owner naming no item of the document',
      (d) => ({ ...d, vectors: [...d.vectors, { ...d.vectors[0], owner: 'knowledge:DOMAIN/nowhere' }] }),
      'document.vectors.7.owner',
    ],
    [
      'a vector whose bytes do not fit its dimensions',
      (d) => ({
        ...d,
        vectors: d.vectors.map((v: Doc, i: number) => (i === 0 ? { ...v, dimensions: 3 } : v)),
      }),
      'document.vectors.0.vector',
    ],
    [
      'a recallTopK out of range',
      (d) => ({ ...d, settings: { settings: { recallTopK: 0 }, contextBudgets: {} } }),
      'document.settings.settings.recallTopK',
    ],
    [
      'a fullMessageWindow out of range',
      (d) => ({ ...d, parameters: [{ key: 'fullMessageWindow', value: 500 }] }),
      'document.parameters.fullMessageWindow',
    ],
    [
      'an unknown parameter',
      (d) => ({ ...d, parameters: [{ key: 'bogus', value: 1 }] }),
      'document.parameters.0.key',
    ],
    [
      'a privacy pattern with a backreference',
      (d) => ({
        ...d,
        privacyPolicy: { mode: 'REDACT'.toLowerCase(), patterns: [{ name: 'twice', pattern: '(a)\\1' }] },
      }),
      'document.privacyPolicy.patterns.0.pattern',
    ],
  )

  it('refuses a bogus vector owner with a typed error naming the field and the owner', async () => {
    const report = await importInto('agent-src', {
      ...original,
      vectors: [...original.vectors, { ...original.vectors[0], owner: 'bogus:DOMAIN/k' }],
    })
    expect(report).toMatchObject({
      __typename: 'ValidationError',
      issues: [
        {
          field: 'document.vectors.7.owner',
          message: '"bogus:DOMAIN/k" must be kind:ref with kind one of memory, message, knowledge',
          limit: null,
        },
      ],
    })
  })

  it.each(broken)('refuses %s, naming the field, and changes nothing', async (_name, breakIt, field) => {
    const before = await fingerprint('agent-src')
    const report = await importInto('agent-src', breakIt(original))
    expect(report.__typename).toBe('ValidationError')
    expect(report.issues.map((i: { field: string }) => i.field)).toContain(field)
    expect(await fingerprint('agent-src')).toEqual(before)
  })

  describe('privacy', () => {
    afterAll(() => t.gql(POLICY, { a: 'agent-src', m: 'REDACT' }))

    const withSsn: [string, (doc: Doc) => Doc, string][] = [
      [
        'a memory',
        (d) => ({
          ...d,
          memories: d.memories.map((m: Doc, i: number) =>
            i === 2 ? { ...m, content: 'Her SSN is 123-45-6789' } : m,
          ),
        }),
        'document.memories.2.content',
      ],
      [
        'a knowledge value',
        (d) => ({ ...d, knowledge: [{ ...d.knowledge[0], value: 'ssn 123-45-6789' }] }),
        'document.knowledge.0.value',
      ],
      [
        "a message's memory entry",
        (d) => ({
          ...d,
          sessions: d.sessions.map((s: Doc, i: number) =>
            i === 1
              ? {
                  ...s,
                  messages: [
                    { ...s.messages[0], entry: { ...s.messages[0].entry, content: 'SSN 123-45-6789' } },
                  ],
                }
              : s,
          ),
        }),
        'document.sessions.1.messages.0.entry.content',
      ],
      [
        "a memory's metadata",
        (d) => ({
          ...d,
          memories: [{ ...d.memories[1], metadata: { note: 'ssn 123-45-6789' } }],
          vectors: [],
        }),
        'document.memories.0.metadata.note',
      ],
      [
        "a graph entity's alias",
        (d) => ({
          ...d,
          graph: {
            ...d.graph,
            entities: d.graph.entities.map((e: Doc, i: number) =>
              i === 0 ? { ...e, aliases: ['Dana', 'SSN 123-45-6789'] } : e,
            ),
          },
        }),
        'document.graph.entities.0.aliases.1',
      ],
    ]

    it.each(withSsn)(
      'a REJECT policy refuses an SSN in %s, naming the field',
      async (_name, addSsn, field) => {
        await t.gql(POLICY, { a: 'agent-src', m: 'REJECT' })
        const before = await fingerprint('agent-src')
        const report = await importInto('agent-src', addSsn(original))
        expect(report).toEqual({
          __typename: 'ValidationError',
          message: expect.stringContaining(field),
          issues: [{ field, message: 'contains a US social security number', limit: 'ssn' }],
        })
        expect(await fingerprint('agent-src')).toEqual(before)
      },
    )

    it('a REDACT policy redacts messages and their entries alike, and embeds them again', async () => {
      await t.gql(POLICY, { a: 'agent-src', m: 'REDACT' })
      await createAgentKey(t, 'agent-redact')
      const secret = (m: Doc) => ({
        ...m,
        content: 'my SSN is 123-45-6789',
        entry: { ...m.entry, content: 'my SSN is 123-45-6789' },
      })
      const kept = original.sessions[1]
      const doc = {
        ...original,
        sessions: [{ ...kept, messages: [secret(kept.messages[0])] }],
        // Vectors of the messages left out would name no message of the document.
        vectors: original.vectors.filter(
          (v: Doc) => !v.owner.startsWith('message:') || v.owner === `message:${kept.conversationId}#1`,
        ),
      }
      await t.gql(POLICY, { a: 'agent-redact', m: 'REDACT' })
      expect(await importInto('agent-redact', doc)).toMatchObject({ messages: 1, vectors: 4 })
      const rows = JSON.stringify([
        await t.db.message.findMany({ where: { agentId: 'agent-redact' } }),
        await t.db.memoryEntry.findMany({ where: { agentId: 'agent-redact' } }),
      ])
      expect(rows).not.toContain('6789')
      expect(rows.match(/my SSN is \[REDACTED:ssn\]/g)).toHaveLength(2)
      // The document's vector was of the unredacted text: it was not taken.
      const vectors = await t.db.embedding.count({ where: { agentId: 'agent-redact', kind: 'message' } })
      expect(vectors).toBe(0)
    })
  })

  describe('settings, parameters, privacy policy and snapshots', () => {
    it('round-trips non-default settings, parameters, policy and snapshots byte for byte', async () => {
      const keyFrom = await createAgentKey(t, 'agent-tuned')
      await createAgentKey(t, 'agent-tuned-copy')
      const settings = await t.gql(
        `mutation { updateMemorySettings(settings: { recallTopK: 17 }) { __typename ... on MemorySettings { recallTopK } } }`,
        {},
        keyFrom,
      )
      expect(settings.data.updateMemorySettings).toEqual({ __typename: 'MemorySettings', recallTopK: 17 })
      const params = await t.gql(
        `mutation { setOptimizerParameters(agentId: "agent-tuned", input: { fullMessageWindow: 11 }) { __typename ... on OptimizerParameters { fullMessageWindow } } }`,
      )
      expect(params.data.setOptimizerParameters).toEqual({
        __typename: 'OptimizerParameters',
        fullMessageWindow: 11,
      })
      await t.gql(
        `mutation { setPrivacyPolicy(agentId: "agent-tuned", mode: REDACT, patterns: [{ name: "employee_id", pattern: "EMP-\\\\d{5}" }]) { __typename } }`,
      )
      await t.gql(ADD, { c: 'c1', r: 'USER', t: 'EMP-12345 asked about the harbour' }, keyFrom)
      await t.db.optimizationSnapshot.create({
        data: {
          agentId: 'agent-tuned',
          tokensBefore: 900,
          tokensAfter: 400,
          entriesCompressed: 3,
          entriesDropped: 1,
          entriesPromoted: 0,
          usageRatio: 0.45,
          compressionTriggerRatio: 0.7,
          fullMessageWindow: 11,
          minRelevanceScore: 0.3,
          timestamp: t.clock.now(),
        },
      })
      const exported = await t.gql(
        `query { exportMemory(agentId: "agent-tuned", includeSnapshots: true) { ... on MemoryExport { document } } }`,
      )
      const doc = exported.data.exportMemory.document as Doc
      expect(doc.settings.settings).toEqual({ recallTopK: 17 })
      expect(doc.parameters).toContainEqual({ key: 'fullMessageWindow', value: 11 })
      expect(doc.privacyPolicy).toEqual({
        mode: 'redact',
        patterns: [{ name: 'employee_id', pattern: 'EMP-\\d{5}' }],
      })
      expect(doc.snapshots).toHaveLength(1)
      expect(doc.sessions[0].messages[0].content).toBe('[REDACTED:employee_id] asked about the harbour')
      // Without the flag the run history stays home.
      const plain = await t.gql(
        `query { exportMemory(agentId: "agent-tuned") { ... on MemoryExport { document } } }`,
      )
      expect(plain.data.exportMemory.document.snapshots).toBeUndefined()

      expect((await importInto('agent-tuned-copy', doc)).__typename).toBe('ImportReport')
      const again = await t.gql(
        `query { exportMemory(agentId: "agent-tuned-copy", includeSnapshots: true) { ... on MemoryExport { document } } }`,
      )
      const copy = again.data.exportMemory.document as Doc
      expect(JSON.stringify({ ...copy, agent: null })).toBe(JSON.stringify({ ...doc, agent: null }))
      const read = await t.gql(
        `{ memorySettings(agentId: "agent-tuned-copy") { ... on MemorySettings { recallTopK } }
           agents { id privacyPolicy { mode patterns { name pattern } } } }`,
      )
      expect(read.data.memorySettings.recallTopK).toBe(17)
      expect(read.data.agents.find((a: Doc) => a.id === 'agent-tuned-copy').privacyPolicy).toEqual({
        mode: 'REDACT',
        patterns: [{ name: 'employee_id', pattern: 'EMP-\\d{5}' }],
      })
      const copyParams = await t.app.services.parameters.load('agent-tuned-copy')
      expect(copyParams.fullMessageWindow).toBe(11)
    })

    it("refuses an agent key's import of a privacy policy other than its agent's", async () => {
      const key = await createAgentKey(t, 'agent-self')
      const doc = { ...original, privacyPolicy: { mode: 'allow', patterns: [] } }
      const r = await t.gql(IMPORT, { d: doc, m: 'REPLACE' }, key)
      expect(r.data.importMemory).toMatchObject({
        __typename: 'ValidationError',
        issues: [{ field: 'document.privacyPolicy' }],
      })
      const agent = await t.db.agent.findUniqueOrThrow({ where: { id: 'agent-self' } })
      expect(agent.privacyMode).toBe('redact')
    })
  })

  describe('backups and restore', () => {
    it('writes a backup file that backups lists', async () => {
      // A copy of the SQLite file, or a logical export of the Postgres database (engram-….pg.jsonl.gz).
      const extension = t.postgresUrl ? '.pg.jsonl.gz' : '.db'
      const made = await t.gql(BACKUP)
      expect(made.data.backupDatabase).toMatchObject({
        __typename: 'Backup',
        name: `engram-2026-01-15T10-03-02-000Z${extension}`,
        createdAt: '2026-01-15T10:03:02.000Z',
      })
      const file = path.join(t.dir, 'backups', made.data.backupDatabase.name)
      expect(fs.statSync(file).size).toBe(made.data.backupDatabase.bytes)
      expect(made.data.backupDatabase.bytes).toBeGreaterThan(0)
      // The same second again: a second file, not an overwrite.
      const again = await t.gql(BACKUP)
      expect(again.data.backupDatabase.name).toBe(`engram-2026-01-15T10-03-02-000Z-1${extension}`)
      const list = await t.gql(BACKUPS)
      expect(list.errors).toBeUndefined()
      expect(list.data.backups.data.map((b: { name: string }) => b.name)).toEqual(
        [`engram-2026-01-15T10-03-02-000Z${extension}`, `engram-2026-01-15T10-03-02-000Z-1${extension}`].sort(
          (a, b) => b.localeCompare(a),
        ),
      )
    })

    it('restores: later changes are gone, API keys keep working', async () => {
      t.clock.advance(60_000)
      const before = (await exportOf('agent-src')).document
      const backup = (await t.gql(BACKUP)).data.backupDatabase.name as string
      // Changes after the backup: a memory, a fact, a message, a new agent, a cleared agent.
      t.clock.advance(60_000)
      const added = await t.gql(
        CREATE,
        { input: { content: 'Written after the backup', category: 'FACT' } },
        keySource,
      )
      expect(added.data.createMemory.outcome).toBe('STORED')
      await t.gql(ADD, { c: 'c1', r: 'USER', t: 'A message after the backup' }, keySource)
      const keyLate = await createAgentKey(t, 'agent-late')
      await t.gql(CLEAR, { a: 'agent-copy', c: 'CLEAR agent-copy' })
      expect(await t.db.memoryItem.count({ where: { agentId: 'agent-copy' } })).toBe(0)

      const restored = await t.gql(RESTORE, { n: backup })
      expect(restored.errors).toBeUndefined()
      expect(restored.data.restoreDatabase).toMatchObject({ __typename: 'RestorePayload', name: backup })
      expect(restored.data.restoreDatabase.tables).toBeGreaterThan(5)

      // Keys still work (the admin's and the agents'), and see the state of the backup.
      expect((await exportOf('agent-src', keySource)).document).toEqual(before)
      expect((await exportOf('agent-copy', keyCopy)).document.memories).toHaveLength(3)
      expect(await t.db.memoryItem.count({ where: { content: 'Written after the backup' } })).toBe(0)
      expect(await t.db.agent.findUnique({ where: { id: 'agent-late' } })).toBeNull()
      // The key of an agent the backup does not have went with it.
      expect((await t.gql(`{ viewer { agentId } }`, {}, keyLate)).status).toBe(401)
      // Search uses the restored rows, not what was cached before.
      const search = await t.gql(
        `{ search(input: { query: "written after the backup", scopes: [MEMORIES, MESSAGES] }) { ... on SearchResult { hits { text } } } }`,
        {},
        keySource,
      )
      expect(JSON.stringify(search.data.search.hits)).not.toContain('after the backup')
      const harbour = await t.gql(
        `{ search(input: { query: "harbour", scopes: [MESSAGES], strategy: LEXICAL }) { ... on SearchResult { hits { text } } } }`,
        {},
        keySource,
      )
      expect(harbour.data.search.hits.map((h: { text: string }) => h.text)).toEqual([
        'Hamburg has a lovely harbour',
      ])
      // Sessions continue from the restored rows, not from what was cached before.
      await t.gql(ADD, { c: 'c1', r: 'USER', t: 'Back to where we were' }, keySource)
      const session = await t.gql(
        `{ session(conversationId: "c1") { ... on Session { messageCount messages { edges { node { content } } } } } }`,
        {},
        keySource,
      )
      expect(session.data.session.messageCount).toBe(3)
      expect(session.data.session.messages.edges.map((e: any) => e.node.content)).toEqual([
        'I moved from Berlin to Hamburg last spring',
        'Hamburg has a lovely harbour',
        'Back to where we were',
      ])
    })

    it('refuses a restore of a name that is not a backup', async () => {
      const before = await fingerprint('agent-src')
      for (const name of ['engram-2099-01-01T00-00-00-000Z.db', '../test.db', 'test.db']) {
        const r = await t.gql(RESTORE, { n: name })
        expect(r.data.restoreDatabase).toEqual({
          __typename: 'ValidationError',
          message: expect.stringContaining(name),
          issues: [{ field: 'name', message: expect.stringContaining(name) }],
        })
      }
      expect(await fingerprint('agent-src')).toEqual(before)
    })

    it('refuses backups, restore and clearing to agent keys', async () => {
      const name = (await t.gql(BACKUPS)).data.backups.data[0].name
      const before = await fingerprint('agent-src')
      const files = fs.readdirSync(path.join(t.dir, 'backups'))
      expect((await t.gql(BACKUPS, {}, keySource)).data.backups.__typename).toBe('ForbiddenError')
      expect((await t.gql(BACKUP, {}, keySource)).data.backupDatabase.__typename).toBe('ForbiddenError')
      expect((await t.gql(RESTORE, { n: name }, keySource)).data.restoreDatabase.__typename).toBe(
        'ForbiddenError',
      )
      expect((await t.gql(CLEAR, { c: 'CLEAR agent-src' }, keySource)).data.clearAll.__typename).toBe(
        'ForbiddenError',
      )
      expect(
        (await t.gql(CLEAR, { a: 'agent-src', c: 'CLEAR agent-src' }, keySource)).data.clearAll.__typename,
      ).toBe('ForbiddenError')
      expect(fs.readdirSync(path.join(t.dir, 'backups'))).toEqual(files)
      expect(await fingerprint('agent-src')).toEqual(before)
    })
  })

  describe('clearAll', () => {
    it('needs the exact confirmation; a wrong one deletes nothing', async () => {
      const before = await Promise.all(['agent-src', 'agent-copy'].map(fingerprint))
      const wrong: [string | null, string, string][] = [
        ['agent-copy', 'CLEAR agent-src', 'CLEAR agent-copy'],
        ['agent-copy', 'clear agent-copy', 'CLEAR agent-copy'],
        ['agent-copy', 'CLEAR agent-copy ', 'CLEAR agent-copy'],
        ['agent-copy', 'CLEAR ALL AGENTS', 'CLEAR agent-copy'],
        [null, 'CLEAR agent-copy', 'CLEAR ALL AGENTS'],
        [null, '', 'CLEAR ALL AGENTS'],
      ]
      for (const [agentId, confirm, expected] of wrong) {
        const r = await t.gql(CLEAR, { a: agentId, c: confirm })
        expect(r.data.clearAll).toEqual({
          __typename: 'ValidationError',
          message: expect.stringContaining(expected),
          issues: [{ field: 'confirm', message: expect.stringContaining(expected), limit: expected }],
        })
      }
      expect(await Promise.all(['agent-src', 'agent-copy'].map(fingerprint))).toEqual(before)
    })

    it("clears one agent's memory; the agent and its key stay, other agents keep theirs", async () => {
      const other = await fingerprint('agent-src')
      // What is cleared was there: the graph and trajectory memory too.
      expect((await rowCounts('agent-copy')).graphEntities).toBeGreaterThan(0)
      expect((await rowCounts('agent-copy')).trajectories).toBeGreaterThan(0)
      const r = await t.gql(CLEAR, { a: 'agent-copy', c: 'CLEAR agent-copy' })
      expect(r.data.clearAll).toEqual({
        __typename: 'ClearAllPayload',
        memories: 3,
        knowledge: 1,
        sessions: 2,
      })
      expect(await rowCounts('agent-copy')).toEqual({
        memories: 0,
        knowledge: 0,
        sessions: 0,
        messages: 0,
        entries: 0,
        embeddings: 0,
        graphEntities: 0,
        graphRelationships: 0,
        graphEvidence: 0,
        runs: 0,
        trajectories: 0,
        appFacts: 0,
      })
      expect(await t.db.agent.findUnique({ where: { id: 'agent-copy' } })).not.toBeNull()
      expect((await t.gql(`{ viewer { agentId } }`, {}, keyCopy)).data.viewer.agentId).toBe('agent-copy')
      expect((await exportOf('agent-copy', keyCopy)).document).toMatchObject({
        memories: [],
        knowledge: [],
        sessions: [],
        vectors: [],
      })
      expect(await fingerprint('agent-src')).toEqual(other)
    })

    it('clears every agent with "CLEAR ALL AGENTS"', async () => {
      const agents = (await t.db.agent.findMany({ orderBy: { id: 'asc' } })).map((a) => a.id)
      expect(await t.db.memoryItem.count()).toBeGreaterThan(0)
      const r = await t.gql(CLEAR, { c: 'CLEAR ALL AGENTS' })
      expect(r.data.clearAll).toMatchObject({ __typename: 'ClearAllPayload' })
      expect(r.data.clearAll.memories).toBeGreaterThanOrEqual(9)
      for (const table of [
        'memoryItem',
        'knowledge',
        'session',
        'message',
        'memoryEntry',
        'embedding',
        'graphEntity',
        'graphEntityTerm',
        'graphRelationship',
        'graphEvidence',
      ] as const)
        expect(await (t.db[table] as { count(): Promise<number> }).count()).toBe(0)
      expect((await t.db.agent.findMany({ orderBy: { id: 'asc' } })).map((a) => a.id)).toEqual(agents)
      expect((await t.gql(`{ viewer { agentId } }`, {}, keySource)).data.viewer.agentId).toBe('agent-src')
    })
  })
})
