import type {
  AgentArchive,
  ArchivedGraph,
  NewArchivedMemory,
  NewArchivedSession,
  NewArchivedVector,
  Repositories,
  Storage,
} from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const at = (iso: string) => new Date(iso)

const memory = (content: string, createdAt: string): NewArchivedMemory => ({
  content,
  category: 'fact',
  tags: ['conformance'],
  importance: 0.6,
  confidence: 0.9,
  pinned: false,
  userId: 'user-1',
  sourceConversationId: null,
  sourceMessageId: null,
  accessCount: 2,
  lastAccessedAt: at('2026-01-12T00:00:00.000Z'),
  validFrom: at(createdAt),
  validUntil: null,
  metadata: { origin: 'import' },
  contentHash: `hash-${content}`,
  tokenCount: 3,
  createdAt: at(createdAt),
  updatedAt: at(createdAt),
})

const fact = (key: string, value: string, createdAt: string) => ({
  category: 'preference',
  key,
  value,
  confidence: 0.8,
  storeCount: 1,
  useCount: 0,
  lastUsedAt: null,
  lastDecayAt: null,
  createdAt: at(createdAt),
  updatedAt: at(createdAt),
})

const conversation = (conversationId: string, createdAt: string): NewArchivedSession => ({
  conversationId,
  createdAt: at(createdAt),
  updatedAt: at(createdAt),
  messages: [
    {
      role: 'user',
      speaker: 'Ada',
      content: `hello from ${conversationId}`,
      tokenCount: 3,
      isCompressed: false,
      metadata: { channel: 'chat' },
      timestamp: at('2026-01-10T10:00:00.000Z'),
      createdAt: at('2026-01-10T10:00:00.000Z'),
      entry: {
        type: 'short_term',
        content: `hello from ${conversationId}`,
        tokenCount: 3,
        relevance: 0.7,
        isCompressed: false,
        metadata: {},
        timestamp: at('2026-01-10T10:00:00.000Z'),
        createdAt: at('2026-01-10T10:00:00.000Z'),
      },
    },
    {
      role: 'assistant',
      speaker: null,
      content: 'hi',
      tokenCount: 1,
      isCompressed: false,
      metadata: {},
      timestamp: at('2026-01-10T10:00:01.000Z'),
      createdAt: at('2026-01-10T10:00:01.000Z'),
      entry: null,
    },
  ],
})

const snapshot = (timestamp: string) => ({
  tokensBefore: 900,
  tokensAfter: 600,
  entriesCompressed: 2,
  entriesDropped: 1,
  entriesPromoted: 0,
  usageRatio: 0.7,
  compressionTriggerRatio: 0.8,
  fullMessageWindow: 10,
  minRelevanceScore: 0.3,
  timestamp: at(timestamp),
})

const bytes = (...values: number[]) => new Uint8Array(new Float32Array(values).buffer)

const vector = (kind: string, ownerId: string, model: string): NewArchivedVector => ({
  kind,
  ownerId,
  model,
  dimensions: 2,
  vector: bytes(0.6, 0.8),
  contentHash: `hash-${kind}-${ownerId}`,
  createdAt: at('2026-01-14T00:00:00.000Z'),
})

