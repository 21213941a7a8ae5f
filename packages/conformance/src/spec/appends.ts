import type { Session } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { storedMessage, useFixture } from './fixture.ts'

const message = storedMessage

/**
 * A burst of appends at once, as a busy replica makes them: adapters may write them together
 * (SQLite's group commit, Postgres's batched appends), but each caller's answer and what is stored
 * must be those of the appends written one by one, in the order they were asked.
 */
export function describeConcurrentAppends(initializer: StorageInitializer): void {
  describe(`${initializer.name}: concurrent appends`, () => {
    const fixture = useFixture(initializer)

    it('answers each append of a burst with its own rows and count, in the order asked', async () => {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      const sessions: Session[] = []
      for (let c = 0; c < 12; c++)
        sessions.push(await storage.sessions.createSession('agent-a', `c${c}`, clock.now()))
      const t = clock.now()
      // 300 appends, one of every three carrying two messages, all with one timestamp: the
      // stored order is then the ids' order, which must be the order of the calls.
      const calls = Array.from({ length: 300 }, (_, i) => ({
        session: sessions[i % sessions.length] as Session,
        messages: i % 3 === 0 ? [message(`m${i}a`, t), message(`m${i}b`, t)] : [message(`m${i}`, t)],
      }))
      const results = await Promise.all(
        calls.map((call) => storage.sessions.appendMessages(call.session, call.messages)),
      )
      results.forEach((result, i) => {
        const call = calls[i] as (typeof calls)[number]
        expect(result.messages.map((m) => m.content)).toEqual(call.messages.map((m) => m.content))
        expect(result.messages.every((m) => m.sessionId === call.session.id)).toBe(true)
        expect(result.session.id).toBe(call.session.id)
      })
      for (const session of sessions) {
        const mine = calls.flatMap((call, i) => (call.session.id === session.id ? [i] : []))
        // The counts the calls were answered with: as if written one after another.
        let expected = 0
        for (const i of mine) {
          expected += calls[i]?.messages.length ?? 0
          expect(results[i]?.session.messageCount).toBe(expected)
        }
        const stored = await storage.history.messages(session.id, true, {
          range: {},
          direction: 'asc',
          take: 1_000,
        })
        expect(stored.map((m) => m.content)).toEqual(
          mine.flatMap((i) => calls[i]?.messages.map((m) => m.content) ?? []),
        )
        expect((await storage.sessions.findSession('agent-a', session.conversationId))?.messageCount).toBe(
          expected,
        )
      }
    })
  })
}
