import {
  CONTRACT_LIMITS,
  catalog,
  type InputOf,
  OPERATION_NAMES,
  type OperationName,
  type Result,
} from '@engram/contract'
import {
  type Clock,
  createTokenCounter,
  ProfileSettingsSchema,
  SUMMARY_STRATEGIES,
  SummarySettingsSchema,
  seededRandom,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { createOperations, type OperationHandlers, operationHandlers } from './operations.ts'
import type { Principal } from './principal.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const operator: Principal = { kind: 'operator' }
const agentA = { kind: 'agent', agentId: 'agent-a' } as const satisfies Principal
const agentB = { kind: 'agent', agentId: 'agent-b' } as const satisfies Principal
/** Each agent's running run: the ids differ, so A naming B's finds nothing of its own by chance. */
const runIdOf = (agentId: string) => `${agentId}-run`
const SHOP = 'shop.example.com'

/** The engine on the in-memory storage, agents A and B with a conversation, a memory and a fact each. */
async function seeded() {
  const engine = createEngine({
    storage: createInMemoryStorage(clock),
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {} },
    optimizer: { intervalMs: 0 },
    random: seededRandom(16),
  })
  const ops = createOperations(engine)
  const records: Record<
    string,
    {
      memoryId: string
      knowledgeId: string
      entityId: string
      placeId: string
      relationshipId: string
      runId: string
      trajectoryId: string
      factId: string
      selectorId: string
      hintId: string
      poolId: string
      poolMemoryId: string
    }
  > = {}
  for (const principal of [agentA, agentB] as const) {
    const agentId = principal.agentId
    await ops.createAgent(operator, { id: agentId })
    await ops.addMessages(principal, {
      conversationId: 'c1',
      messages: [
        { role: 'USER', content: `${agentId} says: my sister Lena lives in Berlin.` },
        { role: 'ASSISTANT', content: 'Noted.' },
      ],
    })
    const memory = await ops.createMemory(principal, {
      content: `${agentId} works as a nurse`,
      category: 'FACT',
    })
    const fact = await ops.storeKnowledge(principal, {
      category: 'WEBSITE_KNOWLEDGE',
      key: `${agentId}.example.com login`,
      value: '#email',
    })
    // A small graph: Lena (a person) lives in Berlin, entered by the operator.
    const lena = await ops.createGraphEntity(operator, {
      agentId,
      type: 'PERSON',
      name: 'Lena',
      aliases: ['Lena Kim'],
    })
    const berlin = await ops.createGraphEntity(operator, { agentId, type: 'PLACE', name: 'Berlin' })
    const livesIn = await ops.createGraphRelationship(operator, {
      agentId,
      sourceId: lena.id,
      relation: 'lives in',
      targetId: berlin.id,
    })
    // Trajectory memory: a running run on the shop, which recorded a trajectory, a fact and a
    // selector, and a hint of the default scope.
    const run = await ops.startRun(principal, {
      runId: runIdOf(agentId),
      goal: 'Search for smart watch reviews',
      startUrl: `https://${SHOP}/`,
    })
    const trajectory = await ops.recordTrajectory(principal, {
      domain: SHOP,
      runId: run.id,
      goal: 'Search for smart watch reviews',
      steps: [
        { action: 'click', selector: '#search', url: `https://${SHOP}/`, verified: true },
        { action: 'type', selector: '#search', value: 'smart watch', verified: true },
      ],
    })
    const [shopFact] = await ops.recordKnowledge(principal, {
      domain: SHOP,
      runId: run.id,
      facts: [{ type: 'QUIRK', key: 'modals', value: `${agentId} sees modals in shadow DOM` }],
    })
    const [selector] = await ops.recordSelector(principal, {
      domain: SHOP,
      runId: run.id,
      selectors: [{ element: 'button "Search"', selector: '#search' }],
    })
    const hint = await ops.addRunHint(principal, { text: `${agentId}: close cookie banners first` })
    // A shared pool each agent contributes to (issue 17).
    const pool = await ops.createPool(operator, {
      name: `${agentId} docs`,
      members: [{ agentId, role: 'CONTRIBUTOR' }],
    })
    const contributed = await ops.contributeToPool(principal, {
      poolId: pool.id,
      content: `${agentId}: WebGPU requires WGSL shaders, not GLSL`,
      category: 'FACT',
    })
    records[agentId] = {
      runId: run.id,
      trajectoryId: trajectory.id,
      factId: (shopFact as { id: string }).id,
      selectorId: (selector as { id: string }).id,
      hintId: hint.id,
      poolId: pool.id,
      poolMemoryId: contributed.memory.id,
      memoryId: memory.memory.id,
      knowledgeId: fact.id,
      entityId: lena.id,
      placeId: berlin.id,
      relationshipId: livesIn.id,
    }
  }
  const document = (await ops.exportMemory(agentA, {})).document
  return {
    engine,
    ops,
    a: records['agent-a'] as (typeof records)[string],
    b: records['agent-b'] as (typeof records)[string],
    document,
  }
}

type Seeded = Awaited<ReturnType<typeof seeded>>

/**
 * A valid input of every operation, for agent A's records (`mine`), typed against the catalog: a
 * catalog entry without a sample fails the type check, as one without a handler does.
 */
