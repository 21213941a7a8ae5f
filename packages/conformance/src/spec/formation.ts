import type { MessageToStore, NewJob } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

/** The FormationRepository port: message jobs queued with the messages, watermarks per conversation. */
export function describeFormation(initializer: StorageInitializer): void {
  describe(`${initializer.name}: memory formation`, () => {
    const fixture = useFixture(initializer)

    async function withConversations() {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const turn = (content: string): MessageToStore => ({
        role: 'user',
        speaker: 'dana',
        content,
        tokenCount: 3,
        timestamp: clock.now(),
        metadata: {},
        isCompressed: false,
        initialRelevance: 1,
      })
      const say = async (agentId: string, conversationId: string, ...contents: string[]) => {
        const session =
          (await storage.sessions.findSession(agentId, conversationId)) ??
          (await storage.sessions.createSession(agentId, conversationId, clock.now()))
        const { messages } = await storage.sessions.appendMessages(session, contents.map(turn))
        return { session, ids: messages.map((m) => Number(m.id)) }
      }
      return { storage, say }
    }

    it('queues the producers’ jobs with the stored messages, given their session', async () => {
      const { storage, say } = await withConversations()
      const seen: [string, number[], string][] = []
      storage.formation.addMessageJobs((agentId, ids, session): NewJob[] => {
        seen.push([agentId, ids, session.conversationId])
        return [{ kind: 'extract', agentId, key: `extract:${session.conversationId}` }]
      })
      const { ids } = await say('agent-a', 'c1', 'one', 'two')
      expect(seen).toEqual([['agent-a', ids, 'c1']])
      expect(await storage.jobs.hasDue('extract', 'agent-a')).toBe(true)
      expect(await storage.jobs.hasDue('extract', 'agent-b')).toBe(false)
    })

    it('keeps a watermark per conversation that only moves forward, and lists conversations with turns past it', async () => {
      const { storage, say } = await withConversations()
      const { session, ids } = await say('agent-a', 'c1', 'one', 'two', 'three')
      await say('agent-a', 'c2', 'other')
      await say('agent-b', 'c1', 'not a’s')
      const { formation } = storage
      expect((await formation.pendingConversations('agent-a')).map((c) => c.conversationId)).toEqual([
        'c1',
        'c2',
      ])
      expect(await formation.conversation('agent-a', 'c1')).toEqual({
        sessionId: session.id,
        conversationId: 'c1',
        extractedThroughId: null,
      })
      const all = await formation.messagesAfter('agent-a', session.id, null, 10)
      expect(all.map((m) => m.content)).toEqual(['one', 'two', 'three'])
      expect((await formation.messagesAfter('agent-a', session.id, null, 2)).map((m) => m.content)).toEqual([
        'one',
        'two',
      ])
      // Another agent reaches nothing of the session, nor moves its watermark.
      expect(await formation.messagesAfter('agent-b', session.id, null, 10)).toEqual([])
      await formation.advance('agent-b', session.id, ids[2] as number)
      expect((await formation.conversation('agent-a', 'c1'))?.extractedThroughId).toBeNull()

      await formation.advance('agent-a', session.id, ids[1] as number)
      await formation.advance('agent-a', session.id, ids[0] as number)
      expect((await formation.conversation('agent-a', 'c1'))?.extractedThroughId).toBe(ids[1])
      expect(
        (await formation.messagesAfter('agent-a', session.id, ids[1] as number, 10)).map((m) => m.content),
      ).toEqual(['three'])
      await formation.advance('agent-a', session.id, ids[2] as number)
      expect((await formation.pendingConversations('agent-a')).map((c) => c.conversationId)).toEqual(['c2'])
    })

    it('forgets the watermark with its conversation', async () => {
      const { storage, say } = await withConversations()
      const { session, ids } = await say('agent-a', 'c1', 'one')
      await storage.formation.advance('agent-a', session.id, ids[0] as number)
      expect(await storage.sessions.deleteSession('agent-a', 'c1')).toBe(true)
      expect(await storage.formation.conversation('agent-a', 'c1')).toBeNull()
      const again = await say('agent-a', 'c1', 'fresh start')
      expect(await storage.formation.conversation('agent-a', 'c1')).toMatchObject({
        extractedThroughId: null,
      })
      expect(
        (await storage.formation.messagesAfter('agent-a', again.session.id, null, 10)).map((m) => m.content),
      ).toEqual(['fresh start'])
    })
  })
}
