import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { FullTextCollection, FullTextDocument } from '@engram/engine'
import {
  applyMigrations,
  createDatabase,
  createSqliteStorage,
  type Database,
  migrationsDirectory,
} from '@engram/store-sqlite'
import {
  type KnowledgeSeed,
  ManualClock,
  type MemoryItemSeed,
  type StorageInitializer,
  type TurnSeed,
} from '../types.ts'

const directories = new WeakMap<object, { dir: string; others: Database[] }>()

/** Rows the triggers index: a document is a knowledge value, a memory item or a message. */
export async function addRows(
  db: Database,
  clock: ManualClock,
  collection: FullTextCollection,
  documents: Omit<FullTextDocument, 'id'>[],
): Promise<string[]> {
  const ids: string[] = []
  for (const [i, d] of documents.entries()) {
    await db.agent.upsert({
      where: { id: d.agentId },
      create: { id: d.agentId, name: d.agentId },
      update: {},
    })
    const now = clock.now()
    if (collection === 'knowledge') {
      const row = await db.knowledge.create({
        data: {
          agentId: d.agentId,
          category: 'fact',
          key: `k${ids.length}-${i}`,
          value: d.text,
          confidence: 1,
        },
      })
      ids.push(String(row.id))
    } else if (collection === 'memories') {
      const row = await db.memoryItem.create({
        data: {
          agentId: d.agentId,
          content: d.text,
          category: 'fact',
          validFrom: now,
          contentHash: `conformance-${i}`,
          tokenCount: d.text.split(/\s+/).length,
          createdAt: now,
          updatedAt: now,
        },
      })
      ids.push(String(row.id))
    } else {
      const conversationId = d.sessionId ?? 'conformance'
      const session = await db.session.upsert({
        where: { agentId_conversationId: { agentId: d.agentId, conversationId } },
        create: { id: `${d.agentId}-${conversationId}`, agentId: d.agentId, conversationId },
        update: {},
      })
      const row = await db.message.create({
        data: {
          sessionId: session.id,
          agentId: d.agentId,
          role: 'user',
          content: d.text,
          tokenCount: d.text.split(/\s+/).length,
          timestamp: now,
        },
      })
      ids.push(String(row.id))
    }
  }
  return ids
}

/** The rows search reads back, written as the app writes them (the triggers index them too). */
export const recallRows = (db: Database) => ({
  async addTurns(agentId: string, conversationId: string, turns: TurnSeed[]) {
    await db.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
    const session = await db.session.upsert({
      where: { agentId_conversationId: { agentId, conversationId } },
      create: { id: `${agentId}-${conversationId}`, agentId, conversationId },
      update: {},
    })
    const ids: string[] = []
    for (const turn of turns) {
      const row = await db.message.create({
        data: {
          sessionId: session.id,
          agentId,
          role: 'user',
          speaker: turn.speaker ?? null,
          content: turn.content,
          tokenCount: turn.content.split(/\s+/).length,
          timestamp: turn.timestamp,
        },
      })
      ids.push(String(row.id))
    }
    return { sessionId: session.id, ids }
  },
  async addMemoryItems(agentId: string, items: MemoryItemSeed[]) {
    await db.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
    const ids: string[] = []
    for (const [i, item] of items.entries()) {
      const row = await db.memoryItem.create({
        data: {
          agentId,
          userId: item.userId ?? null,
          content: item.content,
          category: 'fact',
          tags: JSON.stringify(item.tags ?? []),
          importance: item.importance ?? 0.5,
          validFrom: item.validFrom,
          validUntil: item.validUntil ?? null,
          sourceMessageId: item.sourceMessageId ?? null,
          contentHash: `recall-${agentId}-${i}-${item.content}`,
          tokenCount: item.content.split(/\s+/).length,
          createdAt: item.createdAt,
          updatedAt: item.createdAt,
        },
      })
      ids.push(String(row.id))
    }
    return ids
  },
  async addKnowledge(agentId: string, rows: KnowledgeSeed[]) {
    await db.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
    const ids: string[] = []
    for (const k of rows) {
      const row = await db.knowledge.create({
        data: {
          agentId,
          category: 'fact',
          key: k.key,
          value: k.value,
          confidence: k.confidence,
          updatedAt: k.updatedAt,
        },
      })
      ids.push(String(row.id))
    }
    return ids
  },
})
/** More vectors than this in one (agent, kind) and the SQLite store moves to an HNSW graph. */
export const VECTOR_APPROXIMATE_ABOVE = 16

export const sqliteInitializer: StorageInitializer = {
  name: 'sqlite',
  capabilities: { backup: true, multiProcess: true },
  persistsVectorIndexes: true,
  async create() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-conformance-'))
    const file = path.join(dir, 'store.db')
    applyMigrations(file, migrationsDirectory())
    const clock = new ManualClock()
    const db = createDatabase(file)
    // Graphs saved beside the database and a low HNSW threshold, so the specs reach both indexes.
    const vectorIndex = {
      directory: path.join(dir, 'vectors'),
      approximateAbove: VECTOR_APPROXIMATE_ABOVE,
      hnsw: { initialCapacity: 64 },
    }
    const storage = createSqliteStorage({
      db,
      clock,
      vectorIndex,
      backups: { databaseFile: file, directory: path.join(dir, 'backups') },
    })
    const others: Database[] = []
    const fixture = {
      storage,
      clock,
      addDocuments: (collection: FullTextCollection, documents: Omit<FullTextDocument, 'id'>[]) =>
        addRows(db, clock, collection, documents),
      ...recallRows(db),
      async openAnother() {
        const other = createDatabase(file)
        others.push(other)
        return createSqliteStorage({ db: other, clock })
      },
    }
    directories.set(fixture, { dir, others })
    return fixture
  },
  async destroy(fixture) {
    // An index build still running on its worker would write into the folder removed below.
    await fixture.storage.vectors.settled()
    await fixture.storage.close()
    const held = directories.get(fixture)
    if (!held) return
    for (const other of held.others) await other.$disconnect()
    fs.rmSync(held.dir, { recursive: true, force: true })
  },
}