function samples(mine: Seeded['a'], document: Record<string, unknown>): { [N in OperationName]: InputOf<N> } {
  return {
    addMessage: { conversationId: 'c1', role: 'USER', content: 'And I live in Paris.' },
    addMessages: { conversationId: 'c2', messages: [{ role: 'USER', content: 'hello' }] },
    session: { conversationId: 'c1' },
    sessions: { first: 10 },
    deleteSession: { conversationId: 'c1' },
    contextWindow: { conversationId: 'c1' },
    createMemory: { content: 'Prefers tea', category: 'PREFERENCE' },
    rememberThis: { text: 'Remember that I prefer tabs' },
    syncMemory: {},
    classify: { content: 'My name is John. Remember that I am allergic to peanuts.' },
    memoryFormationSettings: {},
    userProfile: {},
    profileVersions: { limit: 5 },
    profileDiff: { from: 1, to: 1 },
    regenerateProfile: {},
    summaries: { conversationId: 'c1', limit: 5 },
    summarize: { conversationId: 'c1', strategy: 'SIMPLE' },
    // A summary of A's: the shape test writes one first (see summaryOf).
    summary: { id: '1' },
    formationActivity: {},
    updateMemoryFormationSettings: { settings: { summaries: { summaryRetentionDays: 30 } } },
    updateMemory: { id: mine.memoryId, importance: 0.9 },
    deleteMemory: { id: mine.memoryId },
    memories: { first: 5 },
    memory: { id: mine.memoryId },
    search: { query: 'Where does Lena live?', scopes: ['MESSAGES', 'MEMORIES', 'KNOWLEDGE'] },
    memoryContext: { query: 'what work?', buildContext: { instructions: 'Be brief.', toolCount: 1 } },
    profile: {},
    storeKnowledge: { category: 'DOMAIN', key: 'k', value: 'v' },
    updateKnowledge: { id: mine.knowledgeId, value: '#email and #password' },
    deleteKnowledge: { id: mine.knowledgeId },
    knowledge: {},
    relevantKnowledge: { text: 'log in to example.com' },
    recordKnowledgeUse: { id: mine.knowledgeId },
    graphEntities: { name: 'lena' },
    graphEntity: { id: mine.entityId },
    graphRelationships: { relation: 'Lives In', name: 'Lena' },
    graphRelationship: { id: mine.relationshipId },
    graphNeighbourhood: { entityId: mine.entityId, depth: 2 },
    graphPaths: { fromId: mine.entityId, toName: 'Berlin' },
    createGraphEntity: { agentId: 'agent-a', type: 'COMPANY', name: 'Acme Corp' },
    updateGraphEntity: { agentId: 'agent-a', id: mine.entityId, summary: 'Sister of the user.' },
    mergeGraphEntities: { agentId: 'agent-a', fromId: mine.placeId, intoId: mine.entityId },
    deleteGraphEntity: { agentId: 'agent-a', id: mine.placeId },
    createGraphRelationship: {
      agentId: 'agent-a',
      sourceId: mine.placeId,
      relation: 'home of',
      targetId: mine.entityId,
    },
    updateGraphRelationship: { agentId: 'agent-a', id: mine.relationshipId, confidence: 0.6 },
    retireGraphRelationship: { agentId: 'agent-a', id: mine.relationshipId, reason: 'wrong city' },
    deleteGraphRelationship: { agentId: 'agent-a', id: mine.relationshipId },
    optimizerStatus: {},
    runOptimizer: { conversationId: 'c1' },
    exportMemory: {},
    importMemory: { document, mode: 'MERGE' },
    backupDatabase: {},
    backups: {},
    restoreDatabase: { name: 'nightly.db' },
    createApiKey: { agentId: 'agent-a', label: 'ci' },
    apiKeys: {},
    revokeApiKey: { id: 'k1' },
    agents: {},
    createAgent: { id: 'agent-c' },
    watchOptimizerSnapshots: {},
    watchEmbeddingProgress: {},
    formationActivityEvents: {},
    // Trajectory memory (issue 16), on A's running run and records.
    startRun: { goal: 'Compare smart watch prices', startUrl: `https://${SHOP}/deals`, sessionId: 'proj_1' },
    reportRunProgress: { runId: mine.runId, currentUrl: `https://${SHOP}/search?q=watch`, turnCount: 3 },
    completeRun: {
      runId: mine.runId,
      outcome: 'Found three reviews',
      steps: [{ action: 'click', selector: '@e12', url: `https://${SHOP}/search`, verified: true }],
      facts: [{ type: 'TIMING', key: 'search', value: 'results take 2s' }],
      selectors: [{ element: 'link "Reviews"', selector: 'a.reviews' }],
    },
    failRun: { runId: mine.runId, reason: 'a captcha blocked the search' },
    resumeRun: { runId: mine.runId, goal: 'Now compare their prices' },
    forkRun: { runId: mine.runId, goal: 'Search for headphones instead' },
    run: { runId: mine.runId },
    runs: { domain: `https://${SHOP}/anything`, status: 'RUNNING', limit: 5 },
    runLineage: { runId: mine.runId },
    deleteRun: { runId: mine.runId },
    runContext: { runId: mine.runId },
    matchTrajectories: { domain: SHOP, goal: 'search for smart watch reviews' },
    recordTrajectory: {
      domain: SHOP,
      runId: mine.runId,
      goal: 'Open the cart',
      steps: [{ action: 'click', selector: '#cart' }],
    },
    trajectories: { domain: SHOP, runId: mine.runId },
    trajectory: { id: mine.trajectoryId },
    deleteTrajectory: { id: mine.trajectoryId },
    runSessions: { domain: SHOP },
    recordKnowledge: {
      domain: SHOP,
      runId: mine.runId,
      facts: [{ type: 'PATTERN', key: 'login', value: 'click login, fill email, submit' }],
    },
    appFacts: { domain: SHOP, minConfidence: 0.5 },
    deleteAppFact: { id: mine.factId },
    recordSelector: {
      domain: SHOP,
      runId: mine.runId,
      selectors: [{ element: 'button "Search"', selector: '#search', outcome: 'FAILURE' }],
    },
    knownSelectors: { domain: SHOP, element: 'button "Search"' },
    deleteKnownSelector: { id: mine.selectorId },
    runHints: {},
    addRunHint: { text: 'Prefer the site search to the menus' },
    updateRunHint: { id: mine.hintId, text: 'Close cookie banners before anything else' },
    deleteRunHint: { id: mine.hintId },
    runDomains: {},
    deleteRunDomain: { domain: SHOP },
    clearRunMemoryScope: { scope: 'default' },
    importAgentMemory: { files: [] },
    exportAgentMemory: {},
    runEvents: { runId: mine.runId },
    maintenanceStatus: {},
    maintenanceRuns: { first: 10 },
    runMaintenance: { dryRun: true, agentId: 'agent-a' },
    maintenanceSettings: { agentId: 'agent-a' },
    updateMaintenanceSettings: { agentId: 'agent-a', retentionDays: 30 },
    createPool: { name: 'technical docs', members: [{ agentId: 'agent-a', role: 'READER' }] },
    updatePool: { id: mine.poolId, description: 'What the team learnt about WebGPU' },
    deletePool: { id: mine.poolId },
    addPoolMember: { poolId: mine.poolId, agentId: 'agent-b', role: 'READER' },
    removePoolMember: { poolId: mine.poolId, agentId: 'agent-a', removeContributions: true },
    pools: {},
    pool: { id: mine.poolId },
    poolMemories: { poolId: mine.poolId, first: 10 },
    queryPool: { poolId: mine.poolId, query: 'how do shaders work in WebGPU?' },
    contributeToPool: {
      poolId: mine.poolId,
      content: 'WebGPU compute passes dispatch workgroups',
      category: 'FACT',
      source: 'MDN documentation',
    },
    removePoolMemory: { poolId: mine.poolId, memoryId: mine.poolMemoryId },
    syncPoolToAgent: { poolId: mine.poolId },
    serverMetrics: { windowSeconds: 600 },
    workingContext: {},
    recentMemory: { limit: 5 },
    appendWorkingContext: {
      messages: [{ role: 'USER', content: 'Find me a flight to Rome' }],
      conversationId: 'c1',
    },
    setWorkingScratchpad: { scratchpad: 'plan: search flights, then hotels' },
    recordToolResult: { toolCallId: 'call-1', name: 'search_flights', content: 'AZ 123 at 9:40' },
    flushWorkingContext: {},
    clearWorkingContext: {},
  }
}

