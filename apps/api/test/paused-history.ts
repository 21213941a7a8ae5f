// The history the dialogue-context tests rank over (search-dialogue-reads, search-candidate-rows):
// twelve conversations of 40 turns by Alice and Bob over a small vocabulary, so candidates share
// words across conversations and episodes.

import { seededRandom } from '@engram/core'
import { expect } from 'vitest'
import type { TestApp } from './helpers.ts'

const BATCH = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename } }`
export const MINUTE = 60_000
export const HOUR = 60 * MINUTE

/**
 * Writes conversations `c0`…`c11`, turns minutes apart mostly and now and then a pause past the
 * hour (a new episode) or none, drawn from `seed`. With `summaries`, turns 9 and 29 of each are
 * context summaries (one upper-case marker, one lower-case): they share the messages' index and
 * vectors but are never MESSAGES hits.
 */
export async function addPausedHistory(
  t: TestApp,
  key: string,
  seed: number,
  options: { summaries?: boolean } = {},
): Promise<void> {
  const random = seededRandom(seed)
  const words = 'garden film cello winter drama tea party river book train coffee storm lake'.split(' ')
  const start = Date.parse('2026-01-05T08:00:00Z')
  for (let c = 0; c < 12; c++) {
    let at = start + c * 2 * 86_400_000
    const turns = Array.from({ length: 40 }, (_, i) => {
      const draw = random()
      at += draw < 0.1 ? 0 : draw < 0.8 ? Math.floor(random() * 40) * MINUTE : HOUR + 20 * MINUTE
      const text = Array.from(
        { length: 3 + Math.floor(random() * 6) },
        () => words[Math.floor(random() * words.length)],
      ).join(' ')
      const content = !options.summaries
        ? text
        : i === 9
          ? `[CONTEXT SUMMARY] ${text}`
          : i === 29
            ? `[context summary] ${text}`
            : text
      return {
        role: 'USER',
        content,
        timestamp: new Date(at).toISOString(),
        metadata: { speaker: i % 2 === 0 ? 'Alice' : 'Bob' },
      }
    })
    const r = await t.gql(BATCH, { c: `c${c}`, m: turns }, key)
    expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
  }
}
