import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { ISOLATION_PARTS } from './isolation-parts.ts'
import {
  APPEND_WORKING_CONTEXT,
  GET_WORKING_CONTEXT,
  RECENT_MEMORY,
  RECORD_TOOL_RESULT,
  SET_SCRATCHPAD,
} from './working-context-documents.ts'

// Agent A's key against agent B's working context (issue 17): every root field of the part, by
// naming B and by using the same conversation ids B uses. B's context (L1), its stored turns and
// what recentMemory answers for it are fingerprinted before each case and compared after.

const forbidden = 'ForbiddenError'

interface Case {
  name: string
  query: string
  vars?: Record<string, unknown>
  expect: (data: any) => void
}

describe("an agent key never reads or changes another agent's working context", () => {
  let t: TestApp
  let keyA: string

  const fingerprint = async () => ({
    context: (await t.gql(GET_WORKING_CONTEXT, { a: 'agent-b' }, ADMIN_KEY)).data,
    recent: (await t.gql(RECENT_MEMORY, { a: 'agent-b', l: 50 }, ADMIN_KEY)).data,
    messages: await t.db.message.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
    sessions: await t.db.session.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
  })

  beforeAll(async () => {
    t = await createTestApp({ env: { ENGRAM_EXTRACTION: 'off', ENGRAM_SUMMARIES: 'off' } })
    keyA = await createAgentKey(t, 'agent-a')
    await createAgentKey(t, 'agent-b')
    // B: a stored turn in "shared-name", and a working context holding a secret in the same conversation.
    await t.gql(
      `mutation { addMessage(input: { agentId: "agent-b", conversationId: "shared-name", role: USER, content: "B stored hunter2" }) { __typename } }`,
    )
    await t.gql(
      APPEND_WORKING_CONTEXT,
      { a: 'agent-b', m: [{ role: 'USER', content: 'B working secret hunter2' }], c: 'shared-name' },
      ADMIN_KEY,
    )
    await t.gql(
      RECORD_TOOL_RESULT,
      { a: 'agent-b', id: 'call-b', n: 'vault', t: 'B tool hunter2' },
      ADMIN_KEY,
    )
    await t.gql(SET_SCRATCHPAD, { a: 'agent-b', s: 'B scratchpad hunter2' }, ADMIN_KEY)
  })
  afterAll(async () => {
    await t?.close()
  })

  const cases: Case[] = [
    {
      name: 'workingContext naming B',
      query: `{ workingContext(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.workingContext.__typename).toBe(forbidden),
    },
    {
      name: "workingContext is A's own (empty)",
      query: `{ workingContext { ... on WorkingContext { agentId messages { content } toolResults { content } scratchpad } } }`,
      expect: (d) =>
        expect(d.workingContext).toEqual({
          agentId: 'agent-a',
          messages: [],
          toolResults: [],
          scratchpad: '',
        }),
    },
    {
      name: 'recentMemory naming B',
      query: `{ recentMemory(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.recentMemory.__typename).toBe(forbidden),
    },
    {
      name: "recentMemory of B's conversation id reads A's own",
      query: `{ recentMemory(conversationId: "shared-name") { ... on QueryRecentMemorySuccess { data { content } } } }`,
      expect: (d) => expect(d.recentMemory.data).toEqual([]),
    },
    {
      name: 'appendWorkingContext naming B',
      query: `mutation { appendWorkingContext(agentId: "agent-b", messages: [{ role: USER, content: "injected" }]) { __typename } }`,
      expect: (d) => expect(d.appendWorkingContext.__typename).toBe(forbidden),
    },
    {
      name: 'setWorkingScratchpad naming B',
      query: `mutation { setWorkingScratchpad(agentId: "agent-b", scratchpad: "overwritten") { __typename } }`,
      expect: (d) => expect(d.setWorkingScratchpad.__typename).toBe(forbidden),
    },
    {
      name: 'recordToolResult naming B (B’s own call id)',
      query: `mutation { recordToolResult(agentId: "agent-b", toolCallId: "call-b", name: "vault", content: "replaced") { __typename } }`,
      expect: (d) => expect(d.recordToolResult.__typename).toBe(forbidden),
    },
    {
      name: 'flushWorkingContext naming B',
      query: `mutation { flushWorkingContext(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.flushWorkingContext.__typename).toBe(forbidden),
    },
    {
      name: 'clearWorkingContext naming B',
      query: `mutation { clearWorkingContext(agentId: "agent-b") { __typename } }`,
      expect: (d) => expect(d.clearWorkingContext.__typename).toBe(forbidden),
    },
    {
      name: "flushWorkingContext of A's own touches nothing of B's",
      query: `mutation { flushWorkingContext { ... on WorkingContextChange { flush { messages } context { agentId } } } }`,
      expect: (d) => expect(d.flushWorkingContext).toEqual({ flush: null, context: { agentId: 'agent-a' } }),
    },
    {
      name: "clearWorkingContext of A's own touches nothing of B's",
      query: `mutation { clearWorkingContext { ... on WorkingContext { agentId } } }`,
      expect: (d) => expect(d.clearWorkingContext).toEqual({ agentId: 'agent-a' }),
    },
  ]

  it('covers exactly the fields this part registers in ISOLATION_PARTS', () => {
    const covered = new Set(cases.map((c) => /^\s*(?:mutation|query)?\s*\{\s*(\w+)/.exec(c.query)?.[1]))
    expect([...covered].sort()).toEqual([...(ISOLATION_PARTS['working-context'] ?? [])].sort())
  })

  it.each(cases)('$name', async (c) => {
    const before = await fingerprint()
    expect(JSON.stringify(before)).toContain('B working secret')
    const result = await t.gql(c.query, c.vars ?? {}, keyA)
    expect(result.errors).toBeUndefined()
    c.expect(result.data)
    expect(JSON.stringify(result.data)).not.toContain('hunter2')
    expect(await fingerprint()).toEqual(before)
  })
})
