import type { TokenCounter } from '@engram/core'
import { LRUCache } from 'lru-cache'

/**
 * Messages whose counts this process keeps, over all agents (~150 bytes each: ~15 MB at the
 * default). 0 keeps none: every count is made afresh.
 */
export const DEFAULT_MESSAGE_TOKEN_COUNTS = 100_000

/**
 * Which text of a message was counted: its content (contextWindow), or memoryContext's
 * conversation line (`role: content`).
 */
export type CountedText = 'content' | 'turn'

/**
 * The configured tokenizer's count of a conversation's messages, kept between calls.
 * contextWindow costs every uncompressed message of the conversation on every call, and
 * memoryContext every recent turn: with BPE that doubled contextWindow's CPU (2.40 → 4.95 ms
 * per call over a 100-message conversation, docs/speed-pgflake18.md). The stored `tokenCount`
 * column cannot stand in: a client may supply it (addMessage's `tokenCount`), and issue 10 made
 * every figure the configured tokenizer's count of the text returned.
 *
 * A message's text never changes under its id (compression marks messages and writes a new
 * summary message; redaction happens before the write), ids are never reused (SQLite's
 * AUTOINCREMENT, Postgres's SERIAL), and the tokenizer is the process's: a count stays right
 * while its message exists. What deletes messages here drops their counts: the conversation's
 * deletion (forgetConversation), the agent's deletion, clearing, import and restore, here or on
 * another replica (forget, from the lifecycle's dropDerived). The text's length is kept beside
 * the count as a cheap check against an id that came back with another text (a hash would cost
 * a pass over the text: a fifth to a tenth of counting it).
 */
export class MessageTokenCounts {
  private readonly counts: LRUCache<string, { length: number; tokens: number }> | null

  constructor(
    /** The process's tokenizer (what every count is). */
    readonly tokenCounter: TokenCounter,
    max: number = DEFAULT_MESSAGE_TOKEN_COUNTS,
  ) {
    this.counts = max > 0 ? new LRUCache({ max }) : null
  }

  /** The tokenizer's count of `text`, one of the message's texts (`counted`). */
  count(
    agentId: string,
    conversationId: string,
    messageId: string,
    counted: CountedText,
    text: string,
  ): number {
    if (!this.counts) return this.tokenCounter.count(text)
    const key = JSON.stringify([agentId, conversationId, messageId, counted])
    const held = this.counts.get(key)
    if (held && held.length === text.length) return held.tokens
    const tokens = this.tokenCounter.count(text)
    this.counts.set(key, { length: text.length, tokens })
    return tokens
  }

  /** Drops the counts of a deleted conversation's messages. */
  forgetConversation(agentId: string, conversationId: string): void {
    this.drop(`${JSON.stringify([agentId, conversationId]).slice(0, -1)},`)
  }

  /** Drops an agent's counts (every agent's when none is named). */
  forget(agentId?: string): void {
    if (agentId === undefined) this.counts?.clear()
    else this.drop(agentPrefix(agentId))
  }

  /** Counts kept for an agent (the deletion report's). */
  held(agentId: string): number {
    if (!this.counts) return 0
    const prefix = agentPrefix(agentId)
    let held = 0
    for (const key of this.counts.keys()) if (key.startsWith(prefix)) held++
    return held
  }

  private drop(prefix: string): void {
    if (!this.counts) return
    // A deletion is rare beside the counts it saves: one pass over the keys.
    for (const key of [...this.counts.keys()]) if (key.startsWith(prefix)) this.counts.delete(key)
  }
}

/** The keys are JSON arrays: an agent's all begin with `["<agent>",`. */
function agentPrefix(agentId: string): string {
  return `${JSON.stringify([agentId]).slice(0, -1)},`
}
