import { type Clock, createTokenCounter, DEFAULT_LIMITS, type Metadata, ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import type { TransferEmbeddings, TransferLifecycle, TransferPrivacy } from './collaborators.ts'
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportDocument } from './document.ts'
import { TransferService } from './transfer-service.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

/** The collaborators as the use case sees them: a policy that lets everything through, a model name. */
function transferOnMemory() {
  const storage = createInMemoryStorage(clock)
  const calls: string[] = []
  const privacy: TransferPrivacy = {
    policy: async () => ({ mode: 'redact', patterns: [] }),
    guard: async (_agentId, texts, metadata = []) => ({
      // Redacts one word, so the vector of the text holding it is dropped.
      texts: texts.map((t) => t.text.replaceAll('SECRET', '[redacted]')),
      metadata: metadata.map((m) => m.value as Metadata),
    }),
  }
  const embeddings: TransferEmbeddings = {
    model: 'model-a',
    isLocal: true,
    fill: async (agentId, kind) => {
      calls.push(`fill ${agentId} ${kind}`)
      return 0
    },
    enqueueMissing: async (agentId) => {
      calls.push(`enqueue ${agentId}`)
      return 0
    },
  }
  const lifecycle: TransferLifecycle = {
    forget: (agentId) => calls.push(`forget ${agentId ?? 'all'}`),
    ended: (agentId) => calls.push(`ended ${agentId ?? 'all'}`),
    dropShared: async (agentId) => {
      calls.push(`dropShared ${agentId ?? 'all'}`)
    },
    purge: async (agentId) => {
      calls.push(`purge ${agentId ?? 'all'}`)
    },
  }
  const transfer = new TransferService({
    storage,
    clock,
    // The heuristic: loading a BPE table takes seconds on a busy machine, and counts do not matter here.
    tokenCounter: createTokenCounter('heuristic'),
    limits: DEFAULT_LIMITS,
    privacy,
    embeddings,
    writes: new AgentWrites(),
    lifecycle,
  })
  return { storage, transfer, calls }
}

const vector = Buffer.from(new Float32Array([0.6, 0.8]).buffer).toString('base64')

