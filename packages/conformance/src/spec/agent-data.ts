import fs from 'node:fs'
import { DEFAULT_TRAJECTORY_RULES, goalWords } from '@engram/core'
import type { Storage } from '@engram/engine'
import type { SqliteStorage } from '@engram/store-sqlite'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'
import { emptyRun } from './optimizer.ts'

const nonZero = (stores: { store: string; count: number }[]) =>
  Object.fromEntries(stores.filter((s) => s.count > 0).map((s) => [s.store, s.count]))

/** An agent with an entry, its vector, a parameter and an optimizer snapshot, through the ports. */
async function agentWithRecords(storage: Storage, agentId: string, text: string, at: Date): Promise<void> {
  const { agents, memoryEntries, parameters } = storage.repositories
  await agents.upsert(agentId, null)
  const entry = await memoryEntries.create(agentId, {
    type: 'short_term',
    role: 'user',
    content: text,
    tokenCount: 3,
    relevance: 0.5,
    timestamp: at,
  })
  await memoryEntries.upsertVector(agentId, entry.id, Float32Array.from([1, 0, 0]))
  await parameters.put(agentId, 'minRelevance', 0.3)
  await storage.optimizer.applyRun(agentId, emptyRun(at), async () => {})
  await agentGraph(storage, agentId, text, at)
  await agentTrajectoryMemory(storage, agentId, text, at)
}

/**
 * A run with what it left in trajectory memory (issue 16): a trajectory (its goal words indexed),
 * a run session entry, a fact and a selector it contributed to, and a hint; the text is the goal.
 */
async function agentTrajectoryMemory(
  storage: Storage,
  agentId: string,
  text: string,
  at: Date,
): Promise<void> {
  const memory = storage.trajectories
  const runId = `${agentId}-run`
  const place = { scope: 'default', domain: 'shop.example' }
  await memory.insertRun(agentId, {
    id: runId,
    sessionId: 'session',
    parentRunId: null,
    kind: 'START',
    isolation: 'SHARED',
    scope: 'default',
    status: 'COMPLETED',
    goal: text,
    domain: place.domain,
    startUrl: null,
    currentUrl: null,
    finalUrl: null,
    turnCount: 2,
    success: true,
    summary: text,
    result: null,
    reason: null,
    artifactPaths: [],
    model: null,
    durationMs: 10,
    extra: null,
    startedAt: at,
    updatedAt: at,
    completedAt: at,
  })
  await memory.insertTrajectory(
    agentId,
    {
      id: `${agentId}-trajectory`,
      ...place,
      origin: null,
      goal: text,
      words: goalWords(text),
      runId,
      steps: [
        {
          action: 'type',
          selector: '#q',
          value: text,
          url: null,
          verified: true,
          durationMs: 5,
          extra: null,
        },
      ],
      stepCount: 1,
      verifiedCount: 1,
      success: true,
      turns: 2,
      durationMs: 10,
      outcome: text,
      model: null,
      recordedAt: at,
      extra: null,
    },
    100,
  )
  await memory.insertRunSession(
    agentId,
    {
      ...place,
      sessionId: 'session',
      runId,
      goal: text,
      outcome: text,
      success: true,
      finalUrl: null,
      turnsUsed: 2,
      durationMs: 10,
      endedAt: at,
      extra: null,
    },
    5,
  )
  await memory.observeFact(
    agentId,
    { ...place, type: 'PATTERN', key: 'search', value: text },
    at,
    DEFAULT_TRAJECTORY_RULES,
    runId,
  )
  await memory.observeSelector(
    agentId,
    { ...place, element: text, selector: '#q', outcome: 'SUCCESS' },
    at,
    runId,
  )
  await memory.addHint(agentId, { scope: 'default', text, createdAt: at, updatedAt: at, extra: null })
}

/** Two entities named by the text, an edge between them and the evidence of both (issue 15). */
async function agentGraph(storage: Storage, agentId: string, text: string, at: Date): Promise<void> {
  const { graph } = storage
  const entity = (name: string) =>
    graph.createEntity(agentId, {
      userId: null,
      type: 'CONCEPT',
      name,
      aliases: [`${name} alias`],
      summary: text,
      embedding: Float32Array.from([0, 0, 1]),
      mentionCount: 1,
      origin: 'FORMED',
      firstSeenAt: at,
      lastSeenAt: at,
      createdAt: at,
    })
  const source = await entity(text)
  const target = await entity(`${text} too`)
  const edge = await graph.createRelationship(agentId, {
    userId: null,
    sourceId: source.id,
    relation: 'relates to',
    targetId: target.id,
    confidence: 0.6,
    validFrom: null,
    validUntil: null,
    learntAt: at,
    origin: 'FORMED',
    createdAt: at,
  })
  await graph.addEvidence(
    agentId,
    [
      { entityId: source.id, relationshipId: null, memoryId: '1', messageId: null },
      { entityId: null, relationshipId: edge.id, memoryId: '1', messageId: null },
    ],
    at,
  )
}

