import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { partCoveredFields } from './isolation-parts.ts'

// Agent A's key is pointed at every operation with agent B's data: nothing of B's may be read or
// changed. B's state is fingerprinted before and compared after.

/** B's whole knowledge graph as the operator reads it: entities and every relationship ever learnt. */
const GRAPH_OF_B = `{
  graphEntities(agentId: "agent-b", limit: 500) { ... on GraphEntityPage { totalCount matches { entity { id type name aliases summary mentionCount updatedAt } } } }
  graphRelationships(agentId: "agent-b", includeHistory: true, limit: 500) { ... on GraphRelationshipPage { totalCount relationships { id relation confidence validFrom validUntil retiredAt supersededById updatedAt source { id } target { id } } } }
}`
/** B's trajectory memory as the operator reads it (issue 16): runs, trajectories, facts, selectors, hints, domains, sessions. */
const RUN_MEMORY_OF_B = `{
  runs(agentId: "agent-b", limit: 200) { ... on RunPage { totalCount runs { id status goal turnCount currentUrl finalUrl summary updatedAt } } }
  trajectories(agentId: "agent-b", limit: 200) { ... on TrajectoryPage { totalCount trajectories { id goal stepCount recordedAt } } }
  appFacts(agentId: "agent-b", limit: 200) { ... on AppFactPage { totalCount facts { id key value confidence sources lastSeenAt } } }
  knownSelectors(agentId: "agent-b", limit: 200) { ... on KnownSelectorPage { totalCount selectors { id selector successCount failureCount lastUsedAt } } }
  runHints(agentId: "agent-b") { ... on QueryRunHintsSuccess { data { id text updatedAt } } }
  runDomains(agentId: "agent-b") { ... on QueryRunDomainsSuccess { data { scope domain runs trajectories runSessions facts selectors lastActivityAt } } }
  runSessions(agentId: "agent-b", domain: "b-secret.example") { ... on QueryRunSessionsSuccess { data { id runId outcome endedAt } } }
  exportAgentMemory(agentId: "agent-b") { ... on AgentMemoryExport { files { path content } } }
}`
/** A valid `.agent-memory/` directory: one domain's knowledge (spec 004's knowledge.json). */
const AGENT_MEMORY_FILES = [
  {
    path: 'domains/b-secret.example/knowledge.json',
    content: JSON.stringify({
      domain: 'b-secret.example',
      facts: [
        {
          type: 'quirk',
          key: 'injected',
          value: 'injected fact',
          confidence: 0.9,
          sources: 1,
          lastSeen: '2026-01-01T00:00:00.000Z',
        },
      ],
      sessions: [],
      updatedAt: '2026-01-01T00:00:00.000Z',
    }),
  },
]
describe("an agent key never reads or changes another agent's data", () => {
  let t: TestApp
  let keyA: string
  let keyB: string
  const ids = {
    bMessage: '',
    bEntry: '',
    bKnowledge: '',
    aEntry: '',
    bApiKey: '',
    bMemory: '',
    bSummary: '',
    backup: '',
    aEntity: '',
    bEntity: '',
    bPlace: '',
    bRelationship: '',
    bTrajectory: '',
    bFact: '',
    bSelector: '',
    bHint: '',
  }

  const fingerprint = async () => ({
    sessions: await t.db.session.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    messages: await t.db.message.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    entries: await t.db.memoryEntry.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    vectors: await t.db.memoryVector.findMany({ where: { agentId: 'agent-b' }, orderBy: { entryId: 'asc' } }),
    knowledge: await t.db.knowledge.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    parameters: await t.db.adaptiveParameter.findMany({
      where: { agentId: 'agent-b' },
      orderBy: { key: 'asc' },
    }),
    snapshots: await t.db.optimizationSnapshot.findMany({
      where: { agentId: 'agent-b' },
      orderBy: { id: 'asc' },
    }),
    keys: await t.db.apiKey.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    memories: await t.db.memoryItem.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    embeddings: await t.db.embedding.findMany({
      where: { agentId: 'agent-b' },
      orderBy: [{ kind: 'asc' }, { ownerId: 'asc' }, { model: 'asc' }],
    }),
    agent: await t.db.agent.findUnique({ where: { id: 'agent-b' } }),
    backups: fs.readdirSync(path.join(t.dir, 'backups')).sort(),
    // B's knowledge graph, read by the operator (its whole history, every field that can change).
    graph: (await t.gql(GRAPH_OF_B)).data,
    // B's trajectory memory (issue 16), read by the operator.
    runMemory: (await t.gql(RUN_MEMORY_OF_B)).data,
  })

  beforeAll(async () => {
    t = await createTestApp()
    keyA = await createAgentKey(t, 'agent-a')
    keyB = await createAgentKey(t, 'agent-b')
    // A knowledge graph for each, entered by the operator (agent keys cannot write the graph).
    const entity = async (agentId: string, type: string, name: string) =>
      (
        await t.gql(
          `mutation($input: CreateGraphEntityInput!) { createGraphEntity(input: $input) { ... on GraphEntity { id } } }`,
          { input: { agentId, type, name } },
        )
      ).data.createGraphEntity.id as string
    ids.aEntity = await entity('agent-a', 'PERSON', 'Ann Example')
    const aCompany = await entity('agent-a', 'COMPANY', 'Acorp')
    ids.bEntity = await entity('agent-b', 'PERSON', 'Bea Hunter2secret')
    ids.bPlace = await entity('agent-b', 'PLACE', 'Hidden Valley')
    const link = `mutation($input: CreateGraphRelationshipInput!) { createGraphRelationship(input: $input) { ... on GraphRelationship { id } } }`
    await t.gql(link, {
      input: { agentId: 'agent-a', sourceId: ids.aEntity, relation: 'works at', targetId: aCompany },
    })
    ids.bRelationship = (
      await t.gql(link, {
        input: { agentId: 'agent-b', sourceId: ids.bEntity, relation: 'lives in', targetId: ids.bPlace },
      })
    ).data.createGraphRelationship.id
    const b = await t.gql(
      // B's speaker holds the secret too: no view of A's may show it either.
      `mutation { addMessage(input: { conversationId: "shared-name", role: USER, speaker: "hunter2-holder", content: "B's secret: password is hunter2 at https://b.example" }) { ... on Message { id } } }`,
      {},
      keyB,
    )
    ids.bMessage = b.data.addMessage.id
    await t.gql(
      `mutation { addMessage(input: { conversationId: "shared-name", role: USER, speaker: "Ann", content: "A's own message about https://a.example" }) { ... on Message { id } } }`,
      {},
      keyA,
    )
    const entries = await t.db.memoryEntry.findMany({ orderBy: { id: 'asc' } })
    ids.bEntry = String(entries.find((e) => e.agentId === 'agent-b')?.id)
    ids.aEntry = String(entries.find((e) => e.agentId === 'agent-a')?.id)
    await t.gql(
      `mutation($id: ID!) { upsertEmbedding(entryId: $id, vector: [1, 0, 0]) { ... on MemoryEntry { id } } }`,
      { id: ids.bEntry },
      keyB,
    )
    await t.gql(
      `mutation($id: ID!) { upsertEmbedding(entryId: $id, vector: [0, 1, 0]) { ... on MemoryEntry { id } } }`,
      { id: ids.aEntry },
      keyA,
    )
    const k = await t.gql(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "b.example", value: "B's private domain knowledge" }) { ... on Knowledge { id } } }`,
      {},
      keyB,
    )
    ids.bKnowledge = k.data.storeKnowledge.id
    await t.gql(`mutation { runOptimizer { ... on OptimizationSnapshot { id } } }`, {}, keyB)
    const keys = await t.db.apiKey.findMany({ where: { agentId: 'agent-b' } })
    ids.bApiKey = keys[0]!.id
    const bMemory = await t.gql(
      `mutation { createMemory(input: { content: "B's password hint is hunter2", category: FACT }) { ... on MemoryWrite { memory { id } } } }`,
      {},
      keyB,
    )
    ids.bMemory = bMemory.data.createMemory.memory.id
    const bSummary = await t.gql(
      `mutation { summarize(conversationId: "shared-name") { ... on SummarizePayload { summary { id } } } }`,
      {},
      keyB,
    )
    ids.bSummary = bSummary.data.summarize.summary.id
    await t.gql(
      `mutation { createMemory(input: { content: "A's password policy asks for twelve characters", category: FACT }) { __typename } }`,
      {},
      keyA,
    )
    await t.gql(`mutation { updateMemorySettings(settings: { recallTopK: 7 }) { __typename } }`, {}, keyB)
    // B's knowledge and messages get vectors too (a search brings them up to date).
    await t.gql(
      `{ search(input: { query: "password", scopes: [MESSAGES, KNOWLEDGE] }) { __typename } }`,
      {},
      keyB,
    )
    // B's trajectory memory (issue 16): a completed run with its trajectory, facts and selectors,
    // a running one, a hint. A keeps a run of its own on another domain.
    const startB = (input: Record<string, unknown>) =>
      t.gql(
        `mutation($input: StartRunInput!) { startRun(input: $input) { __typename ... on Run { id } ... on Error { message } } }`,
        { input },
        keyB,
      )
    expect(
      (await startB({ runId: 'b-run', goal: 'B hunter2 secret errand', domain: 'b-secret.example' })).data
        .startRun.__typename,
    ).toBe('Run')
    const bEnd = await t.gql(
      `mutation($input: CompleteRunInput!) { completeRun(input: $input) { ... on RunEnd { trajectoryId } ... on Error { message } } }`,
      {
        input: {
          runId: 'b-run',
          outcome: 'B hunter2 outcome',
          finalUrl: 'https://b-secret.example/done',
          steps: [{ action: 'type', selector: '#password', value: 'hunter2', verified: true }],
          facts: [{ type: 'QUIRK', key: 'vault', value: 'B hunter2 quirk' }],
          selectors: [{ element: 'input "Password"', selector: '#password' }],
        },
      },
      keyB,
    )
    ids.bTrajectory = bEnd.data.completeRun.trajectoryId
    expect(ids.bTrajectory, JSON.stringify(bEnd)).toEqual(expect.any(String))
    await startB({ runId: 'b-running', goal: 'B hunter2 running errand', domain: 'b-secret.example' })
    const runMemoryOfB = (await t.gql(RUN_MEMORY_OF_B)).data
    ids.bFact = runMemoryOfB.appFacts.facts[0].id
    ids.bSelector = runMemoryOfB.knownSelectors.selectors[0].id
    ids.bHint = (
      await t.gql(
        `mutation { addRunHint(input: { text: "B hunter2 hint" }) { ... on RunHint { id } } }`,
        {},
        keyB,
      )
    ).data.addRunHint.id
    await t.gql(
      `mutation { startRun(input: { runId: "a-run", goal: "A's own errand", domain: "a.example" }) { __typename } }`,
      {},
      keyA,
    )
    ids.backup = (
      await t.gql(`mutation { backupDatabase { ... on Backup { name } } }`)
    ).data.backupDatabase.name
  })
  afterAll(() => t.close())

  // Each case: an operation sent with A's key, and what A must get back.
  const forbidden = 'ForbiddenError'
  const notFound = 'NotFoundError'
  const cases: {
    name: string
    query: string
    vars?: () => Record<string, unknown>
    /** A field with no error union refuses through the response's errors, with this code. */
    errorCode?: string
    expect: (data: any) => void
  }[] = [
    {
      name: 'session of B by naming agent B',
      query: `{ session(agentId: "agent-b", conversationId: "shared-name") { __typename } }`,
      expect: (d) => expect(d.session.__typename).toBe(forbidden),
    },
    {
      name: "session with the same conversation id is A's own",
      query: `{ session(conversationId: "shared-name") { ... on Session { agentId messages { edges { node { content speaker } } } } } }`,
      expect: (d) => {
        expect(d.session.agentId).toBe('agent-a')
        expect(d.session.messages.edges.map((e: any) => e.node.speaker)).toEqual(['Ann'])
        expect(JSON.stringify(d)).not.toContain('hunter2')
      },
    },
    {
      name: 'contextWindow naming B',
      query: `{ contextWindow(agentId: "agent-b", conversationId: "shared-name") { __typename } }`,
      expect: (d) => expect(d.contextWindow.__typename).toBe(forbidden),
    },
    {
      name: "contextWindow of A's own conversation holds no B data",
      query: `{ contextWindow(conversationId: "shared-name") { ... on ContextWindow { full { content speaker } } } }`,
      expect: (d) => expect(JSON.stringify(d)).not.toContain('hunter2'),
    },
    {
      name: 'addMessage into B',
      query: `mutation { addMessage(input: { agentId: "agent-b", conversationId: "shared-name", role: USER, speaker: "injected", content: "injected" }) { __typename } }`,
      expect: (d) => expect(d.addMessage.__typename).toBe(forbidden),
    },
    {
      name: 'addMessages into B',
      query: `mutation { addMessages(input: { agentId: "agent-b", conversationId: "x", messages: [{ role: USER, speaker: "injected", content: "injected" }] }) { __typename } }`,
      expect: (d) => expect(d.addMessages.__typename).toBe(forbidden),
    },
    {
      name: "compressMessages with B's message id",
      query: `mutation($id: ID!) { compressMessages(input: { conversationId: "shared-name", olderThanId: $id }) { __typename } }`,
      vars: () => ({ id: ids.bMessage }),
      expect: (d) => expect(d.compressMessages.__typename).toBe(notFound),
    },
    {
      name: 'compressMessages naming B',
      query: `mutation($id: ID!) { compressMessages(input: { agentId: "agent-b", conversationId: "shared-name", olderThanId: $id }) { __typename } }`,
      vars: () => ({ id: ids.bMessage }),
      expect: (d) => expect(d.compressMessages.__typename).toBe(forbidden),
    },
    {
      name: 'deleteSession naming B',
      query: `mutation { deleteSession(agentId: "agent-b", conversationId: "shared-name") { __typename } }`,
      expect: (d) => expect(d.deleteSession.__typename).toBe(forbidden),
    },
    {
      name: "memoryEntries lists only A's",
      query: `{ memoryEntries(first: 50) { ... on QueryMemoryEntriesConnection { edges { node { agentId content } } } } }`,
      expect: (d) => {
        const nodes = d.memoryEntries.edges.map((e: any) => e.node)
        expect(nodes.length).toBeGreaterThan(0)
        expect(nodes.every((n: any) => n.agentId === 'agent-a')).toBe(true)
      },
    },
    {
      name: 'memoryEntries naming B',
      query: `{ memoryEntries(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.memoryEntries.__typename).toBe(forbidden),
    },
    {
      name: "memoryEntry by B's id",
      query: `query($id: ID!) { memoryEntry(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntry }),
      expect: (d) => expect(d.memoryEntry.__typename).toBe(notFound),
    },
    {
      name: 'analyzeMemory covers only A',
      query: `{ analyzeMemory { ... on MemoryAnalysis { scores { entryId } } } }`,
      expect: (d) => expect(d.analyzeMemory.scores.map((s: any) => s.entryId)).toEqual([ids.aEntry]),
    },
    {
      name: 'analyzeMemory naming B',
      query: `{ analyzeMemory(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.analyzeMemory.__typename).toBe(forbidden),
    },
    {
      name: "promoteEntry of B's entry",
      query: `mutation($id: ID!) { promoteEntry(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntry }),
      expect: (d) => expect(d.promoteEntry.__typename).toBe(notFound),
    },
    {
      name: "compressEntry of B's entry",
      query: `mutation($id: ID!) { compressEntry(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntry }),
      expect: (d) => expect(d.compressEntry.__typename).toBe(notFound),
    },
    {
      name: "dropEntry of B's entry",
      query: `mutation($id: ID!) { dropEntry(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntry }),
      expect: (d) => expect(d.dropEntry.__typename).toBe(notFound),
    },
    {
      name: "upsertEmbedding on B's entry",
      query: `mutation($id: ID!) { upsertEmbedding(entryId: $id, vector: [0, 0, 1]) { __typename } }`,
      vars: () => ({ id: ids.bEntry }),
      expect: (d) => expect(d.upsertEmbedding.__typename).toBe(notFound),
    },
    {
      name: "searchByVector finds only A's vectors",
      query: `{ searchByVector(vector: [1, 0, 0], limit: 10) { ... on VectorSearchResult { hits { entry { id agentId } } } } }`,
      expect: (d) => expect(d.searchByVector.hits.map((h: any) => h.entry.id)).toEqual([ids.aEntry]),
    },
    {
      name: 'searchByVector naming B',
      query: `{ searchByVector(agentId: "agent-b", vector: [1, 0, 0]) { __typename } }`,
      expect: (d) => expect(d.searchByVector.__typename).toBe(forbidden),
    },
    {
      name: 'storeKnowledge naming B',
      query: `mutation { storeKnowledge(input: { agentId: "agent-b", category: DOMAIN, key: "b.example", value: "overwrite" }) { __typename } }`,
      expect: (d) => expect(d.storeKnowledge.__typename).toBe(forbidden),
    },
    {
      name: "storeKnowledge with B's key creates A's own fact",
      query: `mutation { storeKnowledge(input: { category: DOMAIN, key: "b.example", value: "A's view" }) { ... on Knowledge { agentId confidence storeCount } } }`,
      expect: (d) => expect(d.storeKnowledge).toEqual({ agentId: 'agent-a', confidence: 0.5, storeCount: 1 }),
    },
    {
      name: "recordKnowledgeUse of B's fact",
      query: `mutation($id: ID!) { recordKnowledgeUse(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bKnowledge }),
      expect: (d) => expect(d.recordKnowledgeUse.__typename).toBe(notFound),
    },
    {
      name: "updateKnowledge of B's fact",
      query: `mutation($id: ID!) { updateKnowledge(input: { id: $id, value: "x" }) { __typename } }`,
      vars: () => ({ id: ids.bKnowledge }),
      expect: (d) => expect(d.updateKnowledge.__typename).toBe(notFound),
    },
    {
      name: "deleteKnowledge of B's fact",
      query: `mutation($id: ID!) { deleteKnowledge(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bKnowledge }),
      expect: (d) => expect(d.deleteKnowledge.__typename).toBe(notFound),
    },
    {
      name: "knowledge lists only A's",
      query: `{ knowledge(first: 50) { ... on QueryKnowledgeConnection { edges { node { agentId value } } } } }`,
      expect: (d) => {
        expect(d.knowledge.edges.every((e: any) => e.node.agentId === 'agent-a')).toBe(true)
        expect(JSON.stringify(d)).not.toContain('private')
      },
    },
    {
      name: "relevantKnowledge searches only A's",
      query: `{ relevantKnowledge(text: "b.example private domain") { ... on RelevantKnowledge { matches { knowledge { agentId value } } } } }`,
      expect: (d) => expect(JSON.stringify(d)).not.toContain('private'),
    },
    {
      name: "sessions lists only A's",
      query: `{ sessions(first: 50) { ... on QuerySessionsConnection { totalCount edges { node { agentId } } } } }`,
      expect: (d) => {
        expect(d.sessions.totalCount).toBe(1)
        expect(d.sessions.edges.map((e: any) => e.node.agentId)).toEqual(['agent-a'])
      },
    },
    {
      name: 'sessions naming B',
      query: `{ sessions(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.sessions.__typename).toBe(forbidden),
    },
    {
      name: "deleteKnowledgeItems with B's id",
      query: `mutation($id: ID!) { deleteKnowledgeItems(ids: [$id]) { __typename } }`,
      vars: () => ({ id: ids.bKnowledge }),
      expect: (d) => expect(d.deleteKnowledgeItems.__typename).toBe(notFound),
    },
    {
      name: 'deleteKnowledgeItems naming B',
      query: `mutation($id: ID!) { deleteKnowledgeItems(agentId: "agent-b", ids: [$id]) { __typename } }`,
      vars: () => ({ id: ids.bKnowledge }),
      expect: (d) => expect(d.deleteKnowledgeItems.__typename).toBe(forbidden),
    },
    {
      name: 'createLiveToken (admin only)',
      query: `mutation { createLiveToken(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.createLiveToken.__typename).toBe(forbidden),
    },
    {
      name: "search finds only A's messages",
      query: `{ search(input: { query: "secret password hunter2 example" }) { ... on SearchResult { hits { message { content speaker } } } } }`,
      expect: (d) => {
        expect(d.search.hits.length).toBeGreaterThan(0)
        expect(JSON.stringify(d)).not.toContain('hunter2')
      },
    },
    {
      name: 'search naming B',
      query: `{ search(input: { agentId: "agent-b", query: "password" }) { __typename } }`,
      expect: (d) => expect(d.search.__typename).toBe(forbidden),
    },
    {
      name: 'setPrivacyPolicy (admin only)',
      query: `mutation { setPrivacyPolicy(agentId: "agent-b", mode: ALLOW) { __typename } }`,
      expect: (d) => expect(d.setPrivacyPolicy.__typename).toBe(forbidden),
    },
    {
      name: 'runOptimizer naming B',
      query: `mutation { runOptimizer(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.runOptimizer.__typename).toBe(forbidden),
    },
    {
      name: 'optimizerStatus naming B',
      query: `{ optimizerStatus(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.optimizerStatus.__typename).toBe(forbidden),
    },
    {
      name: 'optimizerSnapshots naming B',
      query: `{ optimizerSnapshots(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.optimizerSnapshots.__typename).toBe(forbidden),
    },
    {
      name: "optimizerSnapshots of A holds none of B's",
      query: `{ optimizerSnapshots { ... on OptimizationSnapshotList { snapshots { agentId } } } }`,
      expect: (d) => expect(d.optimizerSnapshots.snapshots).toEqual([]),
    },
    {
      name: 'setOptimizerParameters (admin only)',
      query: `mutation { setOptimizerParameters(agentId: "agent-b", input: { minRelevance: 0.5 }) { __typename } }`,
      expect: (d) => expect(d.setOptimizerParameters.__typename).toBe(forbidden),
    },
    {
      name: 'createApiKey (admin only)',
      query: `mutation { createApiKey(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.createApiKey.__typename).toBe(forbidden),
    },
    {
      name: 'revokeApiKey (admin only)',
      query: `mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bApiKey }),
      expect: (d) => expect(d.revokeApiKey.__typename).toBe(forbidden),
    },
    {
      name: 'createAgent (admin only)',
      query: `mutation { createAgent(id: "agent-b", name: "renamed") { __typename } }`,
      expect: (d) => expect(d.createAgent.__typename).toBe(forbidden),
    },
    {
      name: 'deleteAgent (admin only)',
      query: `mutation { deleteAgent(id: "agent-b") { __typename } }`,
      expect: (d) => expect(d.deleteAgent.__typename).toBe(forbidden),
    },
    {
      name: 'deletionReport of B (admin only)',
      query: `{ deletionReport(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.deletionReport.__typename).toBe(forbidden),
    },
    {
      name: 'deletionReport of A itself (admin only)',
      query: `{ deletionReport(agentId: "agent-a") { __typename } }`,
      expect: (d) => expect(d.deletionReport.__typename).toBe(forbidden),
    },
    {
      name: 'apiKeys (admin only)',
      query: `{ apiKeys { __typename } }`,
      expect: (d) => expect(d.apiKeys.__typename).toBe(forbidden),
    },
    {
      name: 'agents lists only A',
      query: `{ agents { id } }`,
      expect: (d) => expect(d.agents).toEqual([{ id: 'agent-a' }]),
    },
    {
      name: 'viewer is A',
      query: `{ viewer { role agentId } }`,
      expect: (d) => expect(d.viewer).toEqual({ role: 'AGENT', agentId: 'agent-a' }),
    },
    {
      name: "memory by B's id",
      query: `query($id: ID!) { memory(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bMemory }),
      expect: (d) => expect(d.memory.__typename).toBe(notFound),
    },
    {
      name: 'memory naming B',
      query: `query($id: ID!) { memory(agentId: "agent-b", id: $id) { __typename } }`,
      vars: () => ({ id: ids.bMemory }),
      expect: (d) => expect(d.memory.__typename).toBe(forbidden),
    },
    {
      name: "memories lists only A's",
      query: `{ memories(first: 50, filter: { includeSuperseded: true }) { ... on QueryMemoriesConnection { totalCount edges { node { agentId content } } } } }`,
      expect: (d) => {
        expect(d.memories.totalCount).toBe(1)
        expect(d.memories.edges.map((e: any) => e.node)).toEqual([
          { agentId: 'agent-a', content: "A's password policy asks for twelve characters" },
        ])
      },
    },
    {
      name: 'memories naming B',
      query: `{ memories(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.memories.__typename).toBe(forbidden),
    },
    {
      name: "memoryStats counts only A's",
      query: `{ memoryStats { ... on MemoryStats { agentId total embedded coverage { kind total } } } }`,
      expect: (d) =>
        expect(d.memoryStats).toEqual({
          agentId: 'agent-a',
          total: 1,
          embedded: 1,
          coverage: [
            { kind: 'memory', total: 1 },
            { kind: 'message', total: 1 },
            { kind: 'knowledge', total: 1 },
            { kind: 'summary', total: 0 },
          ],
        }),
    },
    {
      name: 'memoryStats naming B',
      query: `{ memoryStats(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.memoryStats.__typename).toBe(forbidden),
    },
    {
      name: "memorySettings are A's own",
      query: `{ memorySettings { ... on MemorySettings { recallTopK } } }`,
      expect: (d) => expect(d.memorySettings).toEqual({ recallTopK: 10 }),
    },
    {
      name: 'memorySettings naming B',
      query: `{ memorySettings(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.memorySettings.__typename).toBe(forbidden),
    },
    {
      name: 'updateMemorySettings naming B',
      query: `mutation { updateMemorySettings(agentId: "agent-b", settings: { recallTopK: 3 }) { __typename } }`,
      expect: (d) => expect(d.updateMemorySettings.__typename).toBe(forbidden),
    },
    {
      name: "updateMemorySettings changes A's only",
      query: `mutation { updateMemorySettings(settings: { recallTopK: 5 }) { ... on MemorySettings { recallTopK } } }`,
      expect: (d) => expect(d.updateMemorySettings).toEqual({ recallTopK: 5 }),
    },
    {
      name: 'createMemory naming B',
      query: `mutation { createMemory(input: { agentId: "agent-b", content: "injected", category: FACT }) { __typename } }`,
      expect: (d) => expect(d.createMemory.__typename).toBe(forbidden),
    },
    {
      name: "memoryFormationSettings are A's own",
      query: `{ memoryFormationSettings { ... on MemoryFormationSettings { enabled summaries { summaryRetentionDays } } } }`,
      expect: (d) =>
        expect(d.memoryFormationSettings).toEqual({ enabled: true, summaries: { summaryRetentionDays: 7 } }),
    },
    {
      name: 'memoryFormationSettings naming B',
      query: `{ memoryFormationSettings(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.memoryFormationSettings.__typename).toBe(forbidden),
    },
    {
      name: 'updateMemoryFormationSettings naming B',
      query: `mutation { updateMemoryFormationSettings(agentId: "agent-b", settings: { enabled: false }) { __typename } }`,
      expect: (d) => expect(d.updateMemoryFormationSettings.__typename).toBe(forbidden),
    },
    {
      name: "updateMemoryFormationSettings changes A's only",
      query: `mutation { updateMemoryFormationSettings(settings: { summaries: { summaryRetentionDays: 9 } }) {
        ... on MemoryFormationSettings { summaries { summaryRetentionDays } } } }`,
      expect: (d) =>
        expect(d.updateMemoryFormationSettings).toEqual({ summaries: { summaryRetentionDays: 9 } }),
    },
    {
      name: 'summaries naming B',
      query: `{ summaries(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.summaries.__typename).toBe(forbidden),
    },
    {
      name: 'summarize naming B',
      query: `mutation { summarize(agentId: "agent-b", conversationId: "shared-name") { __typename } }`,
      expect: (d) => expect(d.summarize.__typename).toBe(forbidden),
    },
    {
      name: "summarize of a conversation id B also uses summarises A's own turns only",
      query: `mutation { summarize(conversationId: "shared-name") { ... on SummarizePayload { summary { agentId content } } } }`,
      expect: (d) => {
        expect(d.summarize.summary.agentId).toBe('agent-a')
        expect(d.summarize.summary.content).not.toMatch(/hunter2|b\.example/)
      },
    },
    {
      name: "summaries are A's own",
      query: `{ summaries { ... on QuerySummariesSuccess { data { agentId content } } } }`,
      expect: (d) => {
        expect(d.summaries.data.length).toBeGreaterThan(0)
        for (const summary of d.summaries.data) {
          expect(summary.agentId).toBe('agent-a')
          expect(summary.content).not.toMatch(/hunter2/)
        }
      },
    },
    {
      name: 'userProfile naming B',
      query: `{ userProfile(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.userProfile.__typename).toBe(forbidden),
    },
    {
      name: 'profileVersions naming B',
      query: `{ profileVersions(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.profileVersions.__typename).toBe(forbidden),
    },
    {
      name: 'profileDiff naming B',
      query: `{ profileDiff(agentId: "agent-b", from: 1, to: 1) { __typename } }`,
      expect: (d) => expect(d.profileDiff.__typename).toBe(forbidden),
    },
    {
      name: 'regenerateProfile naming B',
      query: `mutation { regenerateProfile(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.regenerateProfile.__typename).toBe(forbidden),
    },
    {
      name: "regenerateProfile builds A's from A's memories only",
      query: `mutation { regenerateProfile { ... on ProfileVersion { agentId version content } } }`,
      expect: (d) => {
        expect(d.regenerateProfile.agentId).toBe('agent-a')
        expect(d.regenerateProfile.content).not.toMatch(/hunter2/)
      },
    },
    {
      name: "userProfile, its versions and their diff are A's own",
      query: `{ userProfile { ... on UserProfile { current { agentId content } } } }`,
      expect: (d) => {
        expect(d.userProfile.current.agentId).toBe('agent-a')
        expect(d.userProfile.current.content).not.toMatch(/hunter2/)
      },
    },
    {
      name: "profileVersions are A's own",
      query: `{ profileVersions { ... on ProfileVersionPage { totalCount versions { agentId } } } }`,
      expect: (d) => expect(d.profileVersions).toEqual({ totalCount: 1, versions: [{ agentId: 'agent-a' }] }),
    },
    {
      name: "profileDiff compares A's own versions",
      query: `{ profileDiff(from: 1, to: 1) { ... on ProfileDiff { added removed } } }`,
      expect: (d) => expect(d.profileDiff).toEqual({ added: [], removed: [] }),
    },
    {
      name: 'syncMemory naming B',
      query: `mutation { syncMemory(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.syncMemory.__typename).toBe(forbidden),
    },
    {
      name: "syncMemory forms only A's own",
      query: `mutation { syncMemory { ... on SyncMemoryPayload { stored { agentId } } } }`,
      expect: (d) =>
        expect(d.syncMemory.stored.every((m: { agentId: string }) => m.agentId === 'agent-a')).toBe(true),
    },
    {
      name: "summary of B's by its id",
      query: `query($id: ID!) { summary(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bSummary }),
      expect: (d) => expect(d.summary.__typename).toBe(notFound),
    },
    {
      name: 'summary naming B',
      query: `query($id: ID!) { summary(agentId: "agent-b", id: $id) { __typename } }`,
      vars: () => ({ id: ids.bSummary }),
      expect: (d) => expect(d.summary.__typename).toBe(forbidden),
    },
    {
      name: 'formationActivity naming B',
      query: `{ formationActivity(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.formationActivity.__typename).toBe(forbidden),
    },
    {
      name: "formationActivity counts only A's work",
      query: `{ formationActivity { ... on FormationActivity { agentId work { kind calls } } } }`,
      expect: (d) => expect(d.formationActivity.agentId).toBe('agent-a'),
    },
    {
      name: 'classify reads and writes nobody’s data',
      query: `{ classify(input: { content: "Remember that I am allergic to peanuts" }) { ... on Classification { tier } } }`,
      expect: (d) => expect(d.classify.tier).toBe('SEMANTIC'),
    },
    {
      name: 'rememberThis naming B',
      query: `mutation { rememberThis(input: { agentId: "agent-b", text: "Remember that B likes injections" }) { __typename } }`,
      expect: (d) => expect(d.rememberThis.__typename).toBe(forbidden),
    },
    {
      name: "rememberThis stores A's own",
      query: `mutation { rememberThis(input: { text: "Remember that I prefer short answers" }) { ... on MemoryWrite { outcome memory { agentId } } } }`,
      expect: (d) => expect(d.rememberThis).toEqual({ outcome: 'STORED', memory: { agentId: 'agent-a' } }),
    },
    {
      name: "updateMemory of B's memory",
      query: `mutation($id: ID!) { updateMemory(input: { id: $id, content: "overwritten" }) { __typename } }`,
      vars: () => ({ id: ids.bMemory }),
      expect: (d) => expect(d.updateMemory.__typename).toBe(notFound),
    },
    {
      name: 'updateMemory naming B',
      query: `mutation($id: ID!) { updateMemory(input: { agentId: "agent-b", id: $id, importance: 0 }) { __typename } }`,
      vars: () => ({ id: ids.bMemory }),
      expect: (d) => expect(d.updateMemory.__typename).toBe(forbidden),
    },
    {
      name: "deleteMemory of B's memory",
      query: `mutation($id: ID!) { deleteMemory(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bMemory }),
      expect: (d) => expect(d.deleteMemory.__typename).toBe(notFound),
    },
    {
      name: 'deleteMemory naming B',
      query: `mutation($id: ID!) { deleteMemory(agentId: "agent-b", id: $id) { __typename } }`,
      vars: () => ({ id: ids.bMemory }),
      expect: (d) => expect(d.deleteMemory.__typename).toBe(forbidden),
    },
    {
      name: "search over MEMORIES finds only A's",
      query: `{ search(input: { query: "password hint hunter2", scopes: [MEMORIES] }) { ... on SearchResult { hits { text memory { agentId } } } } }`,
      expect: (d) => {
        expect(d.search.hits.length).toBeGreaterThan(0)
        expect(d.search.hits.every((h: any) => h.memory.agentId === 'agent-a')).toBe(true)
        expect(JSON.stringify(d)).not.toContain('hunter2')
      },
    },
    {
      name: "search over KNOWLEDGE finds only A's",
      query: `{ search(input: { query: "b.example private domain knowledge", scopes: [KNOWLEDGE] }) { ... on SearchResult { hits { knowledge { agentId value } } } } }`,
      expect: (d) => {
        expect(d.search.hits.map((h: any) => h.knowledge)).toEqual([
          { agentId: 'agent-a', value: "A's view" },
        ])
      },
    },
    {
      name: 'memoryContext naming B',
      query: `{ memoryContext(input: { agentId: "agent-b", query: "password" }) { __typename } }`,
      expect: (d) => expect(d.memoryContext.__typename).toBe(forbidden),
    },
    {
      name: "memoryContext assembles only A's",
      query: `{ memoryContext(input: { query: "password hint hunter2 b.example private", conversationId: "shared-name" }) { ... on MemoryContext { text } } }`,
      expect: (d) => {
        expect(d.memoryContext.text).toContain("A's password policy")
        expect(d.memoryContext.text).not.toContain('hunter2')
        expect(d.memoryContext.text).not.toContain('private')
      },
    },
    {
      name: 'exportMemory naming B',
      query: `{ exportMemory(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.exportMemory.__typename).toBe(forbidden),
    },
    {
      name: "exportMemory holds only A's",
      query: `{ exportMemory { ... on MemoryExport { document } } }`,
      expect: (d) => {
        expect(d.exportMemory.document.agent.id).toBe('agent-a')
        expect(d.exportMemory.document.memories.length).toBeGreaterThan(0)
        expect(JSON.stringify(d)).not.toContain('hunter2')
        expect(JSON.stringify(d)).not.toContain('private')
      },
    },
    {
      name: 'importMemory naming B',
      query: `mutation($d: JSON!) { importMemory(agentId: "agent-b", document: $d, mode: REPLACE) { __typename } }`,
      vars: () => ({ d: importDocument() }),
      expect: (d) => expect(d.importMemory.__typename).toBe(forbidden),
    },
    {
      name: "importMemory of a document of B's goes into A",
      query: `mutation($d: JSON!) { importMemory(document: $d, mode: MERGE) { ... on ImportReport { memories sessions } } }`,
      vars: () => ({ d: importDocument() }),
      expect: (d) => expect(d.importMemory).toEqual({ memories: 1, sessions: 0 }),
    },
    {
      name: 'backups (admin only)',
      query: `{ backups { __typename } }`,
      expect: (d) => expect(d.backups.__typename).toBe(forbidden),
    },
    {
      name: 'backupDatabase (admin only)',
      query: `mutation { backupDatabase { __typename } }`,
      expect: (d) => expect(d.backupDatabase.__typename).toBe(forbidden),
    },
    {
      name: 'restoreDatabase (admin only)',
      query: `mutation($n: String!) { restoreDatabase(name: $n) { __typename } }`,
      vars: () => ({ n: ids.backup }),
      expect: (d) => expect(d.restoreDatabase.__typename).toBe(forbidden),
    },
    {
      name: 'clearAll naming B (admin only)',
      query: `mutation { clearAll(agentId: "agent-b", confirm: "CLEAR agent-b") { __typename } }`,
      expect: (d) => expect(d.clearAll.__typename).toBe(forbidden),
    },
    {
      name: 'clearAll of every agent (admin only)',
      query: `mutation { clearAll(confirm: "CLEAR ALL AGENTS") { __typename } }`,
      expect: (d) => expect(d.clearAll.__typename).toBe(forbidden),
    },
    {
      name: 'embeddingStatus (admin only: its counts span every agent)',
      query: `{ embeddingStatus { model total } }`,
      errorCode: 'FORBIDDEN',
      expect: (d) => expect(d).toBeNull(),
    },
    {
      name: 'jobQueueStats (admin only: the queue spans every agent)',
      query: `{ jobQueueStats { kind pending } }`,
      errorCode: 'FORBIDDEN',
      expect: (d) => expect(d).toBeNull(),
    },
    {
      name: 'failedJobs naming B (admin only)',
      query: `{ failedJobs(agentId: "agent-b") { id lastError } }`,
      errorCode: 'FORBIDDEN',
      expect: (d) => expect(d).toBeNull(),
    },
    {
      name: 'retryFailedJobs (admin only)',
      query: `mutation { retryFailedJobs { __typename } }`,
      expect: (d) => expect(d.retryFailedJobs.__typename).toBe(forbidden),
    },
    {
      name: 'reembed (admin only)',
      query: `mutation { reembed { __typename } }`,
      expect: (d) => expect(d.reembed.__typename).toBe(forbidden),
    },
    // The knowledge graph (issue 15): reads are the agent's own; every correction is admin work.
    {
      name: 'graphEntities naming B',
      query: `{ graphEntities(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.graphEntities.__typename).toBe(forbidden),
    },
    {
      name: "graphEntities finds only A's, even by B's entity's name",
      query: `{ graphEntities(name: "Bea Hunter2secret") { ... on GraphEntityPage { totalCount matches { entity { agentId name } } } } }`,
      expect: (d) => {
        expect(d.graphEntities.matches.every((m: any) => m.entity.agentId === 'agent-a')).toBe(true)
        expect(JSON.stringify(d)).not.toMatch(/Hunter2secret|Hidden Valley/)
      },
    },
    {
      name: "graphEntity of B's entity",
      query: `query($id: ID!) { graphEntity(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntity }),
      expect: (d) => expect(d.graphEntity.__typename).toBe(notFound),
    },
    {
      name: "graphRelationships lists only A's, history included",
      query: `{ graphRelationships(includeHistory: true) { ... on GraphRelationshipPage { totalCount relationships { agentId source { name } target { name } } } } }`,
      expect: (d) => {
        expect(d.graphRelationships.totalCount).toBe(1)
        expect(d.graphRelationships.relationships.map((r: any) => r.agentId)).toEqual(['agent-a'])
      },
    },
    {
      name: "graphRelationships around B's entity id",
      query: `query($id: ID!) { graphRelationships(entityId: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntity }),
      expect: (d) => expect(d.graphRelationships.__typename).toBe(notFound),
    },
    {
      name: "graphRelationship of B's relationship",
      query: `query($id: ID!) { graphRelationship(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bRelationship }),
      expect: (d) => expect(d.graphRelationship.__typename).toBe(notFound),
    },
    {
      name: "graphNeighbourhood of B's entity id",
      query: `query($id: ID!) { graphNeighbourhood(entityId: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntity }),
      expect: (d) => expect(d.graphNeighbourhood.__typename).toBe(notFound),
    },
    {
      name: "graphNeighbourhood by B's entity's name finds nothing of B's",
      query: `{ graphNeighbourhood(name: "Bea Hunter2secret", depth: 4) { ... on GraphNeighbourhood { center { agentId } nodes { entity { agentId name } } } } }`,
      expect: (d) => expect(JSON.stringify(d)).not.toMatch(/agent-b|Hunter2secret|Hidden Valley/),
    },
    {
      name: 'graphPaths naming B',
      query: `query($id: ID!) { graphPaths(agentId: "agent-b", fromId: $id, toName: "Hidden Valley") { __typename } }`,
      vars: () => ({ id: ids.bEntity }),
      expect: (d) => expect(d.graphPaths.__typename).toBe(forbidden),
    },
    {
      name: "graphPaths between B's entities",
      query: `query($from: ID!, $to: ID!) { graphPaths(fromId: $from, toId: $to) { __typename } }`,
      vars: () => ({ from: ids.bEntity, to: ids.bPlace }),
      expect: (d) => expect(d.graphPaths.__typename).toBe(notFound),
    },
    {
      name: "createGraphEntity in A's own graph (admin only)",
      query: `mutation { createGraphEntity(input: { type: PERSON, name: "Mallory" }) { __typename } }`,
      expect: (d) => expect(d.createGraphEntity.__typename).toBe(forbidden),
    },
    {
      name: 'createGraphEntity naming B (admin only)',
      query: `mutation { createGraphEntity(input: { agentId: "agent-b", type: PERSON, name: "Mallory" }) { __typename } }`,
      expect: (d) => expect(d.createGraphEntity.__typename).toBe(forbidden),
    },
    {
      name: "updateGraphEntity of B's entity (admin only)",
      query: `mutation($id: ID!) { updateGraphEntity(input: { agentId: "agent-b", id: $id, name: "Renamed" }) { __typename } }`,
      vars: () => ({ id: ids.bEntity }),
      expect: (d) => expect(d.updateGraphEntity.__typename).toBe(forbidden),
    },
    {
      name: "mergeGraphEntities of B's entities (admin only)",
      query: `mutation($from: ID!, $into: ID!) { mergeGraphEntities(fromId: $from, intoId: $into) { __typename } }`,
      vars: () => ({ from: ids.bPlace, into: ids.bEntity }),
      expect: (d) => expect(d.mergeGraphEntities.__typename).toBe(forbidden),
    },
    {
      name: "deleteGraphEntity of B's entity (admin only)",
      query: `mutation($id: ID!) { deleteGraphEntity(agentId: "agent-b", id: $id) { __typename } }`,
      vars: () => ({ id: ids.bEntity }),
      expect: (d) => expect(d.deleteGraphEntity.__typename).toBe(forbidden),
    },
    {
      name: "createGraphRelationship between B's entities (admin only)",
      query: `mutation($s: ID!, $t: ID!) { createGraphRelationship(input: { sourceId: $s, relation: "owns", targetId: $t }) { __typename } }`,
      vars: () => ({ s: ids.bEntity, t: ids.bPlace }),
      expect: (d) => expect(d.createGraphRelationship.__typename).toBe(forbidden),
    },
    {
      name: "updateGraphRelationship of B's relationship (admin only)",
      query: `mutation($id: ID!) { updateGraphRelationship(input: { id: $id, confidence: 0 }) { __typename } }`,
      vars: () => ({ id: ids.bRelationship }),
      expect: (d) => expect(d.updateGraphRelationship.__typename).toBe(forbidden),
    },
    {
      name: "retireGraphRelationship of B's relationship (admin only)",
      query: `mutation($id: ID!) { retireGraphRelationship(input: { agentId: "agent-b", id: $id }) { __typename } }`,
      vars: () => ({ id: ids.bRelationship }),
      expect: (d) => expect(d.retireGraphRelationship.__typename).toBe(forbidden),
    },
    {
      name: "deleteGraphRelationship of B's relationship (admin only)",
      query: `mutation($id: ID!) { deleteGraphRelationship(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bRelationship }),
      expect: (d) => expect(d.deleteGraphRelationship.__typename).toBe(forbidden),
    },
    // Trajectory memory (issue 16): every operation of the registry and of run memory.
    {
      name: 'run of B by naming agent B',
      query: `{ run(agentId: "agent-b", runId: "b-run") { __typename } }`,
      expect: (d) => expect(d.run.__typename).toBe(forbidden),
    },
    {
      name: "run with B's run id is absent for A",
      query: `{ run(runId: "b-run") { __typename } }`,
      expect: (d) => expect(d.run).toBeNull(),
    },
    {
      name: "runs lists only A's",
      query: `{ runs(limit: 200) { ... on RunPage { totalCount runs { id goal } } } }`,
      expect: (d) => {
        expect(d.runs.runs.map((r: any) => r.id)).toEqual(['a-run'])
        expect(JSON.stringify(d)).not.toContain('hunter2')
      },
    },
    {
      name: "runs on B's domain finds none",
      query: `{ runs(domain: "b-secret.example") { ... on RunPage { totalCount } } }`,
      expect: (d) => expect(d.runs.totalCount).toBe(0),
    },
    {
      name: "runLineage of B's run",
      query: `{ runLineage(runId: "b-run") { __typename } }`,
      expect: (d) => expect(d.runLineage.__typename).toBe(notFound),
    },
    {
      name: 'runLineage naming B',
      query: `{ runLineage(agentId: "agent-b", runId: "b-run") { __typename } }`,
      expect: (d) => expect(d.runLineage.__typename).toBe(forbidden),
    },
    {
      name: "startRun in B's registry",
      query: `mutation { startRun(input: { agentId: "agent-b", goal: "injected", domain: "b-secret.example" }) { __typename } }`,
      expect: (d) => expect(d.startRun.__typename).toBe(forbidden),
    },
    {
      name: "reportRunProgress of B's run",
      query: `mutation { reportRunProgress(input: { runId: "b-running", turnCount: 99, currentUrl: "https://evil.example" }) { __typename } }`,
      expect: (d) => expect(d.reportRunProgress.__typename).toBe(notFound),
    },
    {
      name: "completeRun of B's run",
      query: `mutation { completeRun(input: { runId: "b-running", outcome: "hijacked", steps: [{ action: "click" }] }) { __typename } }`,
      expect: (d) => expect(d.completeRun.__typename).toBe(notFound),
    },
    {
      name: "failRun of B's run naming B",
      query: `mutation { failRun(input: { agentId: "agent-b", runId: "b-running", reason: "hijacked" }) { __typename } }`,
      expect: (d) => expect(d.failRun.__typename).toBe(forbidden),
    },
    {
      name: "failRun of B's run",
      query: `mutation { failRun(input: { runId: "b-running", reason: "hijacked" }) { __typename } }`,
      expect: (d) => expect(d.failRun.__typename).toBe(notFound),
    },
    {
      name: "resumeRun of B's run",
      query: `mutation { resumeRun(input: { runId: "b-run" }) { __typename } }`,
      expect: (d) => expect(d.resumeRun.__typename).toBe(notFound),
    },
    {
      name: "forkRun of B's run",
      query: `mutation { forkRun(input: { runId: "b-run", goal: "steal the trajectory" }) { __typename } }`,
      expect: (d) => expect(d.forkRun.__typename).toBe(notFound),
    },
    {
      name: "deleteRun of B's run",
      query: `mutation { deleteRun(runId: "b-run") { __typename } }`,
      expect: (d) => expect(d.deleteRun.__typename).toBe(notFound),
    },
    {
      name: "runContext on B's domain and goal holds nothing of B's",
      query: `{ runContext(domain: "b-secret.example", goal: "B hunter2 secret errand") { ... on RunContext { text reference { trajectory { id } } sections { availableItems } } } }`,
      expect: (d) => {
        expect(d.runContext.reference).toBeNull()
        expect(d.runContext.sections.every((s: any) => s.availableItems === 0)).toBe(true)
        expect(JSON.stringify(d)).not.toContain('hunter2')
      },
    },
    {
      name: "runContext of B's run",
      query: `{ runContext(runId: "b-running") { __typename } }`,
      expect: (d) => expect(d.runContext.__typename).toBe(notFound),
    },
    {
      name: "matchTrajectories on B's domain finds none",
      query: `{ matchTrajectories(domain: "b-secret.example", goal: "B hunter2 secret errand") { ... on QueryMatchTrajectoriesSuccess { data { trajectory { id } } } } }`,
      expect: (d) => expect(d.matchTrajectories.data).toEqual([]),
    },
    {
      name: "recordTrajectory with B's run id",
      query: `mutation { recordTrajectory(input: { domain: "b-secret.example", goal: "injected", runId: "b-run", steps: [{ action: "click" }] }) { __typename } }`,
      expect: (d) => expect(d.recordTrajectory.__typename).toBe(notFound),
    },
    {
      name: "trajectories lists only A's (none)",
      query: `{ trajectories(limit: 200) { ... on TrajectoryPage { totalCount } } }`,
      expect: (d) => expect(d.trajectories.totalCount).toBe(0),
    },
    {
      name: "trajectory of B's id",
      query: `query($id: ID!) { trajectory(id: $id) { __typename } }`,
      vars: () => ({ id: ids.bTrajectory }),
      expect: (d) => expect(d.trajectory).toBeNull(),
    },
    {
      name: "deleteTrajectory of B's",
      query: `mutation($id: ID!) { deleteTrajectory(id: $id) { ... on RunMemoryDeleted { deleted } } }`,
      vars: () => ({ id: ids.bTrajectory }),
      expect: (d) => expect(d.deleteTrajectory.deleted).toBe(false),
    },
    {
      name: "runSessions of B's domain are A's own (none)",
      query: `{ runSessions(domain: "b-secret.example") { ... on QueryRunSessionsSuccess { data { id } } } }`,
      expect: (d) => expect(d.runSessions.data).toEqual([]),
    },
    {
      name: 'recordKnowledge naming B',
      query: `mutation { recordKnowledge(input: { agentId: "agent-b", domain: "b-secret.example", facts: [{ type: QUIRK, key: "vault", value: "overwritten" }] }) { __typename } }`,
      expect: (d) => expect(d.recordKnowledge.__typename).toBe(forbidden),
    },
    {
      name: "recordKnowledge with B's run id",
      query: `mutation { recordKnowledge(input: { domain: "b-secret.example", runId: "b-run", facts: [{ type: QUIRK, key: "vault", value: "overwritten" }] }) { __typename } }`,
      expect: (d) => expect(d.recordKnowledge.__typename).toBe(notFound),
    },
    {
      name: "appFacts lists only A's (none)",
      query: `{ appFacts(limit: 200) { ... on AppFactPage { totalCount } } }`,
      expect: (d) => expect(d.appFacts.totalCount).toBe(0),
    },
    {
      name: "deleteAppFact of B's",
      query: `mutation($id: ID!) { deleteAppFact(id: $id) { ... on RunMemoryDeleted { deleted } } }`,
      vars: () => ({ id: ids.bFact }),
      expect: (d) => expect(d.deleteAppFact.deleted).toBe(false),
    },
    {
      name: "recordSelector with B's run id",
      query: `mutation { recordSelector(input: { domain: "b-secret.example", runId: "b-run", selectors: [{ element: "input \\"Password\\"", selector: "#password", outcome: FAILURE }] }) { __typename } }`,
      expect: (d) => expect(d.recordSelector.__typename).toBe(notFound),
    },
    {
      name: "knownSelectors lists only A's (none)",
      query: `{ knownSelectors(domain: "b-secret.example") { ... on KnownSelectorPage { totalCount } } }`,
      expect: (d) => expect(d.knownSelectors.totalCount).toBe(0),
    },
    {
      name: "deleteKnownSelector of B's",
      query: `mutation($id: ID!) { deleteKnownSelector(id: $id) { ... on RunMemoryDeleted { deleted } } }`,
      vars: () => ({ id: ids.bSelector }),
      expect: (d) => expect(d.deleteKnownSelector.deleted).toBe(false),
    },
    {
      name: "runHints lists only A's (none)",
      query: `{ runHints { ... on QueryRunHintsSuccess { data { id } } } }`,
      expect: (d) => expect(d.runHints.data).toEqual([]),
    },
    {
      name: 'addRunHint naming B',
      query: `mutation { addRunHint(input: { agentId: "agent-b", text: "injected" }) { __typename } }`,
      expect: (d) => expect(d.addRunHint.__typename).toBe(forbidden),
    },
    {
      name: "updateRunHint of B's hint",
      query: `mutation($id: ID!) { updateRunHint(input: { id: $id, text: "rewritten" }) { __typename } }`,
      vars: () => ({ id: ids.bHint }),
      expect: (d) => expect(d.updateRunHint.__typename).toBe(notFound),
    },
    {
      name: "deleteRunHint of B's hint",
      query: `mutation($id: ID!) { deleteRunHint(id: $id) { ... on RunMemoryDeleted { deleted } } }`,
      vars: () => ({ id: ids.bHint }),
      expect: (d) => expect(d.deleteRunHint.deleted).toBe(false),
    },
    {
      name: "runDomains lists only A's",
      query: `{ runDomains { ... on QueryRunDomainsSuccess { data { domain } } } }`,
      expect: (d) => expect(JSON.stringify(d)).not.toContain('b-secret'),
    },
    {
      name: "deleteRunDomain of B's domain removes nothing of B's",
      query: `mutation { deleteRunDomain(domain: "b-secret.example") { ... on RunDeletion { runs trajectories facts selectors runSessions } } }`,
      expect: (d) =>
        expect(d.deleteRunDomain).toEqual({
          runs: 0,
          trajectories: 0,
          facts: 0,
          selectors: 0,
          runSessions: 0,
        }),
    },
    {
      name: 'deleteRunDomain naming B',
      query: `mutation { deleteRunDomain(agentId: "agent-b", domain: "b-secret.example") { __typename } }`,
      expect: (d) => expect(d.deleteRunDomain.__typename).toBe(forbidden),
    },
    {
      name: 'clearRunMemoryScope naming B',
      query: `mutation { clearRunMemoryScope(agentId: "agent-b", scope: "default") { __typename } }`,
      expect: (d) => expect(d.clearRunMemoryScope.__typename).toBe(forbidden),
    },
    {
      name: "clearRunMemoryScope of A's own scope leaves B's",
      query: `mutation { clearRunMemoryScope(scope: "default") { ... on RunDeletion { trajectories facts hints } } }`,
      expect: (d) => expect(d.clearRunMemoryScope).toEqual({ trajectories: 0, facts: 0, hints: 0 }),
    },
    {
      name: 'importAgentMemory naming B',
      query: `mutation($files: [AgentMemoryFileInput!]!) { importAgentMemory(input: { agentId: "agent-b", files: $files }) { __typename } }`,
      vars: () => ({ files: AGENT_MEMORY_FILES }),
      expect: (d) => expect(d.importAgentMemory.__typename).toBe(forbidden),
    },
    {
      name: 'exportAgentMemory naming B',
      query: `{ exportAgentMemory(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.exportAgentMemory.__typename).toBe(forbidden),
    },
    {
      name: "exportAgentMemory holds only A's",
      query: `{ exportAgentMemory { ... on AgentMemoryExport { files { path content } } } }`,
      expect: (d) => expect(JSON.stringify(d)).not.toMatch(/hunter2|b-secret/),
    },
    {
      // After the reads above: A's own import of a directory naming B's domain goes into A's memory.
      name: "importAgentMemory of a directory about B's domain is A's own",
      query: `mutation($files: [AgentMemoryFileInput!]!) { importAgentMemory(input: { files: $files }) { ... on AgentMemoryImport { facts } } }`,
      vars: () => ({ files: AGENT_MEMORY_FILES }),
      expect: (d) => expect(d.importAgentMemory.facts).toBe(1),
    },
    {
      // Last: A then holds the same text as B (so no A view above may contain it).
      name: "createMemory with B's exact content is A's own, not a duplicate of B's",
      query: `mutation { createMemory(input: { content: "B's password hint is hunter2", category: FACT }) { ... on MemoryWrite { outcome duplicateOf { id } memory { agentId } } } }`,
      expect: (d) =>
        expect(d.createMemory).toEqual({
          outcome: 'STORED',
          duplicateOf: null,
          memory: { agentId: 'agent-a' },
        }),
    },
  ]

  /** A valid export document that claims to be B's. */
  const importDocument = () => ({
    format: 'engram.export',
    version: 1,
    agent: { id: 'agent-b', name: 'agent-b' },
    embeddingModel: null,
    memories: [
      {
        ref: 'm1',
        content: 'An imported memory about gardening',
        category: 'fact',
        tags: [],
        importance: 0.5,
        confidence: 1,
        pinned: false,
        userId: null,
        sourceConversationId: null,
        sourceMessageId: null,
        accessCount: 0,
        lastAccessedAt: null,
        validFrom: '2026-01-01T00:00:00.000Z',
        validUntil: null,
        supersededBy: null,
        metadata: {},
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      },
    ],
    knowledge: [],
    sessions: [],
    vectors: [],
  })

  // Subscriptions run over SSE: the refusal is the stream's one event.
  const subscriptionCases: { name: string; query: string; code: string }[] = [
    {
      name: 'embeddingProgress (operators only)',
      query: `subscription { embeddingProgress { model total } }`,
      code: 'FORBIDDEN',
    },
    {
      name: 'optimizerSnapshots naming B',
      query: `subscription { optimizerSnapshots(agentId: "agent-b") { id agentId } }`,
      code: 'FORBIDDEN',
    },
    {
      name: 'formationActivityEvents naming B',
      query: `subscription { formationActivityEvents(agentId: "agent-b") { agentId kind } }`,
      code: 'FORBIDDEN',
    },
    {
      name: 'runEvents naming B',
      query: `subscription { runEvents(agentId: "agent-b") { kind run { id goal } } }`,
      code: 'FORBIDDEN',
    },
    {
      name: 'runEvents with a bad run id',
      query: `subscription { runEvents(runId: "not a run id") { kind } }`,
      code: 'VALIDATION',
    },
  ]

  it('covers every root field of the schema', async () => {
    const { schema } = await import('../src/schema/index.ts')
    const covered = new Set(
      cases.map((c) => /^\s*(?:mutation|query)?(?:\([^)]*\))?\s*\{\s*(\w+)/.exec(c.query)?.[1]),
    )
    const roots = [
      ...Object.keys(schema.getQueryType()!.getFields()),
      ...Object.keys(schema.getMutationType()!.getFields()),
    ]
    const elsewhere = partCoveredFields()
    expect(roots.filter((name) => !covered.has(name) && !elsewhere.has(name))).toEqual([])
    const subscribed = new Set(subscriptionCases.map((c) => /^subscription\s*\{\s*(\w+)/.exec(c.query)?.[1]))
    const subscriptions = Object.keys(schema.getSubscriptionType()!.getFields())
    expect(subscriptions.filter((name) => !subscribed.has(name) && !elsewhere.has(name))).toEqual([])
  })

  it.each(cases)('$name', async (c) => {
    const before = await fingerprint()
    const result = await t.gql(c.query, c.vars?.() ?? {}, keyA)
    if (c.errorCode) expect(result.errors?.map((e) => e.extensions?.code)).toEqual([c.errorCode])
    else expect(result.errors).toBeUndefined()
    c.expect(result.data)
    expect(await fingerprint()).toEqual(before)
  })

  it.each(subscriptionCases)('subscription $name', async (c) => {
    const before = await fingerprint()
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${keyA}`,
      },
      body: JSON.stringify({ query: c.query }),
    })
    const events = (await response.text())
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(5)))
    expect(events).toHaveLength(1)
    expect(events[0].data ?? null).toBeNull()
    expect(events[0].errors.map((e: any) => e.extensions.code)).toEqual([c.code])
    expect(await fingerprint()).toEqual(before)
  })

  it('B still reads its own data with its own key', async () => {
    const result = await t.gql(
      `{ session(conversationId: "shared-name") { ... on Session { messageCount } } }`,
      {},
      keyB,
    )
    expect(result.data.session.messageCount).toBe(1)
  })
})