/** A graph as an import hands it over: its own keys (k1…), sources among the memory just written. */
const graphOf = (memories: { newer: string; older: string }, messages: string[]): ArchivedGraph => {
  const entity = (id: string, name: string, createdAt: string, extra = {}) => ({
    id,
    userId: 'user-1',
    type: 'PERSON' as const,
    name,
    aliases: [`${name.split(' ')[0]}`],
    summary: null,
    embedding: null,
    mentionCount: 2,
    origin: 'FORMED' as const,
    firstSeenAt: at(createdAt),
    lastSeenAt: at(createdAt),
    createdAt: at(createdAt),
    updatedAt: at(createdAt),
    ...extra,
  })
  const edge = (id: string, sourceId: string, targetId: string, createdAt: string, extra = {}) => ({
    id,
    userId: null,
    sourceId,
    relation: 'works at',
    targetId,
    confidence: 0.8,
    validFrom: at('2025-01-01T00:00:00.000Z'),
    validUntil: null,
    learntAt: at(createdAt),
    retiredAt: null,
    retiredReason: null,
    supersededById: null,
    origin: 'FORMED' as const,
    createdAt: at(createdAt),
    updatedAt: at(createdAt),
    ...extra,
  })
  return {
    // Written newest first: a read lists them oldest first all the same.
    entities: [
      entity('k-globex', 'Globex Corp', '2026-01-11T00:00:00.000Z', { type: 'COMPANY', origin: 'MANUAL' }),
      entity('k-dana', 'Dana Kim', '2026-01-09T00:00:00.000Z', {
        embedding: bytes(0.6, 0.8),
        summary: 'a lead',
      }),
      entity('k-acme', 'Acme Corp', '2026-01-10T00:00:00.000Z', { type: 'COMPANY' }),
    ],
    relationships: [
      edge('k-old', 'k-dana', 'k-acme', '2026-01-10T00:00:00.000Z', {
        validUntil: at('2026-01-11T00:00:00.000Z'),
        supersededById: 'k-new',
        retiredAt: at('2026-01-12T00:00:00.000Z'),
        retiredReason: 'wrong',
      }),
      edge('k-new', 'k-dana', 'k-globex', '2026-01-11T00:00:00.000Z', { origin: 'MANUAL', confidence: 0.9 }),
    ],
    evidence: [
      {
        entityId: 'k-dana',
        relationshipId: null,
        memoryId: memories.older,
        messageId: messages[0] as string,
        createdAt: at('2026-01-10T00:00:00.000Z'),
      },
      {
        entityId: null,
        relationshipId: 'k-old',
        memoryId: memories.older,
        messageId: null,
        createdAt: at('2026-01-10T00:00:00.000Z'),
      },
      {
        entityId: null,
        relationshipId: 'k-new',
        memoryId: null,
        messageId: messages[1] as string,
        createdAt: at('2026-01-11T00:00:00.000Z'),
      },
    ],
  }
}

/** Writes one agent's memory as an import does; returns the ids the archive handed out. */
async function writeMemory(tx: Repositories, agentId: string) {
  const archive = tx.archive
  await archive.setMemorySettings(agentId, { settings: { autoExtract: false }, contextBudgets: {} })
  await archive.setPrivacyPolicy(agentId, {
    mode: 'reject',
    patterns: [{ name: 'ticket', pattern: 'TICKET-\\d+' }],
  })
  await tx.parameters.put(agentId, 'minRelevance', 0.25)
  // Written newest first: a read lists them oldest first all the same.
  const [newer, older] = await archive.addMemories(agentId, [
    memory('the new address', '2026-01-11T00:00:00.000Z'),
    memory('the old address', '2026-01-09T00:00:00.000Z'),
  ])
  await archive.linkSupersessions(agentId, [{ id: older as string, supersededById: newer as string }])
  const [coffee] = await archive.putKnowledge(agentId, [fact('coffee', 'black', '2026-01-08T00:00:00.000Z')])
  const messages = await archive.addConversation(agentId, conversation('talk-1', '2026-01-10T09:00:00.000Z'))
  await archive.addSnapshots(agentId, [
    snapshot('2026-01-13T00:00:00.000Z'),
    snapshot('2026-01-12T00:00:00.000Z'),
  ])
  await archive.addVectors(agentId, [
    vector('memory', newer as string, 'model-a'),
    vector('knowledge', coffee as string, 'model-a'),
    vector('message', messages[0] as string, 'model-a'),
    vector('message', messages[1] as string, 'model-b'),
  ])
  await archive.addGraph(agentId, graphOf({ newer: newer as string, older: older as string }, messages))
  return { newer: newer as string, older: older as string, coffee: coffee as string, messages }
}