/** Runs one operation and answers its Result (a subscription: its first event, the run that makes one). */
async function run(
  s: Seeded,
  name: OperationName,
  principal: Principal,
  input: unknown,
): Promise<Result<unknown>> {
  if (catalog[name].kind !== 'subscription') return s.ops.call(name as never, principal, input)
  const stream = s.ops.stream(name as 'watchOptimizerSnapshots', principal, input)
  const first = stream.next()
  // Something to watch: a run of the principal's agent (or of A for the operator).
  const runner = principal.kind === 'agent' ? principal : agentA
  if (name === 'watchOptimizerSnapshots') await s.ops.runOptimizer(runner, {})
  if (name === 'watchEmbeddingProgress') s.engine.embeddings.reembed()
  // Formation work of the agent: the seeded conversation's turns extracted now.
  if (name === 'formationActivityEvents') await s.ops.syncMemory(runner, {})
  // A progress report of the agent's own running run.
  if (name === 'runEvents')
    await s.ops.reportRunProgress(runner, { runId: runIdOf(runner.agentId), turnCount: 1 })
  const step = await first
  await stream.return?.()
  return step.done ? { ok: false, error: { code: 'INTERNAL', message: 'the stream ended' } } : step.value
}

const userOperations = OPERATION_NAMES.filter((name) => !catalog[name].admin)
const adminOperations = OPERATION_NAMES.filter((name) => catalog[name].admin)

