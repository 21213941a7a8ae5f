import type { TokenCounter } from '../budget/tokenizer.ts'
import { type FieldIssue, ValidationError } from '../errors.ts'
import { DEFAULT_LIMITS, type Limits } from '../limits.ts'
import { validateMessage } from '../sessions/session-manager.ts'
import type { Role } from '../types.ts'
import { MAX_TOOL_CALL_ID_CHARS, MAX_TOOL_NAME_CHARS, type WorkingContextRules } from './rules.ts'

/** One message of the current execution (spec 002's `Message`), before it reaches the stored conversation. */
export interface WorkingMessage {
  /** `wc-<seq>`: unique within the context, never a stored message's id. */
  id: string
  /** Appended before every later item of the context (messages and tool results share it). */
  seq: number
  /** The conversation a flush stores it into. */
  conversationId: string
  role: Role
  content: string
  /** The participant or tool that said it (a chat API's `name`). */
  name: string | null
  /** The tool call a TOOL message answers. */
  toolCallId: string | null
  tokenCount: number
  /** When it was appended (ISO 8601): a flush stores it with this timestamp. */
  at: string
}

/** One active tool call's result (spec 002's `toolResults` map entry), by its call id. */
export interface WorkingToolResult {
  toolCallId: string
  seq: number
  conversationId: string
  name: string
  content: string
  isError: boolean
  tokenCount: number
  at: string
}

/**
 * Spec 002's `WorkingMemory` of one agent, as JSON (the Redis adapter stores it as it is).
 * `version` changes on every write: a replica's cached copy is current while it matches.
 */
export interface WorkingContextState {
  agentId: string
  /** The conversation of the latest append (where a tool result goes when it names none). */
  conversationId: string | null
  messages: WorkingMessage[]
  toolResults: WorkingToolResult[]
  scratchpad: string
  scratchpadTokens: number
  /** Messages + tool results + scratchpad, by the configured tokenizer. */
  tokenCount: number
  nextSeq: number
  /** Null while nothing was ever written (or after a clear). */
  updatedAt: string | null
  expiresAt: string | null
  version: string | null
}

export interface NewWorkingMessage {
  role: Role
  content: string
  name?: string | null
  toolCallId?: string | null
}

export interface NewToolResult {
  toolCallId: string
  name: string
  content: string
  isError?: boolean
  conversationId?: string | null
}

/** What a flush moves into one conversation, oldest first. */
export interface FlushBatch {
  conversationId: string
  messages: {
    role: Role
    content: string
    speaker: string | null
    tokenCount: number
    timestamp: Date
    metadata: Record<string, unknown>
  }[]
}

/** What a flush took out of the context: the batches to store and what they held. */
export interface TakenForFlush {
  batches: FlushBatch[]
  messages: WorkingMessage[]
  toolResults: WorkingToolResult[]
  /** Tokens of the messages and tool results moved (the scratchpad stays). */
  tokens: number
}

export function emptyWorkingContext(agentId: string): WorkingContextState {
  return {
    agentId,
    conversationId: null,
    messages: [],
    toolResults: [],
    scratchpad: '',
    scratchpadTokens: 0,
    tokenCount: 0,
    nextSeq: 1,
    updatedAt: null,
    expiresAt: null,
    version: null,
  }
}

/**
 * The LRU's size calculation: UTF-8 bytes of the context as JSON, the shape it is held and sent
 * in. Strings dominate it, so this is what the context costs in memory within a small factor.
 */
export function workingContextBytes(state: WorkingContextState): number {
  return utf8Bytes(JSON.stringify(state))
}

/**
 * Spec 002's `if (memory.tokenCount > 32_000) flushToEpisodic()`: strictly past the threshold,
 * and only when there is something to move (the scratchpad stays behind).
 */
export function flushDue(
  state: WorkingContextState,
  rules: Pick<WorkingContextRules, 'flushThresholdTokens'>,
): boolean {
  return (
    state.tokenCount > rules.flushThresholdTokens &&
    (state.messages.length > 0 || state.toolResults.length > 0)
  )
}

