import { describe, expect, it } from 'vitest'
import { NotFoundError, ValidationError } from '../errors.ts'
import { DEFAULT_LIMITS, LimitsSchema, MAX_SPEAKER_CHARS } from '../limits.ts'
import { InMemorySessionRepository } from './in-memory-session-repository.ts'
import {
  CONTEXT_SUMMARY_PREFIX,
  isSummaryText,
  PersistentSessionManager,
  speakerOf,
} from './session-manager.ts'

const NOW = new Date('2026-01-15T10:00:00.000Z')

function setup(limits = DEFAULT_LIMITS) {
  const repository = new InMemorySessionRepository()
  const manager = new PersistentSessionManager({
    repository,
    clock: { now: () => NOW },
    // A fake counter that is easy to reason about: one token per word.
    tokenCounter: { name: 'heuristic', count: (text: string) => text.split(/\s+/).filter(Boolean).length },
    summarize: (messages) => `summary of ${messages.length}`,
    limits,
    maxCachedSessions: 2,
  })
  return { repository, manager }
}

describe('PersistentSessionManager', () => {
  it('get-or-create returns the same session and serves repeats from the cache', async () => {
    const { repository, manager } = setup()
    const a = await manager.getOrCreate('agent-1', 'conv-1')
    const b = await manager.getOrCreate('agent-1', 'conv-1')
    expect(b.id).toBe(a.id)
    expect(repository.calls.findSession).toBe(1)
  })

  it('scopes sessions: the same conversation id under two agents is two sessions', async () => {
    const { manager } = setup()
    const a = await manager.getOrCreate('agent-1', 'conv-1')
    const b = await manager.getOrCreate('agent-2', 'conv-1')
    expect(a.id).not.toBe(b.id)
  })

  it('evicts the least recently used session past the cache size', async () => {
    const { repository, manager } = setup()
    await manager.getOrCreate('a', 'c1')
    await manager.getOrCreate('a', 'c2')
    await manager.getOrCreate('a', 'c1') // c1 is now the most recent
    await manager.getOrCreate('a', 'c3') // evicts c2
    const before = repository.calls.findSession
    await manager.getOrCreate('a', 'c1')
    expect(repository.calls.findSession).toBe(before)
    await manager.getOrCreate('a', 'c2')
    expect(repository.calls.findSession).toBe(before + 1)
  })

  it('adds a message, counting its tokens once, defaulting its timestamp to now', async () => {
    const { manager } = setup()
    const stored = await manager.addMessage('a', 'c', { role: 'user', content: 'hello there agent' })
    expect(stored).toMatchObject({
      role: 'user',
      tokenCount: 3,
      timestamp: NOW,
      isCompressed: false,
      metadata: {},
    })
    const session = await manager.getOrCreate('a', 'c')
    expect(session.messageCount).toBe(1)
  })

  it('keeps a caller-supplied token count and timestamp (importing history)', async () => {
    const { manager } = setup()
    const at = new Date('2025-05-08T13:56:00.000Z')
    const stored = await manager.addMessage('a', 'c', {
      role: 'assistant',
      content: 'x y',
      tokenCount: 42,
      timestamp: at,
    })
    expect(stored.tokenCount).toBe(42)
    expect(stored.timestamp).toEqual(at)
  })

  it('rejects a batch with any bad message and writes none of it', async () => {
    const { repository, manager } = setup()
    const error = await manager
      .addMessages('a', 'c', [
        { role: 'user', content: 'fine' },
        { role: 'user', content: '' },
        { role: 'robot' as never, content: 'x' },
      ])
      .catch((e) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).issues.map((i) => i.field)).toEqual([
      'messages.1.content',
      'messages.2.role',
    ])
    expect(repository.messages).toHaveLength(0)
  })

  it('enforces the content, batch, token-count and metadata limits on both sides', async () => {
    const limits = LimitsSchema.parse({ maxContentChars: 10, maxBatchMessages: 2, maxMetadataBytes: 20 })
    const { manager } = setup(limits)
    await expect(
      manager.addMessage('a', 'c', { role: 'user', content: 'x'.repeat(10) }),
    ).resolves.toBeTruthy()
    const tooLong = await manager
      .addMessage('a', 'c', { role: 'user', content: 'x'.repeat(11) })
      .catch((e) => e)
    expect(tooLong.issues[0]).toMatchObject({ field: 'message.content', limit: 10 })
    const msg = { role: 'user' as const, content: 'hi' }
    await expect(manager.addMessages('a', 'c', [msg, msg])).resolves.toHaveLength(2)
    const tooMany = await manager.addMessages('a', 'c', [msg, msg, msg]).catch((e) => e)
    expect(tooMany.issues[0]).toMatchObject({ field: 'messages', limit: 2 })
    // {"k":"123456789012"} is exactly 20 bytes
    await expect(
      manager.addMessage('a', 'c', { ...msg, metadata: { k: '123456789012' } }),
    ).resolves.toBeTruthy()
    const bigMeta = await manager
      .addMessage('a', 'c', { ...msg, metadata: { k: '1234567890123' } })
      .catch((e) => e)
    expect(bigMeta.issues[0]).toMatchObject({ field: 'message.metadata', limit: 20 })
    const negative = await manager.addMessage('a', 'c', { ...msg, tokenCount: -1 }).catch((e) => e)
    expect(negative.issues[0].field).toBe('message.tokenCount')
    await expect(manager.addMessages('a', 'c', [])).rejects.toBeInstanceOf(ValidationError)
  })

  it('rejects malformed conversation ids', async () => {
    const { manager } = setup()
    for (const bad of ['', ' spaced', 'a b', 'x'.repeat(129), 'new\nline']) {
      await expect(manager.getOrCreate('a', bad)).rejects.toBeInstanceOf(ValidationError)
    }
    await expect(manager.getOrCreate('a', 'x'.repeat(128))).resolves.toBeTruthy()
    await expect(manager.getOrCreate('a', 'user:42/chat-7.b@x')).resolves.toBeTruthy()
  })

  it('compresses messages older than a given one into a [CONTEXT SUMMARY] system message', async () => {
    const { repository, manager } = setup()
    const t = (m: number) => new Date(NOW.getTime() + m * 60_000)
    const stored = await manager.addMessages(
      'a',
      'c',
      [0, 1, 2, 3].map((m) => ({ role: 'user' as const, content: `message ${m}`, timestamp: t(m) })),
    )
    const pivot = stored[2]!
    const result = await manager.compressMessages('a', 'c', pivot.id, 'the user said two things')
    expect(result.compressedCount).toBe(2)
    expect(result.summaryMessage).toMatchObject({
      role: 'system',
      content: `${CONTEXT_SUMMARY_PREFIX}\nthe user said two things`,
      isCompressed: false,
    })
    const session = await manager.getOrCreate('a', 'c')
    const order = repository.ordered(session).map((m) => (m.isCompressed ? `(${m.content})` : m.content))
    // The summary sits where the compressed messages were, before the pivot.
    expect(order).toEqual([
      '(message 0)',
      '(message 1)',
      `${CONTEXT_SUMMARY_PREFIX}\nthe user said two things`,
      'message 2',
      'message 3',
    ])
    expect(session.messageCount).toBe(5)
  })

  it('builds the summary itself when none is given, and does nothing when nothing is older', async () => {
    const { manager } = setup()
    const [first, second] = await manager.addMessages('a', 'c', [
      { role: 'user', content: 'one', timestamp: new Date(NOW.getTime() - 1000) },
      { role: 'user', content: 'two' },
    ])
    expect(await manager.compressMessages('a', 'c', first!.id)).toEqual({
      compressedCount: 0,
      summaryMessage: null,
    })
    const result = await manager.compressMessages('a', 'c', second!.id)
    expect(result.summaryMessage?.content).toBe(`${CONTEXT_SUMMARY_PREFIX}\nsummary of 1`)
  })

  it('rejects compression of an unknown session, an unknown message or an oversized summary', async () => {
    const { manager } = setup(LimitsSchema.parse({ maxSummaryChars: 5 }))
    await expect(manager.compressMessages('a', 'missing', '1')).rejects.toBeInstanceOf(NotFoundError)
    const [m] = await manager.addMessages('a', 'c', [{ role: 'user', content: 'one' }])
    await expect(manager.compressMessages('a', 'c', '999')).rejects.toBeInstanceOf(NotFoundError)
    const error = await manager.compressMessages('a', 'c', m!.id, '123456').catch((e) => e)
    expect(error.issues[0]).toMatchObject({ field: 'summary', limit: 5 })
  })

  it('deletes a session with its messages and forgets it', async () => {
    const { repository, manager } = setup()
    await manager.addMessage('a', 'c', { role: 'user', content: 'one' })
    expect(await manager.delete('a', 'c')).toBe(true)
    expect(repository.messages).toHaveLength(0)
    expect(await manager.find('a', 'c')).toBeNull()
    expect(await manager.delete('a', 'c')).toBe(false)
  })
})