describe('the operations layer (createOperations)', () => {
  it('has one handler per catalog entry, and the type check requires each', async () => {
    const { engine, ops } = await seeded()
    const handlers = operationHandlers(engine)
    expect(Object.keys(handlers).sort()).toEqual([...OPERATION_NAMES].sort())
    for (const name of OPERATION_NAMES) expect(typeof ops[name], name).toBe('function')
    const { addMessage: _left, ...incomplete } = handlers
    // @ts-expect-error a catalog entry without a handler is a type error
    const missing: OperationHandlers = incomplete
    expect(missing).not.toHaveProperty('addMessage')
  })

  // A fresh seeded engine per operation (about a hundred of them): seconds on a loaded machine.
  it('answers every operation in exactly the catalog output shape', async () => {
    for (const name of OPERATION_NAMES) {
      const s = await seeded()
      const input = samples(s.a, s.document)[name]
      const principal = catalog[name].admin ? operator : agentA
      // A diff needs a version to compare: the seeded agent has memories but no profile built yet.
      if (name === 'profileDiff') await s.ops.regenerateProfile(agentA, {})
      const made = name === 'summary' ? await s.ops.summarize(agentA, { conversationId: 'c1' }) : null
      const result = await run(s, name, principal, made?.summary ? { id: made.summary.id } : input)
      // No backups on the in-memory storage; restoring one that does not exist is NOT_FOUND or
      // VALIDATION; revoking an unknown key is NOT_FOUND: each a typed failure, never INTERNAL.
      if (['backupDatabase', 'backups', 'restoreDatabase', 'revokeApiKey'].includes(name) && !result.ok) {
        expect(result.error.code, `${name}: ${result.error.message}`).not.toBe('INTERNAL')
        continue
      }
      expect(result.ok, `${name}: ${JSON.stringify(result)}`).toBe(true)
      if (!result.ok) continue
      const output = catalog[name].output
      expect(output.safeParse(result.data).success, name).toBe(true)
      // Nothing beyond the catalog's fields: parsing (which drops unknown keys) changes nothing.
      expect(output.parse(result.data), name).toEqual(result.data)
    }
  }, 30_000)

  it('checks input against the catalog: VALIDATION naming the field and the limit', async () => {
    const { ops } = await seeded()
    const tooLong = await ops.call('addMessage', agentA, {
      conversationId: 'c1',
      role: 'USER',
      content: 'x'.repeat(CONTRACT_LIMITS.maxContentChars + 1),
    })
    expect(!tooLong.ok && tooLong.error).toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'content', limit: CONTRACT_LIMITS.maxContentChars })],
    })
    const batch = await ops.call('addMessages', agentA, {
      conversationId: 'c1',
      messages: Array.from({ length: CONTRACT_LIMITS.maxBatchMessages + 1 }, () => ({
        role: 'USER',
        content: 'x',
      })),
    })
    expect(!batch.ok && batch.error.issues).toEqual([
      expect.objectContaining({ field: 'messages', limit: CONTRACT_LIMITS.maxBatchMessages }),
    ])
    const page = await ops.call('memories', agentA, { first: CONTRACT_LIMITS.maxPageSize + 1 })
    expect(!page.ok && page.error.issues).toEqual([
      expect.objectContaining({ field: 'first', limit: CONTRACT_LIMITS.maxPageSize }),
    ])
    // The thrown form carries the same issues (core's ValidationError).
    await expect(ops.search(agentA, { query: 'q', limit: 0 })).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'limit', limit: 1 })],
    })
    const stream = ops.stream('watchOptimizerSnapshots', agentA, { agentId: 'Not A Slug' })
    const refused = await stream.next()
    expect(!refused.done && !refused.value.ok && refused.value.error.code).toBe('VALIDATION')
    expect((await stream.next()).done).toBe(true)
  })

  it.each(adminOperations)('%s refuses an agent (FORBIDDEN) and does nothing', async (name) => {
    const s = await seeded()
    const result = await run(s, name, agentA, samples(s.a, s.document)[name])
    expect(!result.ok && result.error).toMatchObject({
      code: 'FORBIDDEN',
      message: 'this operation needs an admin key',
    })
    expect((await s.ops.agents(operator)).map((a) => a.id)).toEqual(['agent-a', 'agent-b'])
    expect(await s.ops.apiKeys(operator, {})).toEqual([])
  })

  it.each(userOperations)('%s: agent A naming agent B is FORBIDDEN', async (name) => {
    const s = await seeded()
    const input = samples(s.a, s.document)[name]
    if (!('agentId' in catalog[name].input.shape)) {
      // agents() has no agentId: an agent sees only itself.
      const agents = await s.ops.agents(agentA)
      expect(agents.map((a) => a.id)).toEqual(['agent-a'])
      return
    }
    const result = await run(s, name, agentA, { ...input, agentId: 'agent-b' })
    expect(!result.ok && result.error.code, name).toBe('FORBIDDEN')
  })

  it.each([
    'updateMemory',
    'deleteMemory',
    'memory',
    'updateKnowledge',
    'deleteKnowledge',
    'recordKnowledgeUse',
    'graphEntity',
    'graphRelationship',
    'graphNeighbourhood',
    'graphPaths',
  ] as const)(
    "%s of agent B's record by id, as agent A, is NOT_FOUND and leaves it as it was",
    async (name) => {
      const s = await seeded()
      const theirs = samples(s.b, s.document)[name]
      const result = await s.ops.call(name, agentA, theirs)
      expect(!result.ok && result.error.code).toBe('NOT_FOUND')
      const memory = await s.ops.memory(agentB, { id: s.b.memoryId })
      expect(memory).toMatchObject({ content: 'agent-b works as a nurse', importance: 0.5 })
      const facts = await s.ops.knowledge(agentB, {})
      expect(facts.knowledge.map((k) => [k.id, k.value, k.useCount])).toEqual([
        [s.b.knowledgeId, '#email', 0],
      ])
      const edge = await s.ops.graphRelationship(agentB, { id: s.b.relationshipId })
      expect(edge).toMatchObject({ relation: 'lives in', current: true, confidence: 1 })
    },
  )

  it("answers an agent's graph reads from its own graph only", async () => {
    const s = await seeded()
    const found = await s.ops.graphEntities(agentA, { name: 'Lena' })
    expect(found.matches.map((m) => [m.entity.id, m.entity.agentId, m.score])).toEqual([
      [s.a.entityId, 'agent-a', 1],
    ])
    const around = await s.ops.graphNeighbourhood(agentA, { name: 'lena kim' })
    expect(around.nodes.map((n) => n.entity.agentId)).toEqual(['agent-a', 'agent-a'])
    expect(around.relationships.map((r) => [r.source.name, r.relation, r.target.name])).toEqual([
      ['Lena', 'lives in', 'Berlin'],
    ])
    // The operator names the agent: every graph operation takes agentId.
    const theirs = await s.ops.graphRelationships(operator, { agentId: 'agent-b' })
    expect(theirs.relationships.map((r) => r.agentId)).toEqual(['agent-b'])
  })

  it("lists, searches and assembles only the agent's own records", async () => {
    const s = await seeded()
    const own = (texts: string[]) => texts.every((t) => !t.includes('agent-b'))
    expect((await s.ops.memories(agentA, {})).memories.map((m) => m.agentId)).toEqual(['agent-a'])
    expect((await s.ops.knowledge(agentA, {})).knowledge.map((k) => k.agentId)).toEqual(['agent-a'])
    expect((await s.ops.sessions(agentA, {})).sessions.map((x) => x.agentId)).toEqual(['agent-a'])
    const hits = await s.ops.search(agentA, { query: 'nurse Lena Berlin', scopes: ['MESSAGES', 'MEMORIES'] })
    // The in-memory adapter's recall sources hold no rows of their own: what it finds, if anything,
    // must be A's (search over SQLite is checked by the SDK's contract suite).
    expect(own(hits.hits.map((h) => h.text))).toBe(true)
    // The operator lists every agent's unless it names one.
    expect((await s.ops.memories(operator, {})).totalCount).toBe(2)
    expect((await s.ops.memories(operator, { agentId: 'agent-b' })).memories.map((m) => m.agentId)).toEqual([
      'agent-b',
    ])
    const unknown = await s.ops.call('memories', operator, { agentId: 'nobody' })
    expect(!unknown.ok && unknown.error).toMatchObject({ code: 'NOT_FOUND', resource: 'Agent', id: 'nobody' })
    const unnamed = await s.ops.call('search', operator, { query: 'x' })
    expect(!unnamed.ok && unnamed.error.issues).toEqual([expect.objectContaining({ field: 'agentId' })])
  })

  it('streams an agent only its own snapshots, and ends when its agent is deleted', async () => {
    const s = await seeded()
    const mine = s.ops.stream('watchOptimizerSnapshots', agentA, {})
    const next = mine.next()
    await s.ops.runOptimizer(agentB, {})
    await s.ops.runOptimizer(agentA, {})
    const step = await next
    expect(!step.done && step.value.ok && step.value.data.agentId).toBe('agent-a')
    const after = mine.next()
    await s.engine.lifecycle.deleteAgent('agent-a')
    const ended = await after
    expect(!ended.done && !ended.value.ok && ended.value.error).toMatchObject({ code: 'FORBIDDEN' })
    expect((await mine.next()).done).toBe(true)
  })

  it('pages with the cursors it returns, as the GraphQL door does', async () => {
    const s = await seeded()
    for (const content of ['Owns a red bicycle', 'Speaks fluent Portuguese', 'Was born in Lisbon'])
      await s.ops.createMemory(agentA, { content, category: 'FACT' })
    const first = await s.ops.memories(agentA, { first: 2 })
    expect(first.totalCount).toBe(4)
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false })
    const second = await s.ops.memories(agentA, { first: 2, after: first.pageInfo.endCursor ?? undefined })
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true })
    const ids = [...first.memories, ...second.memories].map((m) => m.id)
    expect(new Set(ids).size).toBe(4)
    const bad = await s.ops.call('memories', agentA, { after: 'not-a-cursor' })
    expect(!bad.ok && bad.error.issues).toEqual([expect.objectContaining({ field: 'after' })])
  })
})