/** Appends messages (all checked first: a refused append changes nothing). */
export function appendWorkingMessages(
  state: WorkingContextState,
  messages: readonly NewWorkingMessage[],
  conversationId: string,
  now: Date,
  counter: TokenCounter,
  rules: WorkingContextRules,
  limits: Limits = DEFAULT_LIMITS,
): WorkingContextState {
  if (messages.length === 0)
    throw new ValidationError([{ field: 'messages', message: 'at least one message is required', limit: 1 }])
  if (messages.length > rules.maxMessagesPerAppend) {
    throw new ValidationError([
      {
        field: 'messages',
        message: `at most ${rules.maxMessagesPerAppend} messages per append (got ${messages.length})`,
        limit: rules.maxMessagesPerAppend,
      },
    ])
  }
  const issues = messages.flatMap((message, i) => messageIssues(message, `messages.${i}`, limits))
  if (issues.length > 0) throw new ValidationError(issues)
  let seq = state.nextSeq
  const at = now.toISOString()
  const added = messages.map((message): WorkingMessage => {
    const id = seq++
    return {
      id: `wc-${id}`,
      seq: id,
      conversationId,
      role: message.role,
      content: message.content,
      name: message.name?.trim() || null,
      toolCallId: message.toolCallId ?? null,
      tokenCount: counter.count(message.content),
      at,
    }
  })
  const next = recount({ ...state, conversationId, messages: [...state.messages, ...added], nextSeq: seq })
  return withinSize(next, rules, 'messages')
}

/** Replaces the scratchpad (an empty text empties it). */
export function setWorkingScratchpad(
  state: WorkingContextState,
  scratchpad: string,
  counter: TokenCounter,
  rules: WorkingContextRules,
): WorkingContextState {
  if (scratchpad.length > rules.maxScratchpadChars) {
    throw new ValidationError([
      {
        field: 'scratchpad',
        message: `must be at most ${rules.maxScratchpadChars} characters (got ${scratchpad.length})`,
        limit: rules.maxScratchpadChars,
      },
    ])
  }
  const next = recount({ ...state, scratchpad, scratchpadTokens: scratchpad ? counter.count(scratchpad) : 0 })
  return withinSize(next, rules, 'scratchpad')
}

/** Records a tool call's result; a second result for the same call replaces the first. */
export function recordWorkingToolResult(
  state: WorkingContextState,
  result: NewToolResult,
  now: Date,
  counter: TokenCounter,
  rules: WorkingContextRules,
  defaultConversationId: string,
): WorkingContextState {
  const issues: FieldIssue[] = []
  const idIssue = nameIssue(result.toolCallId, 'toolCallId', MAX_TOOL_CALL_ID_CHARS)
  if (idIssue) issues.push(idIssue)
  const toolIssue = nameIssue(result.name, 'name', MAX_TOOL_NAME_CHARS)
  if (toolIssue) issues.push(toolIssue)
  if (result.content.length > rules.maxToolResultChars) {
    issues.push({
      field: 'content',
      message: `must be at most ${rules.maxToolResultChars} characters (got ${result.content.length})`,
      limit: rules.maxToolResultChars,
    })
  }
  if (issues.length > 0) throw new ValidationError(issues)
  const others = state.toolResults.filter((held) => held.toolCallId !== result.toolCallId)
  if (others.length >= rules.maxToolResults) {
    throw new ValidationError([
      {
        field: 'toolCallId',
        message: `the working context holds at most ${rules.maxToolResults} tool results: flush or clear it first`,
        limit: rules.maxToolResults,
      },
    ])
  }
  const recorded: WorkingToolResult = {
    toolCallId: result.toolCallId,
    seq: state.nextSeq,
    conversationId: result.conversationId ?? state.conversationId ?? defaultConversationId,
    name: result.name.trim(),
    content: result.content,
    isError: result.isError ?? false,
    tokenCount: counter.count(result.content),
    at: now.toISOString(),
  }
  const next = recount({ ...state, toolResults: [...others, recorded], nextSeq: state.nextSeq + 1 })
  return withinSize(next, rules, 'content')
}

/**
 * Takes the messages and tool results out for the stored conversation, in the order they came
 * (tool results as TOOL messages naming their tool and call), grouped by conversation in order of
 * first appearance; the scratchpad stays.
 */
export function takeForFlush(state: WorkingContextState): {
  taken: TakenForFlush
  rest: WorkingContextState
} {
  const items = [
    ...state.messages.map((m) => ({
      seq: m.seq,
      conversationId: m.conversationId,
      message: {
        role: m.role,
        content: m.content,
        speaker: m.name,
        tokenCount: m.tokenCount,
        timestamp: new Date(m.at),
        metadata: { workingContext: true, ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}) },
      },
    })),
    ...state.toolResults.map((r) => ({
      seq: r.seq,
      conversationId: r.conversationId,
      message: {
        role: 'tool' as Role,
        content: r.content,
        speaker: r.name,
        tokenCount: r.tokenCount,
        timestamp: new Date(r.at),
        metadata: { workingContext: true, toolCallId: r.toolCallId, isError: r.isError },
      },
    })),
  ].sort((a, b) => a.seq - b.seq)
  const batches: FlushBatch[] = []
  const byConversation = new Map<string, FlushBatch>()
  for (const item of items) {
    let batch = byConversation.get(item.conversationId)
    if (!batch) {
      batch = { conversationId: item.conversationId, messages: [] }
      byConversation.set(item.conversationId, batch)
      batches.push(batch)
    }
    batch.messages.push(item.message)
  }
  const tokens = state.tokenCount - state.scratchpadTokens
  return {
    taken: { batches, messages: state.messages, toolResults: state.toolResults, tokens },
    rest: recount({ ...state, messages: [], toolResults: [] }),
  }
}