/** An archive without its ids: what must survive a round trip into another agent. */
function withoutIds(archive: AgentArchive | null) {
  if (!archive) return null
  const memoryIndex = new Map(archive.memories.map((m, i) => [m.id, i]))
  const messageIndex = new Map(archive.sessions.flatMap((s) => s.messages).map((m, i) => [m.id, i]))
  const { entities, relationships, evidence } = archive.graph
  const entityIndex = new Map(entities.map((e, i) => [e.id, i]))
  const relationshipIndex = new Map(relationships.map((r, i) => [r.id, i]))
  const indexOf = (index: Map<string, number>, id: string | null) => (id == null ? null : index.get(id))
  return {
    graph: {
      entities: entities.map(({ id: _id, embedding, ...e }) => ({
        ...e,
        embedding: embedding && [...embedding],
      })),
      relationships: relationships.map(({ id: _id, sourceId, targetId, supersededById, ...r }) => ({
        ...r,
        source: indexOf(entityIndex, sourceId),
        target: indexOf(entityIndex, targetId),
        supersededBy: indexOf(relationshipIndex, supersededById),
      })),
      evidence: evidence.map((ev) => ({
        entity: indexOf(entityIndex, ev.entityId),
        relationship: indexOf(relationshipIndex, ev.relationshipId),
        memory: indexOf(memoryIndex, ev.memoryId),
        message: indexOf(messageIndex, ev.messageId),
        createdAt: ev.createdAt,
      })),
    },
    agent: { memorySettings: archive.agent.memorySettings, privacyPolicy: archive.agent.privacyPolicy },
    memories: archive.memories.map(({ id: _id, supersededById, ...m }) => ({
      ...m,
      supersededBy: supersededById == null ? null : memoryIndex.get(supersededById),
    })),
    knowledge: archive.knowledge.map(({ id: _id, ...k }) => k),
    sessions: archive.sessions.map((s) => ({ ...s, messages: s.messages.map(({ id: _id, ...m }) => m) })),
    vectors: archive.vectors.map((v) => ({ kind: v.kind, dimensions: v.dimensions, vector: [...v.vector] })),
    parameters: archive.parameters,
    snapshots: archive.snapshots,
  }
}

const readAll = (storage: Storage, agentId: string, vectorModel = 'model-a') =>
  storage.repositories.archive.read(agentId, { vectorModel, includeSnapshots: true })

