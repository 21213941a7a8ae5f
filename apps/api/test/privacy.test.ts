import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const ADD = `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename ... on Message { content metadata } ... on ValidationError { issues { field message limit } } } }`
const POLICY = `mutation($a: ID!, $m: PrivacyMode!, $p: [PrivacyPatternInput!]) { setPrivacyPolicy(agentId: $a, mode: $m, patterns: $p) { __typename ... on PrivacyPolicy { mode patterns { name } } ... on ValidationError { issues { field } } } }`

describe('privacy guard on every write (spec 001)', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-p')
  })
  afterAll(() => t.close())

  it('redacts by default, in content and in metadata', async () => {
    const r = await t.gql(
      ADD,
      {
        input: {
          conversationId: 'c',
          role: 'USER',
          content: 'my card is 4111 1111 1111 1111',
          metadata: { note: ['ssn 123-45-6789'] },
        },
      },
      key,
    )
    expect(r.data.addMessage).toEqual({
      __typename: 'Message',
      content: 'my card is [REDACTED:payment_card]',
      metadata: { note: ['ssn [REDACTED:ssn]'] },
    })
    const stored = await t.db.message.findMany()
    expect(JSON.stringify(stored)).not.toContain('4111')
    expect(JSON.stringify(await t.db.memoryEntry.findMany())).not.toContain('4111')
  })

  it('rejects under a reject policy, naming field and kind, and stores nothing of the batch', async () => {
    expect((await t.gql(POLICY, { a: 'agent-p', m: 'REJECT' })).data.setPrivacyPolicy).toEqual({
      __typename: 'PrivacyPolicy',
      mode: 'REJECT',
      patterns: [],
    })
    const before = await t.db.message.count()
    const r = await t.gql(
      `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "c", messages: $m }) { __typename ... on ValidationError { issues { field limit } } } }`,
      {
        m: [
          { role: 'USER', content: 'fine' },
          { role: 'USER', content: 'ssn 123-45-6789' },
        ],
      },
      key,
    )
    expect(r.data.addMessages).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'messages.1.content', limit: 'ssn' }],
    })
    expect(await t.db.message.count()).toBe(before)
    const k = await t.gql(
      `mutation { storeKnowledge(input: { category: USER_PREFERENCE, key: "card", value: "5555 5555 5555 4444" }) { __typename ... on ValidationError { issues { field limit } } } }`,
      {},
      key,
    )
    expect(k.data.storeKnowledge.issues).toEqual([{ field: 'value', limit: 'payment_card' }])
    expect(await t.db.knowledge.count()).toBe(0)
  })

  it("applies the agent's own patterns, and allows everything under allow", async () => {
    await t.gql(POLICY, { a: 'agent-p', m: 'REDACT', p: [{ name: 'employee_id', pattern: 'EMP-\\d{5}' }] })
    const r = await t.gql(
      ADD,
      { input: { conversationId: 'c', role: 'USER', content: 'ask EMP-12345' } },
      key,
    )
    expect(r.data.addMessage.content).toBe('ask [REDACTED:employee_id]')
    await t.gql(POLICY, { a: 'agent-p', m: 'ALLOW' })
    const allowed = await t.gql(
      ADD,
      { input: { conversationId: 'c', role: 'USER', content: 'card 4111111111111111' } },
      key,
    )
    expect(allowed.data.addMessage.content).toBe('card 4111111111111111')
  })

  it('refuses invalid patterns with the field, keeping the old policy', async () => {
    const r = await t.gql(POLICY, { a: 'agent-p', m: 'REJECT', p: [{ name: 'bad', pattern: '(' }] })
    expect(r.data.setPrivacyPolicy).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'patterns.0.pattern' }],
    })
    const agent = await t.gql(`{ agents { id privacyPolicy { mode } } }`)
    expect(agent.data.agents.find((a: any) => a.id === 'agent-p').privacyPolicy.mode).toBe('ALLOW')
  })
})
