import { CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import type { SqliteStorage } from '@engram/store-sqlite'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const DAY = 86_400_000

/**
 * What memoryContext reads. Adapters that hold memory items and messages only: the spec writes
 * its rows through SQLite's client (the engine has no port that creates memory items yet), so it
 * runs against the SQLite initializer.
 */
export function describeContextSources(initializer: StorageInitializer): void {
  describe(`${initializer.name}: context sources`, () => {
    const fixture = useFixture(initializer)
    const dbOf = () => (fixture().storage as SqliteStorage).db

    async function memory(
      agentId: string,
      content: string,
      fields: {
        category?: string
        pinned?: boolean
        importance?: number
        confidence?: number
        userId?: string
        validFrom?: Date
        validUntil?: Date
        at?: Date
      } = {},
    ): Promise<string> {
      const db = dbOf()
      const at = fields.at ?? fixture().clock.now()
      await db.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
      const row = await db.memoryItem.create({
        data: {
          agentId,
          content,
          category: fields.category ?? 'fact',
          pinned: fields.pinned ?? false,
          importance: fields.importance ?? 0.5,
          confidence: fields.confidence ?? 1,
          userId: fields.userId ?? null,
          validFrom: fields.validFrom ?? at,
          validUntil: fields.validUntil ?? null,
          contentHash: content,
          tokenCount: 3,
          createdAt: at,
          updatedAt: at,
        },
      })
      return String(row.id)
    }

    async function message(
      agentId: string,
      conversationId: string,
      content: string,
      timestamp: Date,
      isCompressed = false,
    ): Promise<string> {
      const db = dbOf()
      await db.agent.upsert({ where: { id: agentId }, create: { id: agentId, name: agentId }, update: {} })
      const session = await db.session.upsert({
        where: { agentId_conversationId: { agentId, conversationId } },
        create: { id: `${agentId}-${conversationId}`, agentId, conversationId },
        update: {},
      })
      const row = await db.message.create({
        data: {
          sessionId: session.id,
          agentId,
          role: 'user',
          content,
          tokenCount: 3,
          timestamp,
          isCompressed,
        },
      })
      return String(row.id)
    }

    it('offers each section the memories valid now, in its order, of the user when named', async () => {
      const { storage, clock } = fixture()
      const t = clock.now().getTime()
      const at = (s: number) => new Date(t - 100_000 + s * 1_000)
      const pinnedLater = await memory('agent-a', 'pinned later', { pinned: true, at: at(2) })
      const pinnedFirst = await memory('agent-a', 'pinned first', { pinned: true, at: at(1) })
      await memory('agent-a', 'pinned but superseded', { pinned: true, at: at(0), validUntil: at(50) })
      await memory('agent-a', 'pinned only tomorrow', { pinned: true, validFrom: new Date(t + DAY) })
      await memory('agent-b', 'pinned of another agent', { pinned: true, at: at(0) })
      const asOf = clock.now()
      const pinned = await storage.contextSources.memories('agent-a', {
        asOf,
        pinned: true,
        order: 'oldest',
        limit: 10,
      })
      expect(pinned.map((m) => m.id)).toEqual([pinnedFirst, pinnedLater])
      expect(pinned[0]).toEqual({ id: pinnedFirst, userId: null, content: 'pinned first', category: 'fact' })

      const low = await memory('agent-a', 'low', { importance: 0.2, at: at(3) })
      const sure = await memory('agent-a', 'high and sure', { importance: 0.9, confidence: 1, at: at(3) })
      const unsure = await memory('agent-a', 'high, unsure', { importance: 0.9, confidence: 0.5, at: at(4) })
      const skill = await memory('agent-a', 'a skill of u1', {
        category: 'skill',
        importance: 0.6,
        userId: 'u1',
      })
      await memory('agent-a', 'a decision', { category: 'decision', importance: 1 })
      const profile = (extra: object) =>
        storage.contextSources.memories('agent-a', {
          asOf,
          pinned: false,
          categories: ['fact', 'preference', 'skill'],
          order: 'profile',
          limit: 10,
          ...extra,
        })
      expect((await profile({})).map((m) => m.id)).toEqual([sure, unsure, skill, low])
      expect((await profile({ skip: 1, limit: 2 })).map((m) => m.id)).toEqual([unsure, skill])
      expect((await profile({ userId: 'u1' })).map((m) => m.id)).toEqual([skill])
      expect((await profile({ userId: 'u1' }))[0]).toMatchObject({ userId: 'u1', category: 'skill' })
    })

    it('reads working memory by recency and relationships by importance', async () => {
      const { storage, clock } = fixture()
      const t = clock.now().getTime()
      const older = await memory('agent-a', 'older decision', {
        category: 'decision',
        importance: 1,
        at: new Date(t - 5_000),
      })
      const newer = await memory('agent-a', 'newer commitment', {
        category: 'commitment',
        importance: 0.1,
        at: new Date(t - 1_000),
      })
      const weak = await memory('agent-a', 'weak tie', { category: 'relationship', importance: 0.2 })
      const strong = await memory('agent-a', 'strong tie', { category: 'relationship', importance: 0.8 })
      const asOf = clock.now()
      const read = (categories: string[], order: 'recent' | 'important') =>
        storage.contextSources.memories('agent-a', {
          asOf,
          pinned: false,
          categories: categories as never,
          order,
          limit: 10,
        })
      expect((await read(['decision', 'commitment'], 'recent')).map((m) => m.id)).toEqual([newer, older])
      expect((await read(['relationship'], 'important')).map((m) => m.id)).toEqual([strong, weak])
    })

    it('reads a summary whose prefix is in lower case as a summary (the prefix ignores ASCII case, as LIKE does)', async () => {
      const { clock, storage } = fixture()
      const t = clock.now().getTime()
      const lower = await message(
        'agent-a',
        'c1',
        `${CONTEXT_SUMMARY_PREFIX.toLowerCase()} long ago`,
        new Date(t - DAY),
      )
      await message('agent-a', 'c1', 'not a summary', new Date(t - DAY))
      expect((await storage.contextSources.summaries('agent-a', { limit: 10 })).map((s) => s.id)).toEqual([
        lower,
      ])
    })

    it('reads summaries newest first from a time on, and a conversation’s uncompressed turns newest first', async () => {
      const { storage, clock } = fixture()
      const t = clock.now().getTime()
      const old = await message('agent-a', 'c1', `${CONTEXT_SUMMARY_PREFIX} long ago`, new Date(t - 10 * DAY))
      const recent = await message('agent-a', 'c1', `${CONTEXT_SUMMARY_PREFIX} lately`, new Date(t - DAY))
      await message('agent-a', 'c1', 'not a summary', new Date(t - DAY))
      await message('agent-b', 'c1', `${CONTEXT_SUMMARY_PREFIX} of b`, new Date(t - DAY))
      const summaries = await storage.contextSources.summaries('agent-a', { limit: 10 })
      expect(summaries.map((s) => s.id)).toEqual([recent, old])
      expect(summaries[0]?.content).toBe(`${CONTEXT_SUMMARY_PREFIX} lately`)
      expect(
        (await storage.contextSources.summaries('agent-a', { since: new Date(t - 2 * DAY), limit: 10 })).map(
          (s) => s.id,
        ),
      ).toEqual([recent])
      expect(await storage.contextSources.summaries('agent-a', { limit: 1 })).toHaveLength(1)

      const first = await message('agent-a', 'c2', 'hello', new Date(t - 3_000))
      await message('agent-a', 'c2', 'compressed away', new Date(t - 2_000), true)
      const last = await message('agent-a', 'c2', 'goodbye', new Date(t - 1_000))
      await message('agent-b', 'c2', 'b says', new Date(t))
      expect(await storage.contextSources.recentTurns('agent-a', 'c2', 10)).toEqual([
        { id: last, role: 'user', content: 'goodbye' },
        { id: first, role: 'user', content: 'hello' },
      ])
      expect(await storage.contextSources.recentTurns('agent-a', 'c2', 1)).toHaveLength(1)
      expect(await storage.contextSources.recentTurns('agent-a', 'no-such-conversation', 10)).toBeNull()
      expect(await storage.contextSources.recentTurns('agent-c', 'c2', 10)).toBeNull()
    })
  })
}