/** The end of an agent's data: the store's count of what remains, and its purge. */
export function describeAgentData(initializer: StorageInitializer): void {
  describe(`${initializer.name}: agent data`, () => {
    const fixture = useFixture(initializer)

    it('counts what an agent has in every store, and nothing remains once it is deleted and purged', async () => {
      const { storage, clock } = fixture()
      await agentWithRecords(storage, 'agent-gone', 'going away', clock.now())
      await agentWithRecords(storage, 'agent-kept', 'staying', clock.now())
      const before = await storage.agentData.remains('agent-gone')
      // The count sees the records (so all zeros later means something), in more than one store.
      expect(Object.keys(nonZero(before)).length).toBeGreaterThanOrEqual(3)
      const kept = nonZero(await storage.agentData.remains('agent-kept'))
      expect((await storage.agentData.agentIds()).sort()).toEqual(['agent-gone', 'agent-kept'])

      expect(await storage.repositories.agents.delete('agent-gone')).toBe(true)
      await storage.agentData.purge('agent-gone')

      const after = await storage.agentData.remains('agent-gone')
      expect(nonZero(after)).toEqual({})
      // Every store is still listed, with its zero.
      expect(after.map((s) => s.store)).toEqual(before.map((s) => s.store))
      expect(nonZero(await storage.agentData.remains('agent-kept'))).toEqual(kept)
      expect(await storage.agentData.agentIds()).toEqual(['agent-kept'])
      // A purge of every agent (after a restore or a clear of all) runs too.
      await storage.agentData.purge()
      expect(nonZero(await storage.agentData.remains('agent-kept'))).toEqual(kept)
    })
  })
}

/** Occurrences of `needle` in the files (those that exist). */
function filesHolding(files: string[], needle: string): string[] {
  return files.filter((file) => fs.existsSync(file) && fs.readFileSync(file).includes(Buffer.from(needle)))
}

/**
 * SQLite: no row of a deleted agent in any table or full-text index, and no byte of its text left
 * in the database file or its WAL once purged.
 */
export function describeSqlitePurge(initializer: StorageInitializer): void {
  describe(`${initializer.name}: agent purge on disk`, () => {
    const fixture = useFixture(initializer)

    it('leaves no row in any table or full-text index, and no byte of the text in the file or WAL', async () => {
      const { storage, clock } = fixture()
      const db = (storage as SqliteStorage).db
      const [main] = await db.$queryRawUnsafe<{ file: string }[]>(
        `SELECT "file" FROM pragma_database_list WHERE "name" = 'main'`,
      )
      const files = [main?.file ?? '', `${main?.file}-wal`]
      const marker = 'zqxpurgemarker'
      for (const agentId of ['agent-gone', 'agent-kept']) {
        const text = `${marker}${agentId.replace(/-/g, '')} is in the garden shed`
        await agentWithRecords(storage, agentId, text, clock.now())
        await fixture().addDocuments('messages', [{ agentId, text }])
        await fixture().addDocuments('memories', [{ agentId, text }])
        await fixture().addDocuments('knowledge', [{ agentId, text }])
        // An automatic summary and a profile version holding the text (issue 13 §3, §4).
        await storage.summaries.recordTurn(agentId, 'conformance', clock.now(), 9)
        const summary = await storage.summaries.insert({
          agentId,
          conversationId: 'conformance',
          content: `Summary: ${text}`,
          strategy: 'extractive',
          writer: 'extractive',
          trigger: 'debounce',
          firstMessageId: '1',
          lastMessageId: '1',
          messageCount: 1,
          tokenCount: 9,
          createdAt: clock.now(),
        })
        // ...and the summary's vector (summaries are embedded like memories).
        await storage.vectors.upsert(agentId, 'summary', [
          { id: summary.id, vector: Float32Array.from([0, 1, 0]), contentHash: `${marker}${agentId}` },
        ])
        await storage.profiles.insert({
          agentId,
          userId: 'dana',
          content: `## About\n- ${text}`,
          tokenCount: 9,
          writer: 'extractive',
          trigger: 'contributions',
          sourceMemoryIds: ['1'],
          overrideIds: [],
          createdAt: clock.now(),
        })
      }
      const gone = `${marker}agentgone`
      const before = nonZero(await storage.agentData.remains('agent-gone'))
      expect(before).toMatchObject({
        Agent: 1,
        MemoryEntry: 1,
        MemoryVector: 1,
        AdaptiveParameter: 1,
        OptimizationSnapshot: 1,
        Session: 1,
        Message: 1,
        MemoryItem: 1,
        Knowledge: 1,
        MessageSearch: 1,
        MemorySearch: 1,
        KnowledgeSearch: 1,
        Summary: 1,
        SummaryCursor: 1,
        ProfileVersion: 1,
        GraphEntity: 2,
        GraphEntityTerm: expect.any(Number),
        GraphRelationship: 1,
        GraphEvidence: 2,
        AgentRun: 1,
        Trajectory: 1,
        TrajectoryWord: expect.any(Number),
        RunSession: 1,
        AppFact: 1,
        KnownSelector: 1,
        RunHint: 1,
        RunContribution: 2,
      })
      expect(filesHolding(files, gone)).not.toEqual([])
      const summaryVectors = () => db.embedding.count({ where: { agentId: 'agent-gone', kind: 'summary' } })
      expect(await summaryVectors()).toBe(1)

      await storage.repositories.agents.delete('agent-gone')
      await storage.agentData.purge('agent-gone')

      const after = await storage.agentData.remains('agent-gone')
      expect(nonZero(after)).toEqual({})
      expect(await summaryVectors()).toBe(0)
      expect(filesHolding(files, `${marker}agent-gone`)).toEqual([])
      expect(after.map((s) => s.kind)).toEqual(expect.arrayContaining(['TABLE', 'FULL_TEXT', 'QUEUE']))
      expect(after.map((s) => s.store)).toEqual(
        expect.arrayContaining(['MessageSearch (rows deleted)', 'MemorySearch (rows deleted)']),
      )
      expect(filesHolding(files, gone)).toEqual([])
      expect(filesHolding(files, 'agent-gone')).toEqual([])
      expect(filesHolding(files, `${marker}agentkept`)).not.toEqual([])
    })
  })
}