describe('memory formation through the operations (issue 13)', () => {
  it('syncMemory forms what the conversation asked to keep, for the calling agent only', async () => {
    const s = await seeded()
    await s.ops.addMessage(agentA, {
      conversationId: 'c9',
      role: 'USER',
      content: 'My name is John. Remember that I am allergic to peanuts.',
    })
    const formed = await s.ops.syncMemory(agentA, {})
    expect(formed.turns).toBeGreaterThan(0)
    expect(formed.extractors).toEqual(expect.arrayContaining(['OFFLINE']))
    const peanuts = formed.stored.find((m) => /peanuts/i.test(m.content))
    expect(peanuts).toMatchObject({ agentId: 'agent-a', sourceConversationId: 'c9', importance: 0.8 })
    // B had nothing pending past what its own sync forms; A's memory is not B's.
    const other = await s.ops.syncMemory(agentB, {})
    expect(other.stored.some((m) => /peanuts/i.test(m.content))).toBe(false)
    const listedByB = await s.ops.memories(agentB, { first: 50 })
    expect(listedByB.memories.some((m) => /peanuts/i.test(m.content))).toBe(false)
  })

  it('classify routes an explicit request to semantic memory with its importance and reasons', async () => {
    const s = await seeded()
    const routed = await s.ops.classify(agentA, { content: 'Remember that I am allergic to peanuts.' })
    expect(routed.tier).toBe('SEMANTIC')
    expect(routed.importance).toBeGreaterThanOrEqual(0.8)
    expect(routed.reasons.length).toBeGreaterThan(0)
    const chat = await s.ops.classify(agentA, { content: 'ok thanks', role: 'ASSISTANT' })
    expect(chat.tier).toBe('WORKING')
  })
})

