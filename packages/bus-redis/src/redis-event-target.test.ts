import { SILENT_LOGGER } from '@engram/engine'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventChannel, RedisEventTarget } from './redis-event-target.ts'

/** Polls with short waits until `done` holds or the deadline passes (no wait longer than 20 ms). */
async function waitFor(done: () => boolean, deadlineMs = 5_000): Promise<void> {
  const until = Date.now() + deadlineMs
  while (!done()) {
    if (Date.now() > until) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** What a target delivers to its listeners on one topic. */
function listen(target: EventTarget, topic: string): unknown[] {
  const received: unknown[] = []
  target.addEventListener(topic, (event) => received.push((event as CustomEvent).detail))
  return received
}

describe('RedisEventTarget on a real redis-server', () => {
  let redis: RedisServer
  const targets: RedisEventTarget[] = []
  const target = (prefix = 'engram') => {
    const created = new RedisEventTarget({
      url: redis.url,
      prefix,
      log: SILENT_LOGGER,
      reconnectMaxDelayMs: 100,
    })
    targets.push(created)
    return created
  }

  beforeAll(async () => {
    redis = await startRedis()
  })
  afterAll(async () => {
    for (const created of targets) created.close()
    await redis.stop()
  })

  it('delivers locally at once and to the other process once, with Dates kept as Dates', async () => {
    const a = target()
    const b = target()
    await waitFor(() => a.status() === 'up' && b.status() === 'up')
    const onA = listen(a, 'formation:activity')
    const onB = listen(b, 'formation:activity')
    const at = new Date('2026-11-26T03:00:00.000Z')
    // psubscribe is acknowledged a moment after `ready`: publish until B hears.
    for (let i = 0; i < 100 && onB.length === 0; i++) {
      a.dispatchEvent(new CustomEvent('formation:activity', { detail: { agentId: 'agent-a', at, n: i } }))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(onB.length).toBeGreaterThan(0)
    const first = onB[0] as { agentId: string; at: Date }
    expect(first.agentId).toBe('agent-a')
    expect(first.at).toBeInstanceOf(Date)
    expect(first.at.getTime()).toBe(at.getTime())
    // A delivered each of its own events exactly once: locally, never again from Redis' echo.
    const marker = { agentId: 'marker', at, n: -1 }
    b.dispatchEvent(new CustomEvent('formation:activity', { detail: marker }))
    await waitFor(() => onA.some((event) => (event as { agentId: string }).agentId === 'marker'))
    const ownNumbers = onA.map((event) => (event as { n: number }).n).filter((n) => n >= 0)
    expect(ownNumbers).toEqual([...ownNumbers.keys()])
  })

  it('keeps deployments with different prefixes apart, on channels named <prefix>:events:<topic>', async () => {
    const teamA = target('team-a')
    const teamB = target('team-b')
    const teamBElsewhere = target('team-b')
    await waitFor(() => [teamA, teamB, teamBElsewhere].every((created) => created.status() === 'up'))
    const heardByB = listen(teamB, 'access:changed')
    const observer = new Redis(redis.url)
    const channels: string[] = []
    observer.on('pmessage', (_pattern, channel) => channels.push(channel))
    await observer.psubscribe('*')
    try {
      await waitFor(() => {
        teamA.dispatchEvent(new CustomEvent('access:changed', { detail: {} }))
        return channels.length > 0
      })
      expect(channels[0]).toBe(eventChannel('team-a', 'access:changed'))
      expect(channels[0]).toBe('team-a:events:access:changed')
      // Team B's own replica is heard after team A's event was published: only it arrives.
      await waitFor(() => {
        teamBElsewhere.dispatchEvent(new CustomEvent('access:changed', { detail: { from: 'team-b' } }))
        return heardByB.length > 0
      })
      expect(heardByB.every((event) => (event as { from?: string }).from === 'team-b')).toBe(true)
    } finally {
      observer.disconnect()
    }
  })
})
