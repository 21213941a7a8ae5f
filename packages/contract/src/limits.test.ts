import {
  AGENT_ID_PATTERN as CORE_AGENT_ID_PATTERN,
  CONVERSATION_ID_PATTERN as CORE_CONVERSATION_ID_PATTERN,
  RUN_ID_PATTERN as CORE_RUN_ID_PATTERN,
  DEFAULT_LIMITS,
  DEFAULT_OPTIMIZER_CONFIG,
  DEFAULT_POOL_LIMITS,
  DEFAULT_TRAJECTORY_LIMITS,
  DEFAULT_WORKING_CONTEXT_RULES,
  MAX_AGENT_ID_LENGTH,
  MAX_BUILD_TOOL_COUNT,
  MAX_CONTEXT_BUDGET_TOKENS,
  MAX_CONTEXT_WINDOW_TOKENS,
  MAX_CONVERSATION_ID_LENGTH,
  MAX_METRICS_WINDOW_SECONDS,
  MAX_SPEAKER_CHARS,
  MAX_TOOL_CALL_ID_CHARS,
  MAX_TOOL_NAME_CHARS,
  MIN_CONTEXT_WINDOW_TOKENS,
  RETENTION_DAYS_MAX,
  RETENTION_DAYS_MIN,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { describeFailure } from './errors.ts'
import { AGENT_ID_PATTERN, CONTRACT_LIMITS, CONVERSATION_ID_PATTERN, RUN_ID_PATTERN } from './limits.ts'
import { parseInput } from './validate.ts'

describe('the catalog’s limits are the API’s', () => {
  it('equals core’s defaults and constants (the limits held in the API services are probed through a server by the SDK’s contract suite)', () => {
    const { maxVectorDimensions: _vectors, ...shared } = DEFAULT_LIMITS
    for (const [name, value] of Object.entries(shared))
      expect(CONTRACT_LIMITS[name as keyof typeof CONTRACT_LIMITS], name).toBe(value)
    expect(CONTRACT_LIMITS.maxContextBudgetTokens).toBe(MAX_CONTEXT_BUDGET_TOKENS)
    expect(CONTRACT_LIMITS.minContextWindowTokens).toBe(MIN_CONTEXT_WINDOW_TOKENS)
    expect(CONTRACT_LIMITS.maxContextWindowTokens).toBe(MAX_CONTEXT_WINDOW_TOKENS)
    expect(CONTRACT_LIMITS.maxBuildToolCount).toBe(MAX_BUILD_TOOL_COUNT)
    expect(CONTRACT_LIMITS.maxConversationIdChars).toBe(MAX_CONVERSATION_ID_LENGTH)
    expect(CONTRACT_LIMITS.maxSpeakerChars).toBe(MAX_SPEAKER_CHARS)
    expect(CONTRACT_LIMITS.maxAgentIdChars).toBe(MAX_AGENT_ID_LENGTH)
    expect(CONTRACT_LIMITS.maxSnapshotHistory).toBe(DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit)
    expect(CONTRACT_LIMITS.maxMetricsWindowSeconds).toBe(MAX_METRICS_WINDOW_SECONDS)
    expect(CONVERSATION_ID_PATTERN.source).toBe(CORE_CONVERSATION_ID_PATTERN.source)
    expect(AGENT_ID_PATTERN.source).toBe(CORE_AGENT_ID_PATTERN.source)
  })

  it('restates trajectory memory’s limits as core defines them', () => {
    const {
      maxListLimit,
      defaultListLimit: _d,
      maxExtraBytes: _e,
      maxTrajectoriesPerDomain: _t,
      ...shared
    } = DEFAULT_TRAJECTORY_LIMITS
    for (const [name, value] of Object.entries(shared))
      expect(CONTRACT_LIMITS[name as keyof typeof CONTRACT_LIMITS], name).toBe(value)
    expect(CONTRACT_LIMITS.maxRunListLimit).toBe(maxListLimit)
    expect(RUN_ID_PATTERN.source).toBe(CORE_RUN_ID_PATTERN.source)
  })

  it('restates maintenance’s retention bounds as core defines them', () => {
    expect(CONTRACT_LIMITS.minRetentionDays).toBe(RETENTION_DAYS_MIN)
    expect(CONTRACT_LIMITS.maxRetentionDays).toBe(RETENTION_DAYS_MAX)
  })

  it('restates shared memory pools’ limits as core defines them', () => {
    expect(CONTRACT_LIMITS.maxPoolNameChars).toBe(DEFAULT_POOL_LIMITS.maxPoolNameChars)
    expect(CONTRACT_LIMITS.maxPoolDescriptionChars).toBe(DEFAULT_POOL_LIMITS.maxPoolDescriptionChars)
    expect(CONTRACT_LIMITS.maxPoolMembersPerCall).toBe(DEFAULT_POOL_LIMITS.maxMembersPerCall)
    expect(CONTRACT_LIMITS.maxPoolQueryLimit).toBe(DEFAULT_POOL_LIMITS.maxPoolQueryLimit)
  })
})

describe('the working context’s limits', () => {
  it('restates core’s working context rules and tool-call constants', () => {
    expect(CONTRACT_LIMITS.maxWorkingMessagesPerAppend).toBe(
      DEFAULT_WORKING_CONTEXT_RULES.maxMessagesPerAppend,
    )
    expect(CONTRACT_LIMITS.maxScratchpadChars).toBe(DEFAULT_WORKING_CONTEXT_RULES.maxScratchpadChars)
    expect(CONTRACT_LIMITS.maxToolResultChars).toBe(DEFAULT_WORKING_CONTEXT_RULES.maxToolResultChars)
    expect(CONTRACT_LIMITS.maxRecentMemoryLimit).toBe(DEFAULT_WORKING_CONTEXT_RULES.maxRecentLimit)
    expect(CONTRACT_LIMITS.maxToolCallIdChars).toBe(MAX_TOOL_CALL_ID_CHARS)
    expect(CONTRACT_LIMITS.maxToolNameChars).toBe(MAX_TOOL_NAME_CHARS)
  })

  it('refuses a scratchpad one character past the limit, naming the field and the limit', () => {
    const at = parseInput('setWorkingScratchpad', {
      scratchpad: 'x'.repeat(CONTRACT_LIMITS.maxScratchpadChars),
    })
    expect(at.ok).toBe(true)
    const over = parseInput('setWorkingScratchpad', {
      scratchpad: 'x'.repeat(CONTRACT_LIMITS.maxScratchpadChars + 1),
    })
    expect(over.ok).toBe(false)
    if (over.ok) return
    expect(over.error.issues).toEqual([
      expect.objectContaining({ field: 'scratchpad', limit: CONTRACT_LIMITS.maxScratchpadChars }),
    ])
  })
})

describe('parseInput', () => {
  it('accepts content at the limit and refuses one character more, naming the field and the limit', () => {
    const at = parseInput('addMessage', {
      conversationId: 'c-1',
      role: 'USER',
      content: 'x'.repeat(CONTRACT_LIMITS.maxContentChars),
    })
    expect(at.ok).toBe(true)
    const over = parseInput('addMessage', {
      conversationId: 'c-1',
      role: 'USER',
      content: 'x'.repeat(CONTRACT_LIMITS.maxContentChars + 1),
    })
    expect(over.ok).toBe(false)
    if (over.ok) return
    expect(over.error.code).toBe('VALIDATION')
    expect(over.error.issues).toEqual([
      expect.objectContaining({ field: 'content', limit: CONTRACT_LIMITS.maxContentChars }),
    ])
  })

  it('paths into batches and nested objects', () => {
    const result = parseInput('addMessages', {
      conversationId: 'c 1',
      messages: [
        { role: 'USER', content: 'fine' },
        { role: 'SHOUT', content: 'x' },
      ],
    })
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.error.issues?.map((i) => i.field)).toEqual(['conversationId', 'messages.1.role'])
  })

  it('bounds metadata by depth before bytes, and by bytes', () => {
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 5_000; i++) deep = { deep }
    const tooDeep = parseInput('addMessage', {
      conversationId: 'c',
      role: 'USER',
      content: 'x',
      metadata: deep,
    })
    expect(!tooDeep.ok && tooDeep.error.issues?.[0]).toMatchObject({
      field: 'metadata',
      limit: CONTRACT_LIMITS.maxMetadataDepth,
    })
    const tooBig = parseInput('addMessage', {
      conversationId: 'c',
      role: 'USER',
      content: 'x',
      metadata: { blob: 'x'.repeat(CONTRACT_LIMITS.maxMetadataBytes) },
    })
    expect(!tooBig.ok && tooBig.error.issues?.[0]).toMatchObject({
      field: 'metadata',
      limit: CONTRACT_LIMITS.maxMetadataBytes,
    })
  })

  it('describes a failure on one line', () => {
    const result = parseInput('search', { query: 'q', limit: 101 })
    expect(!result.ok && describeFailure(result.error)).toBe(
      'VALIDATION: limit: Too big: expected number to be <=100 (limit 100)',
    )
  })
})
