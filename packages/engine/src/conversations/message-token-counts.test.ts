import { createTokenCounter, type TokenCounter } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { MessageTokenCounts } from './message-token-counts.ts'

/** The real BPE counter, with the texts it was asked to count. */
function countingTokenizer(): TokenCounter & { asked: string[] } {
  const real = createTokenCounter('o200k_base')
  const asked: string[] = []
  return {
    name: real.name,
    asked,
    count: (text) => {
      asked.push(text)
      return real.count(text)
    },
  }
}

const TEXT = 'The vault is behind the painting in the hall.'

describe('MessageTokenCounts', () => {
  it("counts a message's text once, per agent, conversation, message and text counted", () => {
    const tokenizer = countingTokenizer()
    const counts = new MessageTokenCounts(tokenizer)
    const fresh = createTokenCounter('o200k_base').count(TEXT)
    expect(counts.count('a', 'chat', '1', 'content', TEXT)).toBe(fresh)
    expect(counts.count('a', 'chat', '1', 'content', TEXT)).toBe(fresh)
    expect(tokenizer.asked).toEqual([TEXT])
    // Each of these is another key: counted again.
    counts.count('b', 'chat', '1', 'content', TEXT)
    counts.count('a', 'other', '1', 'content', TEXT)
    counts.count('a', 'chat', '2', 'content', TEXT)
    counts.count('a', 'chat', '1', 'turn', `user: ${TEXT}`)
    expect(tokenizer.asked).toHaveLength(5)
    expect(counts.held('a')).toBe(4)
    expect(counts.held('b')).toBe(1)
  })

  it('counts again a text of another length under the same id', () => {
    const tokenizer = countingTokenizer()
    const counts = new MessageTokenCounts(tokenizer)
    counts.count('a', 'chat', '1', 'content', 'short')
    expect(counts.count('a', 'chat', '1', 'content', `${TEXT} ${TEXT}`)).toBe(
      createTokenCounter('o200k_base').count(`${TEXT} ${TEXT}`),
    )
    expect(tokenizer.asked).toHaveLength(2)
  })

  it("forgets a deleted conversation's counts and a deleted agent's, and nothing of the others", () => {
    const counts = new MessageTokenCounts(countingTokenizer())
    // Ids that share a prefix with the ones forgotten: the keys are JSON, not prefixes of names.
    for (const [agent, conversation] of [
      ['a', 'chat'],
      ['a', 'chat2'],
      ['a2', 'chat'],
      ['b', 'chat'],
    ] as const) {
      counts.count(agent, conversation, '1', 'content', TEXT)
      counts.count(agent, conversation, '2', 'turn', TEXT)
    }
    counts.forgetConversation('a', 'chat')
    expect(counts.held('a')).toBe(2)
    expect(counts.held('a2')).toBe(2)
    counts.forget('a')
    expect(counts.held('a')).toBe(0)
    expect(counts.held('a2')).toBe(2)
    expect(counts.held('b')).toBe(2)
    counts.forget()
    expect(counts.held('a2') + counts.held('b')).toBe(0)
  })

  it('keeps at most `max` counts, the least recently used going first; 0 keeps none', () => {
    const tokenizer = countingTokenizer()
    const counts = new MessageTokenCounts(tokenizer, 2)
    counts.count('a', 'chat', '1', 'content', TEXT)
    counts.count('a', 'chat', '2', 'content', TEXT)
    counts.count('a', 'chat', '1', 'content', TEXT)
    counts.count('a', 'chat', '3', 'content', TEXT)
    expect(counts.held('a')).toBe(2)
    tokenizer.asked.length = 0
    counts.count('a', 'chat', '1', 'content', TEXT)
    counts.count('a', 'chat', '2', 'content', TEXT)
    expect(tokenizer.asked).toHaveLength(1)

    const none = new MessageTokenCounts(tokenizer, 0)
    tokenizer.asked.length = 0
    none.count('a', 'chat', '1', 'content', TEXT)
    none.count('a', 'chat', '1', 'content', TEXT)
    expect(tokenizer.asked).toHaveLength(2)
    expect(none.held('a')).toBe(0)
  })
})
