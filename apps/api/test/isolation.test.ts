import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Agent A's key is pointed at every operation with agent B's data: nothing of B's may be read or
// changed. B's state is fingerprinted before and compared after.
describe("an agent key never reads or changes another agent's data", () => {
  let t: TestApp
  let keyA: string
  let keyB: string
  const ids = { bMessage: '', bEntry: '', bKnowledge: '', aEntry: '', bApiKey: '' }

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
  })

  beforeAll(async () => {
    t = await createTestApp()
    keyA = await createAgentKey(t, 'agent-a')
    keyB = await createAgentKey(t, 'agent-b')
    const b = await t.gql(
      `mutation { addMessage(input: { conversationId: "shared-name", role: USER, content: "B's secret: password is hunter2 at https://b.example" }) { ... on Message { id } } }`,
      {},
      keyB,
    )
    ids.bMessage = b.data.addMessage.id
    await t.gql(
      `mutation { addMessage(input: { conversationId: "shared-name", role: USER, content: "A's own message about https://a.example" }) { ... on Message { id } } }`,
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
  })
  afterAll(() => t.close())

  // Each case: an operation sent with A's key, and what A must get back.
  const forbidden = 'ForbiddenError'
  const notFound = 'NotFoundError'
  const cases: {
    name: string
    query: string
    vars?: () => Record<string, unknown>
    expect: (data: any) => void
  }[] = [
    {
      name: 'session of B by naming agent B',
      query: `{ session(agentId: "agent-b", conversationId: "shared-name") { __typename } }`,
      expect: (d) => expect(d.session.__typename).toBe(forbidden),
    },
    {
      name: "session with the same conversation id is A's own",
      query: `{ session(conversationId: "shared-name") { ... on Session { agentId messages { edges { node { content } } } } } }`,
      expect: (d) => {
        expect(d.session.agentId).toBe('agent-a')
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
      query: `{ contextWindow(conversationId: "shared-name") { ... on ContextWindow { full { content } } } }`,
      expect: (d) => expect(JSON.stringify(d)).not.toContain('hunter2'),
    },
    {
      name: 'addMessage into B',
      query: `mutation { addMessage(input: { agentId: "agent-b", conversationId: "shared-name", role: USER, content: "injected" }) { __typename } }`,
      expect: (d) => expect(d.addMessage.__typename).toBe(forbidden),
    },
    {
      name: 'addMessages into B',
      query: `mutation { addMessages(input: { agentId: "agent-b", conversationId: "x", messages: [{ role: USER, content: "injected" }] }) { __typename } }`,
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
      query: `{ search(input: { query: "secret password hunter2 example" }) { ... on SearchResult { hits { message { content } } } } }`,
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
    expect(roots.filter((name) => !covered.has(name))).toEqual([])
  })

  it.each(cases)('$name', async (c) => {
    const before = await fingerprint()
    const result = await t.gql(c.query, c.vars?.() ?? {}, keyA)
    expect(result.errors).toBeUndefined()
    c.expect(result.data)
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