const document = (overrides: Partial<ExportDocument> = {}): ExportDocument => ({
  format: EXPORT_FORMAT,
  version: EXPORT_VERSION,
  agent: { id: 'somewhere-else', name: 'Elsewhere' },
  settings: { settings: {}, contextBudgets: {} },
  parameters: [{ key: 'minRelevance', value: 0.3 }],
  privacyPolicy: { mode: 'redact', patterns: [] },
  embeddingModel: 'model-a',
  memories: [
    {
      ref: 'm1',
      content: 'lives in Lisbon',
      category: 'fact',
      tags: ['home'],
      importance: 0.7,
      confidence: 1,
      pinned: false,
      userId: null,
      sourceConversationId: null,
      sourceMessageId: null,
      accessCount: 0,
      lastAccessedAt: null,
      validFrom: '2026-01-01T00:00:00.000Z',
      validUntil: null,
      supersededBy: 'm2',
      metadata: {},
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    },
    {
      ref: 'm2',
      content: 'lives in Porto, SECRET',
      category: 'fact',
      tags: [],
      importance: 0.7,
      confidence: 1,
      pinned: false,
      userId: null,
      sourceConversationId: null,
      sourceMessageId: null,
      accessCount: 0,
      lastAccessedAt: null,
      validFrom: '2026-01-02T00:00:00.000Z',
      validUntil: null,
      supersededBy: null,
      metadata: {},
      createdAt: '2026-01-02T00:00:00.000Z',
      updatedAt: '2026-01-02T00:00:00.000Z',
    },
  ],
  knowledge: [],
  sessions: [
    {
      conversationId: 'talk-1',
      createdAt: '2026-01-03T00:00:00.000Z',
      updatedAt: '2026-01-03T00:00:00.000Z',
      messages: [
        {
          role: 'user',
          speaker: 'Ada',
          content: 'hello',
          tokenCount: 1,
          isCompressed: false,
          metadata: {},
          timestamp: '2026-01-03T00:00:00.000Z',
          createdAt: '2026-01-03T00:00:00.000Z',
          entry: null,
        },
      ],
    },
  ],
  vectors: [
    { owner: 'memory:m1', dimensions: 2, vector },
    { owner: 'memory:m2', dimensions: 2, vector },
    { owner: 'message:talk-1#1', dimensions: 2, vector },
  ],
  graph: {
    entities: [
      graphEntity('e1', 'Ada', vector),
      // A name the privacy guard changes: its embedding (of the name as written) is not kept.
      graphEntity('e2', 'Porto SECRET', vector),
    ],
    relationships: [
      {
        ref: 'r1',
        userId: null,
        source: 'e1',
        relation: 'lives in',
        target: 'e2',
        confidence: 0.8,
        validFrom: '2026-01-02T00:00:00.000Z',
        validUntil: null,
        learntAt: '2026-01-02T00:00:00.000Z',
        retiredAt: null,
        retiredReason: null,
        supersededBy: null,
        origin: 'FORMED',
        createdAt: '2026-01-02T00:00:00.000Z',
        updatedAt: '2026-01-02T00:00:00.000Z',
      },
    ],
    evidence: [
      {
        entity: 'e1',
        relationship: null,
        memory: null,
        message: 'talk-1#1',
        createdAt: '2026-01-03T00:00:00.000Z',
      },
      {
        entity: null,
        relationship: 'r1',
        memory: 'm2',
        message: null,
        createdAt: '2026-01-03T00:00:00.000Z',
      },
      // A source the document does not hold: dropped, and the evidence with it.
      {
        entity: null,
        relationship: 'r1',
        memory: 'm9',
        message: null,
        createdAt: '2026-01-03T00:00:00.000Z',
      },
    ],
  },
  // Trajectory memory (version 5): written back as it is, ids kept.
  trajectoryMemory: {
    runs: [
      {
        id: 'run-1',
        sessionId: 'session-1',
        parentRunId: null,
        kind: 'START',
        isolation: 'SHARED',
        scope: 'default',
        status: 'COMPLETED',
        goal: 'book a table',
        domain: 'tables.example',
        startUrl: 'https://tables.example/',
        currentUrl: null,
        finalUrl: 'https://tables.example/done',
        turnCount: 3,
        success: true,
        summary: 'booked',
        result: null,
        reason: null,
        artifactPaths: [],
        model: null,
        durationMs: 4_000,
        extra: { orchestrator: 'x' },
        startedAt: '2026-01-04T00:00:00.000Z',
        updatedAt: '2026-01-04T00:00:04.000Z',
        completedAt: '2026-01-04T00:00:04.000Z',
      },
    ],
    runSessions: [],
    trajectories: [
      {
        id: 'trajectory-1',
        scope: 'default',
        domain: 'tables.example',
        origin: 'https://tables.example',
        goal: 'book a table',
        runId: 'run-1',
        steps: [
          {
            action: 'click',
            selector: '#book',
            value: null,
            url: null,
            verified: true,
            durationMs: 10,
            extra: null,
          },
        ],
        success: true,
        turns: 3,
        durationMs: 4_000,
        outcome: 'booked',
        model: null,
        recordedAt: '2026-01-04T00:00:04.000Z',
        extra: null,
      },
    ],
    facts: [
      {
        id: 'fact-1',
        scope: 'default',
        domain: 'tables.example',
        type: 'TIMING',
        key: 'load',
        value: 'slow',
        confidence: 0.6,
        sources: 1,
        lastSeenAt: '2026-01-04T00:00:04.000Z',
        createdAt: '2026-01-04T00:00:04.000Z',
        extra: null,
      },
    ],
    selectors: [],
    hints: [],
  },
  ...overrides,
})

function graphEntity(ref: string, name: string, embedding: string | null) {
  return {
    ref,
    userId: null,
    type: 'PERSON' as const,
    name,
    aliases: [],
    summary: null,
    embedding,
    mentionCount: 1,
    origin: 'FORMED' as const,
    firstSeenAt: '2026-01-02T00:00:00.000Z',
    lastSeenAt: '2026-01-02T00:00:00.000Z',
    createdAt: '2026-01-02T00:00:00.000Z',
    updatedAt: '2026-01-02T00:00:00.000Z',
  }
}