describe('memory formation settings through the operations (issue 13 §5)', () => {
  it('reads the defaults, changes some values of one agent only, and keeps the rest', async () => {
    const s = await seeded()
    expect(await s.ops.memoryFormationSettings(agentA, {})).toEqual({
      enabled: true,
      // No model on this engine: the offline extractor, the server's model (none).
      extraction: { extractor: 'OFFLINE', model: null },
      summaries: {
        strategy: 'EXTRACTIVE',
        summaryDebounceSeconds: 60,
        summaryRetentionDays: 7,
        summarizationThresholdTokens: 50_000,
        summaryMaxTokens: 400,
      },
      profile: { profileRegenerateThreshold: 10, profileMaxTokens: 2_000 },
    })
    const changed = await s.ops.updateMemoryFormationSettings(agentA, {
      settings: {
        enabled: false,
        extraction: { model: 'llama3.1:8b' },
        summaries: { strategy: 'MAP_REDUCE', summaryRetentionDays: 30 },
        profile: { profileRegenerateThreshold: 3 },
      },
    })
    expect(changed).toMatchObject({
      enabled: false,
      extraction: { extractor: 'OFFLINE', model: 'llama3.1:8b' },
      summaries: { strategy: 'MAP_REDUCE', summaryRetentionDays: 30, summaryDebounceSeconds: 60 },
      profile: { profileRegenerateThreshold: 3, profileMaxTokens: 2_000 },
    })
    expect(await s.ops.memoryFormationSettings(agentA, {})).toEqual(changed)
    const kept = await s.ops.updateMemoryFormationSettings(agentA, { settings: { enabled: false } })
    expect(kept).toEqual(changed)
    // The services that act on them read the same values.
    expect(await s.engine.summaries.settings('agent-a')).toMatchObject({ strategy: 'map-reduce' })
    expect(await s.engine.formation.settings('agent-a')).toEqual({
      enabled: false,
      extraction: { extractor: 'offline', model: 'llama3.1:8b' },
    })
    // A null model goes back to the server's; a model left out keeps the agent's.
    const reset = await s.ops.updateMemoryFormationSettings(agentA, {
      settings: { extraction: { model: null } },
    })
    expect(reset.extraction).toEqual({ extractor: 'OFFLINE', model: null })
    const other = await s.ops.memoryFormationSettings(agentB, {})
    expect(other).toMatchObject({
      enabled: true,
      summaries: { strategy: 'EXTRACTIVE', summaryRetentionDays: 7 },
    })
    await expect(s.ops.memoryFormationSettings(agentA, { agentId: 'agent-b' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    })
  })

  it('validates the whole object first: a value out of its limits names field and limit and changes nothing', async () => {
    const s = await seeded()
    const bad = await s.ops.call('updateMemoryFormationSettings', agentA, {
      settings: {
        enabled: false,
        summaries: { summaryDebounceSeconds: 5, summaryRetentionDays: 30 },
        profile: { profileMaxTokens: 60_000 },
      },
    })
    expect(!bad.ok && bad.error.code).toBe('VALIDATION')
    expect(!bad.ok && bad.error.issues).toEqual([
      expect.objectContaining({ field: 'settings.summaries.summaryDebounceSeconds', limit: 10 }),
      expect.objectContaining({ field: 'settings.profile.profileMaxTokens', limit: 50_000 }),
    ])
    // Past the door, the engine checks the same way before writing any part.
    await expect(
      s.engine.formationSettings.update('agent-a', {
        enabled: false,
        summaries: { summaryRetentionDays: 30 },
        profile: { profileRegenerateThreshold: 101 },
      }),
    ).rejects.toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'profile.profileRegenerateThreshold', limit: 100 })],
    })
    expect(await s.ops.memoryFormationSettings(agentA, {})).toMatchObject({
      enabled: true,
      summaries: { summaryDebounceSeconds: 60, summaryRetentionDays: 7 },
      profile: { profileRegenerateThreshold: 10, profileMaxTokens: 2_000 },
    })
  })

  it('the llm extractor without a model on the server is refused naming settings.extraction.extractor', async () => {
    const s = await seeded()
    const refused = await s.ops.call('updateMemoryFormationSettings', agentA, {
      settings: { extraction: { extractor: 'LLM' }, summaries: { summaryRetentionDays: 30 } },
    })
    expect(!refused.ok && refused.error.code).toBe('VALIDATION')
    expect(!refused.ok && refused.error.issues).toEqual([
      expect.objectContaining({
        field: 'settings.extraction.extractor',
        message: expect.stringMatching(/no language model is configured/),
      }),
    ])
    // Nothing was written, the summary part included.
    expect(await s.ops.memoryFormationSettings(agentA, {})).toMatchObject({
      extraction: { extractor: 'OFFLINE' },
      summaries: { summaryRetentionDays: 7 },
    })
    const long = await s.ops.call('updateMemoryFormationSettings', agentA, {
      settings: { extraction: { model: 'm'.repeat(201) } },
    })
    expect(!long.ok && long.error.issues).toEqual([
      expect.objectContaining({ field: 'settings.extraction.model', limit: 200 }),
    ])
  })

  it("the catalog's bounds are core's (the contract has no runtime dependency on core)", () => {
    const summaries = catalog.memoryFormationSettings.output.shape.summaries.shape
    const profile = catalog.memoryFormationSettings.output.shape.profile.shape
    const bounds: [
      { safeParse(v: unknown): { success: boolean } },
      { safeParse(v: unknown): { success: boolean } },
      string,
    ][] = [
      [summaries.summaryDebounceSeconds, SummarySettingsSchema.shape.summaryDebounceSeconds, 'debounce'],
      [summaries.summaryRetentionDays, SummarySettingsSchema.shape.summaryRetentionDays, 'retention'],
      [
        summaries.summarizationThresholdTokens,
        SummarySettingsSchema.shape.summarizationThresholdTokens,
        'threshold',
      ],
      [summaries.summaryMaxTokens, SummarySettingsSchema.shape.summaryMaxTokens, 'summary size'],
      [
        profile.profileRegenerateThreshold,
        ProfileSettingsSchema.shape.profileRegenerateThreshold,
        'regenerate',
      ],
      [profile.profileMaxTokens, ProfileSettingsSchema.shape.profileMaxTokens, 'profile size'],
    ]
    const probes = [
      0, 1, 5, 9, 10, 49, 50, 99, 100, 101, 365, 366, 999, 1_000, 3_600, 3_601, 10_000, 10_001, 50_000,
      50_001, 10_000_000, 10_000_001,
    ]
    for (const [contract, core, name] of bounds)
      for (const value of probes)
        expect(contract.safeParse(value).success, `${name} ${value}`).toBe(core.safeParse(value).success)
    expect(
      catalog.memoryFormationSettings.output.shape.summaries.shape.strategy.options.map((o) =>
        o.toLowerCase().replace('_', '-'),
      ),
    ).toEqual([...SUMMARY_STRATEGIES])
  })
})

describe('summaries through the operations (issue 13 §3)', () => {
  it('summarize writes a summary of the turns not yet summarised, listed for its agent only', async () => {
    const s = await seeded()
    const made = await s.ops.summarize(agentA, { conversationId: 'c1', strategy: 'SIMPLE' })
    expect(made.summary).toMatchObject({
      agentId: 'agent-a',
      conversationId: 'c1',
      strategy: 'SIMPLE',
      writer: 'EXTRACTIVE',
      trigger: 'REQUEST',
      messageCount: 2,
    })
    expect(made.summary?.content).toMatch(/Berlin/)
    // Every turn is in a summary now: nothing new to summarise.
    expect(await s.ops.summarize(agentA, { conversationId: 'c1' })).toEqual({ summary: null })
    expect(await s.ops.summaries(agentA, {})).toEqual([made.summary])
    expect(await s.ops.summaries(agentA, { conversationId: 'other' })).toEqual([])
    expect(await s.ops.summaries(agentB, {})).toEqual([])
    await expect(s.ops.summaries(agentA, { agentId: 'agent-b' })).rejects.toMatchObject({ code: 'FORBIDDEN' })
    await expect(s.ops.summarize(agentA, { agentId: 'agent-b', conversationId: 'c1' })).rejects.toMatchObject(
      {
        code: 'FORBIDDEN',
      },
    )
    // B's own conversation c1 is B's: its summary says B's words.
    const theirs = await s.ops.summarize(agentB, { conversationId: 'c1' })
    expect(theirs.summary).toMatchObject({ agentId: 'agent-b', strategy: 'EXTRACTIVE' })
    const bad = await s.ops.call('summaries', agentA, { limit: 101 })
    expect(!bad.ok && bad.error.issues).toEqual([expect.objectContaining({ field: 'limit', limit: 100 })])
  })

  it("summary answers one of the agent's summaries by id; another agent's id is NOT_FOUND", async () => {
    const s = await seeded()
    const mine = (await s.ops.summarize(agentA, { conversationId: 'c1' })).summary
    const theirs = (await s.ops.summarize(agentB, { conversationId: 'c1' })).summary
    if (!mine || !theirs) throw new Error('no summary written')
    expect(await s.ops.summary(agentA, { id: mine.id })).toEqual(mine)
    expect(await s.ops.summary(operator, { agentId: 'agent-b', id: theirs.id })).toEqual(theirs)
    for (const id of [theirs.id, '999999', 'not-an-id']) {
      const missing = await s.ops.call('summary', agentA, { id })
      expect(!missing.ok && missing.error).toMatchObject({ code: 'NOT_FOUND', resource: 'Summary', id })
    }
    // The operator naming A does not reach B's summary either.
    const crossed = await s.ops.call('summary', operator, { agentId: 'agent-a', id: theirs.id })
    expect(!crossed.ok && crossed.error.code).toBe('NOT_FOUND')
    const forbidden = await s.ops.call('summary', agentA, { agentId: 'agent-b', id: theirs.id })
    expect(!forbidden.ok && forbidden.error.code).toBe('FORBIDDEN')
  })
})

