import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// contextWindow and memoryContext keep each message's token count between calls (issue 18): a
// kept count is derived from a message, so deleting the message or its agent must drop it.

const ADD = `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, content: $t }) {
  __typename ... on Error { message } } }`
const WINDOW = `query($c: String!) { contextWindow(conversationId: $c) { __typename ... on Error { message } } }`
const TURNS = `query($c: String!) { memoryContext(input: { conversationId: $c, sections: [CONVERSATION] }) {
  __typename ... on MemoryContext { text } ... on Error { message } } }`
const DELETE = `mutation($id: ID!) { deleteAgent(id: $id) { __typename ... on Error { message } } }`
const CLEAR = `mutation($a: ID, $c: String!) { clearAll(agentId: $a, confirm: $c) { __typename ... on Error { message } } }`
const REPORT = `query($a: ID!) { deletionReport(agentId: $a) {
  __typename ... on DeletionReport { stores { store count } } ... on Error { message } } }`

describe("the messages' kept token counts", () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  /** What the deletion report counts of the agent's kept token counts. */
  async function counted(agentId: string): Promise<number | undefined> {
    const report = await t.gql(REPORT, { a: agentId })
    expect(report.data.deletionReport.__typename).toBe('DeletionReport')
    return (report.data.deletionReport.stores as { store: string; count: number }[]).find(
      (s) => s.store === 'message token counts',
    )?.count
  }

  it('are asked instead of the tokenizer, and deleteSession, deleteAgent and clearAll drop them', async () => {
    const counts = t.app.services.messageTokens
    const texts = ['The vault is behind the painting', 'Its code is 4711']
    for (const agentId of ['rt-tokens', 'rt-tokens-clear']) {
      const key = await createAgentKey(t, agentId)
      for (const c of ['doomed', 'kept'])
        for (const text of texts) expect((await t.gql(ADD, { c, t: text }, key)).errors).toBeUndefined()
      // contextWindow counts each message's content; memoryContext's conversation its turn lines.
      for (const c of ['doomed', 'kept'])
        expect((await t.gql(WINDOW, { c }, key)).data.contextWindow.__typename).toBe('ContextWindow')
      expect((await t.gql(TURNS, { c: 'kept' }, key)).data.memoryContext.text).toContain('4711')
      expect(await counted(agentId)).toBe(6)
    }
    // Asked again, the kept counts answer: the tokenizer is not asked about these messages.
    const asked = vi.spyOn(counts.tokenCounter, 'count')
    const key = await createAgentKey(t, 'rt-tokens')
    expect((await t.gql(WINDOW, { c: 'kept' }, key)).data.contextWindow.__typename).toBe('ContextWindow')
    expect(asked.mock.calls.map(([text]) => text).filter((text) => texts.includes(text))).toEqual([])
    asked.mockRestore()

    const deleted = await t.gql(
      `mutation { deleteSession(conversationId: "doomed") { __typename } }`,
      {},
      key,
    )
    expect(deleted.errors).toBeUndefined()
    // The other conversation's counts stay: its content and its turn lines.
    expect(await counted('rt-tokens')).toBe(4)
    expect((await t.gql(DELETE, { id: 'rt-tokens' })).data.deleteAgent.__typename).toBe('Agent')
    expect(await counted('rt-tokens')).toBe(0)
    expect(counts.held('rt-tokens')).toBe(0)
    const cleared = await t.gql(CLEAR, { a: 'rt-tokens-clear', c: 'CLEAR rt-tokens-clear' })
    expect(cleared.data.clearAll.__typename).toBe('ClearAllPayload')
    expect(await counted('rt-tokens-clear')).toBe(0)
  })
})