// The first import compiles the document schema: seconds when six test runs share two cores.
describe('TransferService on the in-memory storage', { timeout: 30_000 }, () => {
  it('imports a document and exports it back, keeping the vectors of unredacted texts only', async () => {
    const { storage, transfer, calls } = transferOnMemory()
    await storage.repositories.agents.upsert('agent-a', 'Agent A')
    const report = await transfer.importAgent('agent-a', document(), 'REPLACE')
    expect(report).toEqual({
      memories: 2,
      knowledge: 0,
      sessions: 1,
      messages: 1,
      vectors: 2,
      reembedded: false,
    })
    expect(calls).toEqual(['forget agent-a', 'dropShared agent-a', 'purge agent-a', 'enqueue agent-a'])
    const exported = await transfer.exportAgent('agent-a')
    const expected = document()
    expect(exported).toEqual({
      ...expected,
      agent: { id: 'agent-a', name: 'Agent A' },
      memories: expected.memories.map((m) =>
        m.ref === 'm2' ? { ...m, content: 'lives in Porto, [redacted]' } : m,
      ),
      vectors: expected.vectors.filter((v) => v.owner !== 'memory:m2'),
      graph: {
        ...expected.graph,
        entities: [
          expected.graph?.entities[0],
          { ...expected.graph?.entities[1], name: 'Porto [redacted]', embedding: null },
        ],
        evidence: expected.graph?.evidence.slice(0, 2),
      },
    })
  })

  it('leaves nothing behind when a merge fails part-way, and answers a typed error', async () => {
    const { storage, transfer } = transferOnMemory()
    await storage.repositories.agents.upsert('agent-a', null)
    await transfer.importAgent('agent-a', document(), 'REPLACE')
    const before = await transfer.exportAgent('agent-a')
    // The conversation clashes after the memories are written: the whole merge rolls back.
    const refused = await transfer.importAgent('agent-a', document(), 'MERGE').catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ValidationError)
    expect((refused as ValidationError).issues[0]?.field).toBe('document.sessions')
    expect(await transfer.exportAgent('agent-a')).toEqual(before)
  })

  it('embeds again when the document is of another model, and keeps none of its vectors', async () => {
    const { storage, transfer, calls } = transferOnMemory()
    await storage.repositories.agents.upsert('agent-a', null)
    const report = await transfer.importAgent('agent-a', document({ embeddingModel: 'model-b' }), 'MERGE')
    expect(report).toMatchObject({ vectors: 0, reembedded: true })
    expect(calls).toEqual([
      'forget agent-a',
      'dropShared agent-a',
      'fill agent-a memory',
      'fill agent-a message',
      'fill agent-a knowledge',
      'enqueue agent-a',
    ])
  })

  it('clears an agent with the confirmation text only', async () => {
    const { storage, transfer } = transferOnMemory()
    await storage.repositories.agents.upsert('agent-a', null)
    await transfer.importAgent('agent-a', document(), 'REPLACE')
    await expect(transfer.clearAll('agent-a', 'CLEAR ALL AGENTS')).rejects.toBeInstanceOf(ValidationError)
    expect(await transfer.clearAll('agent-a', 'CLEAR agent-a')).toEqual({
      memories: 2,
      knowledge: 0,
      sessions: 1,
    })
    expect((await transfer.exportAgent('agent-a')).memories).toEqual([])
  })

  it('answers the typed backup error where the store declares no backups', async () => {
    const { transfer } = transferOnMemory()
    for (const attempt of [
      () => transfer.backup(),
      () => transfer.listBackups(),
      () => transfer.restore('x'),
    ]) {
      const refused = await attempt().catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(ValidationError)
      expect((refused as ValidationError).issues).toEqual([
        { field: 'backup', message: 'backups need a database file and ENGRAM_BACKUP_DIR' },
      ])
    }
  })
})