export function describeAgentArchive(initializer: StorageInitializer): void {
  describe(`${initializer.name}: agent archive (export and import)`, () => {
    const fixture = useFixture(initializer)

    it('reads back what an import wrote, in document order, and nothing of another agent', async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', 'Agent A')
      await storage.repositories.agents.upsert('agent-b', null)
      const ids = await storage.unitOfWork.transaction((tx) => writeMemory(tx, 'agent-a'))
      const archive = await readAll(storage, 'agent-a')
      expect(archive?.agent).toEqual({
        id: 'agent-a',
        name: 'Agent A',
        memorySettings: { settings: { autoExtract: false }, contextBudgets: {} },
        privacyPolicy: { mode: 'reject', patterns: [{ name: 'ticket', pattern: 'TICKET-\\d+' }] },
      })
      expect(archive?.memories.map((m) => [m.id, m.content, m.supersededById])).toEqual([
        [ids.older, 'the old address', ids.newer],
        [ids.newer, 'the new address', null],
      ])
      const {
        contentHash: _hash,
        tokenCount: _tokens,
        ...stored
      } = memory('the old address', '2026-01-09T00:00:00.000Z')
      expect(archive?.memories[0]).toEqual({ ...stored, id: ids.older, supersededById: ids.newer })
      expect(archive?.knowledge).toEqual([
        { ...fact('coffee', 'black', '2026-01-08T00:00:00.000Z'), id: ids.coffee },
      ])
      const written = conversation('talk-1', '2026-01-10T09:00:00.000Z')
      expect(archive?.sessions).toEqual([
        {
          ...written,
          messages: written.messages.map((m, i) => ({ ...m, id: ids.messages[i] })),
        },
      ])
      // Only the model asked for: another model's vectors are not comparable.
      expect(
        archive?.vectors
          .map((v) => ({ ...v, vector: [...v.vector] }))
          .sort((a, b) => a.kind.localeCompare(b.kind)),
      ).toEqual([
        { kind: 'knowledge', ownerId: ids.coffee, dimensions: 2, vector: [...bytes(0.6, 0.8)] },
        { kind: 'memory', ownerId: ids.newer, dimensions: 2, vector: [...bytes(0.6, 0.8)] },
        { kind: 'message', ownerId: ids.messages[0], dimensions: 2, vector: [...bytes(0.6, 0.8)] },
      ])
      expect(archive?.parameters).toEqual([{ key: 'minRelevance', value: 0.25 }])
      expect(archive?.snapshots?.map((s) => s.timestamp.toISOString())).toEqual([
        '2026-01-12T00:00:00.000Z',
        '2026-01-13T00:00:00.000Z',
      ])
      expect(
        (
          await storage.repositories.archive.read('agent-a', {
            vectorModel: 'model-b',
            includeSnapshots: false,
          })
        )?.snapshots,
      ).toBeNull()
      // The graph, oldest first, linked by the store's ids; the evidence's sources are the agent's rows.
      const graph = archive?.graph
      expect(graph?.entities.map((e) => [e.name, e.type, e.origin, e.aliases])).toEqual([
        ['Dana Kim', 'PERSON', 'FORMED', ['Dana']],
        ['Acme Corp', 'COMPANY', 'FORMED', ['Acme']],
        ['Globex Corp', 'COMPANY', 'MANUAL', ['Globex']],
      ])
      expect([...(graph?.entities[0]?.embedding ?? [])]).toEqual([...bytes(0.6, 0.8)])
      expect(graph?.entities[0]).toMatchObject({ summary: 'a lead', userId: 'user-1', mentionCount: 2 })
      const [dana, acme, globex] = (graph?.entities ?? []).map((e) => e.id)
      const [old, current] = graph?.relationships ?? []
      expect(old).toMatchObject({
        sourceId: dana,
        targetId: acme,
        supersededById: current?.id,
        retiredReason: 'wrong',
        validUntil: at('2026-01-11T00:00:00.000Z'),
        retiredAt: at('2026-01-12T00:00:00.000Z'),
      })
      expect(current).toMatchObject({
        sourceId: dana,
        targetId: globex,
        supersededById: null,
        confidence: 0.9,
      })
      expect(graph?.evidence).toEqual([
        {
          entityId: dana,
          relationshipId: null,
          memoryId: ids.older,
          messageId: ids.messages[0],
          createdAt: at('2026-01-10T00:00:00.000Z'),
        },
        {
          entityId: null,
          relationshipId: old?.id,
          memoryId: ids.older,
          messageId: null,
          createdAt: at('2026-01-10T00:00:00.000Z'),
        },
        {
          entityId: null,
          relationshipId: current?.id,
          memoryId: null,
          messageId: ids.messages[1],
          createdAt: at('2026-01-11T00:00:00.000Z'),
        },
      ])
      const other = await readAll(storage, 'agent-b')
      expect(other).toMatchObject({
        memories: [],
        knowledge: [],
        sessions: [],
        vectors: [],
        parameters: [],
        graph: { entities: [], relationships: [], evidence: [] },
      })
      expect(await readAll(storage, 'nobody')).toBeNull()
    })

    it('round trip: an archive read from one agent and written into another reads back the same', async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-copy', null)
      await storage.unitOfWork.transaction((tx) => writeMemory(tx, 'agent-a'))
      const original = await readAll(storage, 'agent-a')
      if (!original) throw new Error('agent-a has no archive')
      await storage.unitOfWork.transaction(async (tx) => {
        const archive = tx.archive
        await archive.setMemorySettings('agent-copy', original.agent.memorySettings)
        await archive.setPrivacyPolicy('agent-copy', original.agent.privacyPolicy)
        for (const p of original.parameters) await tx.parameters.put('agent-copy', p.key, p.value)
        const memoryIds = await archive.addMemories(
          'agent-copy',
          original.memories.map(({ id: _id, supersededById: _by, ...m }) => ({
            ...m,
            contentHash: `hash-${m.content}`,
            tokenCount: 3,
          })),
        )
        const newId = new Map(original.memories.map((m, i) => [m.id, memoryIds[i] as string]))
        // Memories and messages apart: row ids of two tables may be equal.
        const newMemoryId = new Map(newId)
        const newMessageId = new Map<string, string>()
        await archive.linkSupersessions(
          'agent-copy',
          original.memories.flatMap((m) =>
            m.supersededById
              ? [{ id: newId.get(m.id) as string, supersededById: newId.get(m.supersededById) as string }]
              : [],
          ),
        )
        const factIds = await archive.putKnowledge(
          'agent-copy',
          original.knowledge.map(({ id: _id, ...k }) => k),
        )
        for (const [i, k] of original.knowledge.entries()) newId.set(k.id, factIds[i] as string)
        for (const s of original.sessions) {
          const messageIds = await archive.addConversation('agent-copy', {
            ...s,
            messages: s.messages.map(({ id: _id, ...m }) => m),
          })
          for (const [i, m] of s.messages.entries()) {
            newId.set(m.id, messageIds[i] as string)
            newMessageId.set(m.id, messageIds[i] as string)
          }
        }
        await archive.addSnapshots('agent-copy', original.snapshots ?? [])
        await archive.addVectors(
          'agent-copy',
          original.vectors.map((v) => ({
            ...v,
            ownerId: newId.get(v.ownerId) as string,
            model: 'model-a',
            contentHash: 'copied',
            createdAt: at('2026-01-15T00:00:00.000Z'),
          })),
        )
        await archive.addGraph('agent-copy', {
          ...original.graph,
          evidence: original.graph.evidence.map((ev) => ({
            ...ev,
            memoryId: ev.memoryId && (newMemoryId.get(ev.memoryId) as string),
            messageId: ev.messageId && (newMessageId.get(ev.messageId) as string),
          })),
        })
      })
      const copy = await readAll(storage, 'agent-copy')
      expect(copy?.graph.entities).toHaveLength(3)
      const sortVectors = (a: ReturnType<typeof withoutIds>) =>
        a && { ...a, vectors: a.vectors.sort((x, y) => x.kind.localeCompare(y.kind)) }
      expect(sortVectors(withoutIds(copy))).toEqual(sortVectors(withoutIds(original)))
      // The copy's rows are its own: the original still reads the same.
      expect(withoutIds(await readAll(storage, 'agent-a'))).toEqual(withoutIds(original))
    })

    it('a failing import leaves nothing behind: the cleared memory is back, nothing new is there', async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.unitOfWork.transaction((tx) => writeMemory(tx, 'agent-a'))
      const before = await readAll(storage, 'agent-a')
      const failure = new Error('the document named a conversation twice')
      await expect(
        storage.unitOfWork.transaction(async (tx) => {
          await tx.archive.clear('agent-a')
          await tx.archive.setMemorySettings('agent-a', {})
          await tx.parameters.put('agent-a', 'minRelevance', 0.9)
          await tx.archive.addMemories('agent-a', [memory('half written', '2026-01-14T00:00:00.000Z')])
          await tx.archive.addConversation('agent-a', conversation('talk-2', '2026-01-14T00:00:00.000Z'))
          throw failure
        }),
      ).rejects.toBe(failure)
      expect(await readAll(storage, 'agent-a')).toEqual(before)
    })

    it("clear removes the agent's memory and counts it; the agent, its settings and other agents stay", async () => {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', 'Agent A')
      await storage.repositories.agents.upsert('agent-b', null)
      await storage.unitOfWork.transaction((tx) => writeMemory(tx, 'agent-a'))
      await storage.unitOfWork.transaction((tx) => writeMemory(tx, 'agent-b'))
      await storage.repositories.memoryEntries.create('agent-a', {
        type: 'long_term',
        role: 'user',
        content: 'an entry of no message',
        tokenCount: 4,
        relevance: 1,
        timestamp: clock.now(),
      })
      const counts = await storage.unitOfWork.transaction((tx) => tx.archive.clear('agent-a'))
      expect(counts).toEqual({ memories: 2, knowledge: 1, sessions: 1 })
      const cleared = await readAll(storage, 'agent-a')
      expect(cleared).toMatchObject({
        agent: { name: 'Agent A', memorySettings: { settings: { autoExtract: false } } },
        memories: [],
        knowledge: [],
        sessions: [],
        vectors: [],
        parameters: [],
        snapshots: [],
        graph: { entities: [], relationships: [], evidence: [] },
      })
      expect(await storage.repositories.memoryEntries.list('agent-a', null)).toEqual([])
      const other = await readAll(storage, 'agent-b')
      expect(other?.memories).toHaveLength(2)
      expect(other?.sessions[0]?.messages).toHaveLength(2)
      expect(other?.vectors).toHaveLength(3)
      expect(other?.graph.relationships).toHaveLength(2)
      expect((await storage.repositories.archive.agentIds()).sort()).toEqual(['agent-a', 'agent-b'])
    })

    it('putKnowledge overwrites the fact of the same category and key, keeping its row', async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      const [first] = await storage.repositories.archive.putKnowledge('agent-a', [
        fact('coffee', 'black', '2026-01-08T00:00:00.000Z'),
      ])
      const [again, tea] = await storage.repositories.archive.putKnowledge('agent-a', [
        { ...fact('coffee', 'with milk', '2026-01-08T00:00:00.000Z'), storeCount: 2 },
        fact('tea', 'green', '2026-01-09T00:00:00.000Z'),
      ])
      expect(again).toBe(first)
      expect(tea).not.toBe(first)
      const archive = await readAll(storage, 'agent-a')
      expect(archive?.knowledge.map((k) => [k.key, k.value, k.storeCount])).toEqual([
        ['coffee', 'with milk', 2],
        ['tea', 'green', 1],
      ])
    })

    it("existingConversation names one the agent has, never another agent's", async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      await storage.repositories.archive.addConversation(
        'agent-b',
        conversation('talk-b', '2026-01-10T09:00:00.000Z'),
      )
      await storage.repositories.archive.addConversation(
        'agent-a',
        conversation('talk-a', '2026-01-10T09:00:00.000Z'),
      )
      const { existingConversation } = storage.repositories.archive
      expect(await existingConversation('agent-a', ['talk-b', 'talk-new'])).toBeNull()
      expect(await existingConversation('agent-a', ['talk-new', 'talk-a'])).toBe('talk-a')
      expect(await existingConversation('agent-a', [])).toBeNull()
    })

    it("removeVectors drops the named owners' vectors of that kind only", async () => {
      const { storage } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      const ids = await storage.unitOfWork.transaction((tx) => writeMemory(tx, 'agent-a'))
      await storage.repositories.archive.removeVectors('agent-a', 'knowledge', [ids.coffee, ids.newer])
      const archive = await readAll(storage, 'agent-a')
      expect(archive?.vectors.map((v) => `${v.kind}:${v.ownerId}`).sort()).toEqual(
        [`memory:${ids.newer}`, `message:${ids.messages[0]}`].sort(),
      )
    })
  })
}