describe('speakers', () => {
  it('stores an explicit speaker trimmed; without one and without metadata naming one it is null', async () => {
    const { manager } = setup()
    const named = await manager.addMessage('a', 'c', { role: 'user', speaker: '  Caroline ', content: 'hi' })
    expect(named.speaker).toBe('Caroline')
    // The role is not a speaker: two people can both be "user".
    const anonymous = await manager.addMessage('a', 'c', { role: 'assistant', content: 'hello' })
    expect(anonymous.speaker).toBeNull()
  })

  it('defaults to metadata.speaker, then metadata.name; the explicit field wins over both', async () => {
    const { manager } = setup()
    const stored = await manager.addMessages('a', 'c', [
      { role: 'user', content: '1', metadata: { speaker: 'Melanie', name: 'ignored' } },
      { role: 'user', content: '2', metadata: { name: ' Caroline ' } },
      { role: 'user', content: '3', speaker: 'Jon', metadata: { speaker: 'Gina' } },
      // A blank or non-string value names no one: the next key is tried.
      { role: 'user', content: '4', metadata: { speaker: '   ', name: 'Gina' } },
      { role: 'user', content: '5', metadata: { speaker: 42, name: { first: 'x' } } },
      { role: 'user', content: '6', speaker: null, metadata: { speaker: 'Nate' } },
    ])
    expect(stored.map((m) => m.speaker)).toEqual(['Melanie', 'Caroline', 'Jon', 'Gina', null, 'Nate'])
    // The metadata is kept as it was sent.
    expect(stored[1]?.metadata).toEqual({ name: ' Caroline ' })
  })

  it('refuses a blank or over-long speaker, naming the field it came from and the limit', async () => {
    const { repository, manager } = setup()
    const longest = 'x'.repeat(MAX_SPEAKER_CHARS)
    await expect(
      manager.addMessage('a', 'c', { role: 'user', speaker: longest, content: 'ok' }),
    ).resolves.toMatchObject({ speaker: longest })
    const refusals: [Parameters<typeof manager.addMessage>[2], string, number][] = [
      [{ role: 'user', speaker: `${longest}y`, content: 'x' }, 'message.speaker', MAX_SPEAKER_CHARS],
      [{ role: 'user', speaker: ' \t ', content: 'x' }, 'message.speaker', 1],
      [{ role: 'user', speaker: '', content: 'x' }, 'message.speaker', 1],
      [
        { role: 'user', content: 'x', metadata: { speaker: `${longest}y` } },
        'message.metadata.speaker',
        MAX_SPEAKER_CHARS,
      ],
      [
        { role: 'user', content: 'x', metadata: { name: `${longest}y` } },
        'message.metadata.name',
        MAX_SPEAKER_CHARS,
      ],
    ]
    for (const [message, field, limit] of refusals) {
      const error = await manager.addMessage('a', 'c', message).catch((e) => e)
      expect(error).toBeInstanceOf(ValidationError)
      expect(error.issues).toEqual([expect.objectContaining({ field, limit })])
    }
    // Trimming comes first: padding does not count against the limit.
    expect(speakerOf({ speaker: `  ${longest}  ` })).toEqual({ speaker: longest })
    const batch = await manager
      .addMessages('a', 'c', [
        { role: 'user', content: 'fine', speaker: 'Jon' },
        { role: 'user', content: 'bad', speaker: `${longest}y` },
      ])
      .catch((e) => e)
    expect(batch.issues).toEqual([expect.objectContaining({ field: 'messages.1.speaker' })])
    expect(repository.messages.map((m) => m.content)).toEqual(['ok'])
  })

  it('gives a summary no speaker', async () => {
    const { manager } = setup()
    const [first, second] = await manager.addMessages('a', 'c', [
      { role: 'user', speaker: 'Jon', content: 'one', timestamp: new Date(NOW.getTime() - 1000) },
      { role: 'user', speaker: 'Gina', content: 'two' },
    ])
    expect(first?.speaker).toBe('Jon')
    const result = await manager.compressMessages('a', 'c', second!.id)
    expect(result.summaryMessage?.speaker).toBeNull()
  })
})

describe('isSummaryText', () => {
  it("reads the summary prefix in any letter case at the start only, as the stores' set filter does", () => {
    expect(isSummaryText(`${CONTEXT_SUMMARY_PREFIX} they talked`)).toBe(true)
    expect(isSummaryText(`${CONTEXT_SUMMARY_PREFIX.toLowerCase()} they talked`)).toBe(true)
    expect(isSummaryText('[Context Summary]')).toBe(true)
    expect(isSummaryText(` ${CONTEXT_SUMMARY_PREFIX}`)).toBe(false)
    expect(isSummaryText('[CONTEXT SUMMAR')).toBe(false)
    expect(isSummaryText('we went hiking')).toBe(false)
  })
})