describe('formation activity through the operations (issue 13 §5)', () => {
  it("counts the agent's own work; an agent naming another is refused; the operator names one", async () => {
    const s = await seeded()
    await s.ops.syncMemory(agentA, {})
    const mine = await s.ops.formationActivity(agentA, {})
    expect(mine).toMatchObject({ agentId: 'agent-a', extractor: 'OFFLINE', circuitState: null })
    const extraction = mine.work.find((w) => w.kind === 'EXTRACTION')
    expect(extraction).toMatchObject({ calls: 1, successes: 1, failures: 0, successRate: 1 })
    expect(mine.queue.map((q) => q.kind)).toEqual(['EXTRACTION', 'SUMMARY', 'PROFILE'])
    // B did nothing: its counters are zero, and A cannot read them.
    const theirs = await s.ops.formationActivity(operator, { agentId: 'agent-b' })
    expect(theirs.work.every((w) => w.calls === 0 && w.successRate === null)).toBe(true)
    const refused = await s.ops.call('formationActivity', agentA, { agentId: 'agent-b' })
    expect(!refused.ok && refused.error.code).toBe('FORBIDDEN')
    const unnamed = await s.ops.call('formationActivity', operator, {})
    expect(!unnamed.ok && unnamed.error.issues).toEqual([expect.objectContaining({ field: 'agentId' })])
  })

  it("streams an agent its own work as it ends; the operator every agent's unless it names one", async () => {
    const s = await seeded()
    const mine = s.ops.stream('formationActivityEvents', agentA, {})
    const all = s.ops.stream('formationActivityEvents', operator, {})
    const first = mine.next()
    const firstOfAll = all.next()
    await s.ops.syncMemory(agentB, {})
    await s.ops.syncMemory(agentA, {})
    const step = await first
    expect(!step.done && step.value.ok && step.value.data).toMatchObject({
      agentId: 'agent-a',
      kind: 'EXTRACTION',
      outcome: 'SUCCESS',
      reason: null,
    })
    const any = await firstOfAll
    expect(!any.done && any.value.ok && any.value.data.agentId).toBe('agent-b')
    await mine.return?.()
    await all.return?.()
    const refused = s.ops.stream('formationActivityEvents', agentA, { agentId: 'agent-b' })
    const no = await refused.next()
    expect(!no.done && !no.value.ok && no.value.error.code).toBe('FORBIDDEN')
  })
})