/**
 * Puts back what a failed flush took (before anything appended since, which came later), so a
 * store that refused the flush loses nothing. A tool result recorded again since keeps the newer.
 */
export function putBackAfterFailedFlush(
  state: WorkingContextState,
  taken: TakenForFlush,
): WorkingContextState {
  const newer = new Set(state.toolResults.map((r) => r.toolCallId))
  return recount({
    ...state,
    messages: [...taken.messages, ...state.messages],
    toolResults: [...taken.toolResults.filter((r) => !newer.has(r.toolCallId)), ...state.toolResults],
  })
}

/** The context after a write: its time, expiry (the TTL runs from the last write) and new version. */
export function stampWorkingContext(
  state: WorkingContextState,
  now: Date,
  ttlMs: number,
  version: string,
): WorkingContextState {
  return {
    ...state,
    updatedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
    version,
  }
}

function recount(state: WorkingContextState): WorkingContextState {
  let tokens = state.scratchpadTokens
  for (const message of state.messages) tokens += message.tokenCount
  for (const result of state.toolResults) tokens += result.tokenCount
  return { ...state, tokenCount: tokens }
}

function withinSize(
  state: WorkingContextState,
  rules: WorkingContextRules,
  field: string,
): WorkingContextState {
  const bytes = workingContextBytes(state)
  if (bytes > rules.maxContextBytes) {
    throw new ValidationError([
      {
        field,
        message: `the working context would hold ${bytes} bytes, past its limit of ${rules.maxContextBytes}: flush or clear it first`,
        limit: rules.maxContextBytes,
      },
    ])
  }
  return state
}

function messageIssues(message: NewWorkingMessage, field: string, limits: Limits): FieldIssue[] {
  // The stored conversation's own rules (role, content, the speaker's length), so a flush never fails on them.
  const issues = validateMessage(
    { role: message.role, content: message.content, speaker: message.name },
    field,
    limits,
  )
  if (message.toolCallId != null) {
    const issue = nameIssue(message.toolCallId, `${field}.toolCallId`, MAX_TOOL_CALL_ID_CHARS)
    if (issue) issues.push(issue)
  }
  return issues
}

function nameIssue(value: string, field: string, max: number): FieldIssue | null {
  if (value.trim().length === 0) return { field, message: 'must not be blank', limit: 1 }
  if (value.length > max)
    return { field, message: `must be at most ${max} characters (got ${value.length})`, limit: max }
  return null
}

function utf8Bytes(text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff) {
      // A surrogate pair is one 4-byte character.
      bytes += 4
      i++
    } else bytes += 3
  }
  return bytes
}

/** An item of recentMemory read from the working context, newest first: a message without its order. */
export type WorkingContextItem = Omit<WorkingMessage, 'seq'>

/**
 * Spec 002's strategy 1 starts here: the context's newest messages and tool results (as TOOL
 * items), newest first, those of one conversation when named.
 */
export function newestWorkingItems(
  state: WorkingContextState,
  conversationId: string | null | undefined,
  limit: number,
): WorkingContextItem[] {
  const items = [
    ...state.messages.map((m) => ({
      seq: m.seq,
      item: {
        id: m.id,
        conversationId: m.conversationId,
        role: m.role,
        content: m.content,
        name: m.name,
        toolCallId: m.toolCallId,
        tokenCount: m.tokenCount,
        at: m.at,
      },
    })),
    ...state.toolResults.map((r) => ({
      seq: r.seq,
      item: {
        id: `tool-${r.toolCallId}`,
        conversationId: r.conversationId,
        role: 'tool' as Role,
        content: r.content,
        name: r.name,
        toolCallId: r.toolCallId,
        tokenCount: r.tokenCount,
        at: r.at,
      },
    })),
  ]
  return items
    .filter(({ item }) => conversationId == null || item.conversationId === conversationId)
    .sort((a, b) => b.seq - a.seq)
    .slice(0, limit)
    .map(({ item }) => item)
}
