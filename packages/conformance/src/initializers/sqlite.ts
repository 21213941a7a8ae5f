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
import { ManualClock, type StorageInitializer } from '../types.ts'

const directories = new WeakMap<object, { dir: string; others: Database[] }>()

/** Rows the triggers index: a document is a knowledge value, a memory item or a message. */
async function addRows(
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

export const sqliteInitializer: StorageInitializer = {
  name: 'sqlite',
  capabilities: { backup: true, multiProcess: true },
  async create() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-conformance-'))
    const file = path.join(dir, 'store.db')
    applyMigrations(file, migrationsDirectory())
    const clock = new ManualClock()
    const db = createDatabase(file)
    const storage = createSqliteStorage({
      db,
      clock,
      backups: { databaseFile: file, directory: path.join(dir, 'backups') },
    })
    const others: Database[] = []
    const fixture = {
      storage,
      clock,
      addDocuments: (collection: FullTextCollection, documents: Omit<FullTextDocument, 'id'>[]) =>
        addRows(db, clock, collection, documents),
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
    await fixture.storage.close()
    const held = directories.get(fixture)
    if (!held) return
    for (const other of held.others) await other.$disconnect()
    fs.rmSync(held.dir, { recursive: true, force: true })
  },
}