describe('the user profile through the operations (issue 13 §4)', () => {
  it('null until generated; regenerate writes versions kept, listed and diffed; each agent its own', async () => {
    const s = await seeded()
    expect(await s.ops.userProfile(agentA, { userId: 'dana' })).toEqual({ current: null })
    await s.ops.createMemory(agentA, {
      content: 'Dana prefers green tea',
      category: 'PREFERENCE',
      userId: 'dana',
    })
    const first = await s.ops.regenerateProfile(agentA, { userId: 'dana' })
    expect(first).toMatchObject({
      agentId: 'agent-a',
      userId: 'dana',
      version: 1,
      writer: 'EXTRACTIVE',
      trigger: 'REQUEST',
    })
    expect(first.content).toMatch(/green tea/)
    await s.ops.createMemory(agentA, { content: 'Dana works as a pilot', category: 'FACT', userId: 'dana' })
    const second = await s.ops.regenerateProfile(agentA, { userId: 'dana' })
    expect(second.version).toBe(2)
    expect(await s.ops.userProfile(agentA, { userId: 'dana' })).toEqual({ current: second })
    const page = await s.ops.profileVersions(agentA, { userId: 'dana', limit: 1 })
    expect(page).toEqual({ totalCount: 2, versions: [second] })
    expect((await s.ops.profileVersions(agentA, { userId: 'dana', offset: 1 })).versions).toEqual([first])
    const diff = await s.ops.profileDiff(agentA, { userId: 'dana', from: 1, to: 2 })
    expect(diff).toMatchObject({ from: 1, to: 2, removed: [] })
    expect(diff.added.join(' ')).toMatch(/pilot/)
    // The profile of the memories that name no user is its own, with userId null on the wire.
    expect((await s.ops.regenerateProfile(agentA, {})).userId).toBeNull()
    // B has no profile of Dana, and A cannot name B.
    expect(await s.ops.userProfile(agentB, { userId: 'dana' })).toEqual({ current: null })
    await expect(s.ops.profileDiff(agentB, { userId: 'dana', from: 1, to: 2 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    })
    await expect(s.ops.userProfile(agentA, { agentId: 'agent-b' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    })
    const bad = await s.ops.call('profileVersions', agentA, { limit: 101 })
    expect(!bad.ok && bad.error.issues).toEqual([expect.objectContaining({ field: 'limit', limit: 100 })])
  })
})

describe('trajectory memory through the operations (issue 16)', () => {
  /** What B's seeded trajectory memory looks like, read as B. */
  async function bAsSeeded(s: Seeded) {
    const run = await s.ops.run(agentB, { runId: s.b.runId })
    expect(run).toMatchObject({ status: 'RUNNING', turnCount: 0, currentUrl: null, kind: 'START' })
    expect((await s.ops.runs(agentB, {})).runs.map((r) => r.id)).toEqual([s.b.runId])
    expect((await s.ops.trajectory(agentB, { id: s.b.trajectoryId }))?.runId).toBe(s.b.runId)
    const facts = await s.ops.appFacts(agentB, {})
    expect(facts.facts.map((f) => [f.id, f.confidence, f.sources])).toEqual([[s.b.factId, 0.6, 1]])
    const selectors = await s.ops.knownSelectors(agentB, {})
    expect(selectors.selectors.map((x) => [x.id, x.successCount, x.failureCount])).toEqual([
      [s.b.selectorId, 1, 0],
    ])
    expect((await s.ops.runHints(agentB, {})).map((h) => [h.id, h.text])).toEqual([
      [s.b.hintId, 'agent-b: close cookie banners first'],
    ])
    expect(await s.ops.runSessions(agentB, { domain: SHOP })).toEqual([])
  }

  it.each([
    'reportRunProgress',
    'completeRun',
    'failRun',
    'resumeRun',
    'forkRun',
    'runLineage',
    'deleteRun',
    'recordTrajectory',
    'recordKnowledge',
    'recordSelector',
    'updateRunHint',
  ] as const)(
    "%s naming agent B's run or record, as agent A, is NOT_FOUND and changes nothing",
    async (name) => {
      const s = await seeded()
      const result = await s.ops.call(name, agentA, samples(s.b, s.document)[name])
      expect(!result.ok && result.error, name).toMatchObject({ code: 'NOT_FOUND' })
      await bAsSeeded(s)
      // A's own run is as seeded too: nothing was written on A's side by mistake.
      expect(await s.ops.run(agentA, { runId: s.a.runId })).toMatchObject({ status: 'RUNNING', turnCount: 0 })
      expect((await s.ops.runs(agentA, {})).totalCount).toBe(1)
    },
  )

  it.each([
    'run',
    'trajectory',
    'deleteTrajectory',
    'deleteAppFact',
    'deleteKnownSelector',
    'deleteRunHint',
  ] as const)("%s of agent B's id, as agent A, finds nothing and leaves it", async (name) => {
    const s = await seeded()
    const answer = (await s.ops.call(name, agentA, samples(s.b, s.document)[name])) as Result<unknown>
    expect(answer.ok && answer.data, name).toEqual(
      name === 'run' || name === 'trajectory' ? null : { id: expect.any(String), deleted: false },
    )
    await bAsSeeded(s)
  })

  it("lists only the agent's own runs and memory; the operator names the agent", async () => {
    const s = await seeded()
    expect((await s.ops.runs(agentA, {})).runs.map((r) => r.id)).toEqual([s.a.runId])
    expect((await s.ops.trajectories(agentA, {})).trajectories.map((t) => t.id)).toEqual([s.a.trajectoryId])
    expect((await s.ops.appFacts(agentA, {})).facts.map((f) => f.value)).toEqual([
      'agent-a sees modals in shadow DOM',
    ])
    expect((await s.ops.knownSelectors(agentA, {})).selectors.map((x) => x.id)).toEqual([s.a.selectorId])
    expect((await s.ops.runHints(agentA, {})).map((h) => h.id)).toEqual([s.a.hintId])
    expect(await s.ops.runDomains(agentA, {})).toEqual([
      expect.objectContaining({ scope: 'default', domain: SHOP, runs: 1, trajectories: 1, facts: 1 }),
    ])
    // Clearing A's scope and deleting A's domain leave B's.
    await s.ops.clearRunMemoryScope(agentA, { scope: 'default' })
    await s.ops.deleteRunDomain(agentA, { domain: SHOP })
    expect((await s.ops.runs(agentA, {})).totalCount).toBe(0)
    await bAsSeeded(s)
    expect((await s.ops.runs(operator, { agentId: 'agent-b' })).runs.map((r) => r.id)).toEqual([s.b.runId])
    const unnamed = await s.ops.call('runs', operator, {})
    expect(!unnamed.ok && unnamed.error.issues).toEqual([expect.objectContaining({ field: 'agentId' })])
  })

  it("streams an agent its own runs' events, re-read as stored; the operator every agent's", async () => {
    const s = await seeded()
    const mine = s.ops.stream('runEvents', agentA, {})
    const all = s.ops.stream('runEvents', operator, {})
    const first = mine.next()
    const firstOfAll = all.next()
    await s.ops.reportRunProgress(agentB, { runId: s.b.runId, turnCount: 3 })
    await s.ops.reportRunProgress(agentA, { runId: s.a.runId, turnCount: 4, currentUrl: `https://${SHOP}/x` })
    const step = await first
    expect(!step.done && step.value.ok && step.value.data).toMatchObject({
      kind: 'PROGRESS',
      run: { id: s.a.runId, turnCount: 4, currentUrl: `https://${SHOP}/x` },
    })
    const any = await firstOfAll
    expect(!any.done && any.value.ok && any.value.data.run.id).toBe(s.b.runId)
    await mine.return?.()
    await all.return?.()
    const refused = s.ops.stream('runEvents', agentA, { agentId: 'agent-b' })
    const no = await refused.next()
    expect(!no.done && !no.value.ok && no.value.error.code).toBe('FORBIDDEN')
  })

  it('checks run inputs against the catalog: VALIDATION naming the field and the limit', async () => {
    const s = await seeded()
    const steps = Array.from({ length: CONTRACT_LIMITS.maxStepsPerTrajectory + 1 }, () => ({
      action: 'click',
    }))
    const long = await s.ops.call('completeRun', agentA, { runId: s.a.runId, steps })
    expect(!long.ok && long.error.issues).toEqual([
      expect.objectContaining({ field: 'steps', limit: CONTRACT_LIMITS.maxStepsPerTrajectory }),
    ])
    const badId = await s.ops.call('startRun', agentA, { goal: 'g', domain: SHOP, runId: 'has spaces' })
    expect(!badId.ok && badId.error.issues).toEqual([expect.objectContaining({ field: 'runId' })])
    const noDomain = await s.ops.call('startRun', agentA, { goal: 'Find the docs' })
    expect(!noDomain.ok && noDomain.error.issues).toEqual([expect.objectContaining({ field: 'domain' })])
    // The run is still running: nothing was written.
    expect(await s.ops.run(agentA, { runId: s.a.runId })).toMatchObject({ status: 'RUNNING' })
  })
})
