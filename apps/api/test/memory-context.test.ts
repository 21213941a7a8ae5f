import { createTokenCounter } from '@engram/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const CONTEXT = `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename
  ... on MemoryContext { text totalTokens budgetTokens cached generatedAt
    sections { section title budgetTokens usedTokens included omitted includedCount omittedCount } }
  ... on ValidationError { issues { field limit } } } }`

const tokens = createTokenCounter('o200k_base')

describe('memoryContext: the token-budgeted block for a prompt', () => {
  let t: TestApp
  let key: string
  const ids: Record<string, string> = {}
  const context = async (input: Record<string, unknown>, asKey = key) =>
    (await t.gql(CONTEXT, { input }, asKey)).data.memoryContext
  const remember = async (name: string, input: Record<string, unknown>, asKey = key) => {
    const r = await t.gql(
      `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { ... on MemoryWrite { outcome memory { id } } } }`,
      { i: input },
      asKey,
    )
    expect(r.data.createMemory.outcome, name).toBe('STORED')
    ids[name] = r.data.createMemory.memory.id
  }

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-c')
    await createAgentKey(t, 'agent-c2')
    await remember('override', {
      content: 'Always answer in British English',
      category: 'PREFERENCE',
      pinned: true,
    })
    await remember('name', { content: 'The user is called Priya', category: 'FACT', importance: 0.9 })
    await remember('tea', {
      content: 'Drinks jasmine tea every afternoon',
      category: 'PREFERENCE',
      importance: 0.4,
    })
    await remember('deadline', { content: 'Promised the grant report by Friday', category: 'COMMITMENT' })
    await remember('manager', {
      content: 'Priya reports to Tomas, the lab director',
      category: 'RELATIONSHIP',
    })
    await remember('grant', {
      content: 'The grant application is for a marine biology survey',
      category: 'CONTEXT',
    })
    await t.gql(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "grant portal", value: "submissions close at 17:00 UTC" }) { __typename } }`,
      {},
      key,
    )
    for (const content of [
      'Can you help with the grant report?',
      'Sure, which section first?',
      'The budget section of the grant',
    ]) {
      await t.gql(
        `mutation($c: String!) { addMessage(input: { conversationId: "chat-1", role: USER, content: $c }) { __typename } }`,
        { c: content },
        key,
      )
    }
    await remember(
      'secret',
      { agentId: 'agent-c2', content: 'Priya secret from another agent', category: 'FACT' },
      ADMIN_KEY,
    )
  })
  afterAll(() => t.close())

  it('assembles the sections in priority order as a <memory_context> block, counted with the tokenizer', async () => {
    const c = await context({ query: 'grant report deadline', conversationId: 'chat-1' })
    expect(c.text.startsWith('<memory_context>\n')).toBe(true)
    expect(c.text.endsWith('</memory_context>')).toBe(true)
    expect(c.totalTokens).toBe(tokens.count(c.text))
    expect(c.budgetTokens).toBe(8000)
    const order = [
      '## User overrides',
      '## User profile',
      '## Working memory',
      '## Key relationships',
      '## Knowledge',
      '## Current conversation',
    ]
    const positions = order.map((heading) => c.text.indexOf(heading))
    for (const [i, p] of positions.entries()) expect(p, order[i]).toBeGreaterThan(-1)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    expect(c.text).toContain('- Always answer in British English')
    expect(c.text).toContain('- The user is called Priya')
    expect(c.text).toContain('- Promised the grant report by Friday')
    expect(c.text).toContain('- Priya reports to Tomas, the lab director')
    expect(c.text).toContain('- grant portal: submissions close at 17:00 UTC')
    expect(c.text).toContain('- user: The budget section of the grant')
    expect(c.text).not.toContain('secret from another agent')
    const section = (name: string) => c.sections.find((s: any) => s.section === name)
    expect(section('USER_OVERRIDES')).toMatchObject({
      budgetTokens: null,
      included: [`memory:${ids.override}`],
    })
    expect(section('PROFILE')).toMatchObject({ budgetTokens: 2000, includedCount: 2, omittedCount: 0 })
    // The profile lists the most important first.
    expect(section('PROFILE').included).toEqual([`memory:${ids.name}`, `memory:${ids.tea}`])
    expect(section('WORKING_MEMORY').budgetTokens).toBe(500)
    expect(section('RELATIONSHIPS').budgetTokens).toBe(300)
    // Everything relevant is already in an earlier section: not repeated.
    expect(section('RELEVANT_MEMORIES')).toMatchObject({ includedCount: 0, omittedCount: 0 })
    const used = c.sections.reduce((sum: number, s: any) => sum + s.usedTokens, 0)
    expect(used).toBeLessThanOrEqual(c.totalTokens)
  })

  it('trims lower priorities first when the total budget runs out, and reports what it left out', async () => {
    const full = await context({ query: 'grant report deadline', conversationId: 'chat-1' })
    const tight = await context({
      query: 'grant report deadline',
      conversationId: 'chat-1',
      budgetTokens: 60,
    })
    expect(tight.totalTokens).toBeLessThanOrEqual(60)
    expect(tight.totalTokens).toBe(tokens.count(tight.text))
    const section = (c: any, name: string) => c.sections.find((s: any) => s.section === name)
    expect(section(tight, 'USER_OVERRIDES').includedCount).toBe(1)
    expect(section(tight, 'CONVERSATION').includedCount).toBe(0)
    expect(section(tight, 'CONVERSATION').omittedCount).toBe(section(full, 'CONVERSATION').includedCount)
    const lost = tight.sections.reduce((n: number, s: any) => n + s.omittedCount, 0)
    expect(lost).toBeGreaterThan(0)
    // What was kept is a prefix of the priority order: once a section lost items, no later one kept more than it had room for.
    const firstTrimmed = tight.sections.findIndex((s: any) => s.omittedCount > 0)
    expect(firstTrimmed).toBeGreaterThan(0)
  })

  it('keeps user overrides even past the budget', async () => {
    const c = await context({ budgetTokens: 5, sections: ['USER_OVERRIDES', 'PROFILE'] })
    expect(c.text).toContain('Always answer in British English')
    expect(c.totalTokens).toBeGreaterThan(5)
    expect(c.sections.find((s: any) => s.section === 'PROFILE').includedCount).toBe(0)
  })

  it('honours each section budget, configurable per agent', async () => {
    const before = await context({ sections: ['PROFILE'] })
    expect(before.sections[0].includedCount).toBe(2)
    const r = await t.gql(
      `mutation { updateMemorySettings(contextBudgets: { profile: 100 }) { __typename } }`,
      {},
      key,
    )
    expect(r.data.updateMemorySettings.__typename).toBe('MemorySettings')
    await t.gql(
      `mutation { updateMemorySettings(contextBudgets: { profile: 2000 }) { __typename } }`,
      {},
      key,
    )
    // 100 is the lowest profile budget: both short facts still fit; the report shows the budget used.
    const k = await createAgentKey(t, 'agent-c3')
    for (let i = 0; i < 12; i++) {
      const words = Array.from({ length: 20 }, (_, j) => `w${i}x${j}`).join(' ')
      await remember(
        `long${i}`,
        { content: `Prefers ${words}`, category: 'PREFERENCE', importance: 1 - i / 20 },
        k,
      )
    }
    await t.gql(`mutation { updateMemorySettings(contextBudgets: { profile: 100 }) { __typename } }`, {}, k)
    const limited = (await context({ sections: ['PROFILE'] }, k)).sections[0]
    expect(limited.budgetTokens).toBe(100)
    expect(limited.usedTokens).toBeLessThanOrEqual(100)
    expect(limited.omittedCount).toBeGreaterThan(0)
    expect(limited.included[0]).toBe(`memory:${ids.long0}`)
    // A preference the profile had no room for comes back among the relevant memories when it matches.
    const withQuery = await context({ query: 'w7x3 w7x4', sections: ['PROFILE', 'RELEVANT_MEMORIES'] }, k)
    const relevant = withQuery.sections.find((s: any) => s.section === 'RELEVANT_MEMORIES')
    expect(relevant.included[0]).toBe(`memory:${ids.long7}`)
    expect(withQuery.sections[0].included).not.toContain(`memory:${ids.long7}`)
    expect(withQuery.text.indexOf('## Relevant memories')).toBeGreaterThan(
      withQuery.text.indexOf('## User profile'),
    )
  })

  it('rejects a budget out of range naming the field and the limit', async () => {
    for (const budgetTokens of [0, 200_001]) {
      const c = await context({ budgetTokens })
      expect(c.__typename).toBe('ValidationError')
      expect(c.issues[0]).toMatchObject({ field: 'budgetTokens', limit: '200000' })
    }
    expect((await context({ budgetTokens: 200_000, sections: ['PROFILE'] })).__typename).toBe('MemoryContext')
    expect((await context({ budgetTokens: 1, sections: ['PROFILE'] })).__typename).toBe('MemoryContext')
  })

  it('is cached for 10 seconds and invalidated by any write to the agent', async () => {
    const input = { query: 'tea', sections: ['PROFILE', 'RELEVANT_MEMORIES'] }
    const first = await context(input)
    expect(first.cached).toBe(false)
    t.clock.advance(9_999)
    expect((await context(input)).cached).toBe(true)
    t.clock.advance(1)
    const expired = await context(input)
    expect(expired.cached).toBe(false)
    expect((await context(input)).cached).toBe(true)
    // Another agent's write leaves this cache alone.
    await t.gql(
      `mutation { createMemory(input: { agentId: "agent-c2", content: "Unrelated note", category: FACT }) { __typename } }`,
    )
    expect((await context(input)).cached).toBe(true)
    await t.gql(
      `mutation { createMemory(input: { content: "Prefers oolong tea to jasmine now", category: PREFERENCE }) { __typename } }`,
      {},
      key,
    )
    const fresh = await context(input)
    expect(fresh.cached).toBe(false)
    expect(fresh.text).toContain('Prefers oolong tea')
    // A background write (the optimizer) invalidates it too.
    expect((await context(input)).cached).toBe(true)
    await t.gql(`mutation { runOptimizer { __typename } }`, {}, key)
    expect((await context(input)).cached).toBe(false)
  })

  it('counts included memories as accessed', async () => {
    const before = await t.db.memoryItem.findUniqueOrThrow({ where: { id: Number(ids.manager) } })
    await context({ sections: ['RELATIONSHIPS'], budgetTokens: 1000 })
    const after = await t.db.memoryItem.findUniqueOrThrow({ where: { id: Number(ids.manager) } })
    expect(after.accessCount).toBe(before.accessCount + 1)
  })

  it('keeps world facts out of the user profile and finds them as relevant memories for a user (issue 10)', async () => {
    const k = await createAgentKey(t, 'agent-c4')
    const write = (content: string, category: string, userId: string) =>
      remember(content, { content, category, userId }, k)
    await write('Marco Ruiz is the on-call SRE', 'FACT', 'dana')
    await write('The ETL subnet is 10.20.14.0/24', 'FACT', 'dana')
    await write('Dana works the night shift', 'FACT', 'dana')
    await write('Prefers short answers with shell commands', 'PREFERENCE', 'dana')
    await write('Ivo Petrov is the on-call DBA', 'FACT', 'ivo')
    const c = await context({ query: 'who is the on-call SRE?', userId: 'dana' }, k)
    const section = (name: string) => c.sections.find((s: any) => s.section === name)
    expect(section('PROFILE').included.sort()).toEqual(
      [ids['Dana works the night shift'], ids['Prefers short answers with shell commands']]
        .map((id) => `memory:${id}`)
        .sort(),
    )
    expect(section('PROFILE').included).not.toContain(`memory:${ids['Marco Ruiz is the on-call SRE']}`)
    const relevant = section('RELEVANT_MEMORIES').included
    expect(relevant[0]).toBe(`memory:${ids['Marco Ruiz is the on-call SRE']}`)
    // Only this user's memories.
    expect(relevant).not.toContain(`memory:${ids['Ivo Petrov is the on-call DBA']}`)
    const profileText = c.text.slice(
      c.text.indexOf('## User profile'),
      c.text.indexOf('## Relevant memories'),
    )
    expect(profileText).not.toContain('Marco Ruiz')
    expect(c.text.slice(c.text.indexOf('## Relevant memories'))).toContain('- Marco Ruiz is the on-call SRE')
  })

  it('stores what rememberThis was asked to remember without the filler around it (issue 10)', async () => {
    const r = await t.gql(
      `mutation { rememberThis(input: { text: "Remember that the ETL subnet is 10.20.14.0/24 for next time" }) { ... on MemoryWrite { outcome memory { content category } } } }`,
      {},
      key,
    )
    expect(r.data.rememberThis).toEqual({
      outcome: 'STORED',
      memory: { content: 'The ETL subnet is 10.20.14.0/24', category: 'FACT' },
    })
  })

  it('names a conversation that does not exist', async () => {
    const c = await t.gql(
      `{ memoryContext(input: { conversationId: "nope" }) { __typename ... on NotFoundError { resource id } } }`,
      {},
      key,
    )
    expect(c.data.memoryContext).toEqual({ __typename: 'NotFoundError', resource: 'Session', id: 'nope' })
  })
})

describe('memoryContext: the conversation window counts back from the newest message', () => {
  it('keeps an imported history’s recent summaries and leaves out the older ones, whatever today is', async () => {
    const t = await createTestApp()
    try {
      const k = await createAgentKey(t, 'agent-window')
      const add = (content: string, timestamp: string) =>
        t.gql(
          `mutation($c: String!, $t: DateTime!) { addMessage(input: { conversationId: "old", role: SYSTEM, content: $c, timestamp: $t }) { __typename } }`,
          { c: content, t: timestamp },
          k,
        )
      await add('[CONTEXT SUMMARY] The user planned a trip to Lisbon', '2023-01-05T10:00:00Z')
      await add('[CONTEXT SUMMARY] The user booked flights to Porto', '2023-03-01T10:00:00Z')
      await add('Thanks, see you next week', '2023-03-02T10:00:00Z')
      const set = await t.gql(
        `mutation { updateMemorySettings(settings: { conversationWindowDays: 30 }) { __typename } }`,
        {},
        k,
      )
      expect(set.data.updateMemorySettings.__typename).toBe('MemorySettings')
      const r = await t.gql(CONTEXT, { input: { query: 'trip flights' } }, k)
      const text = r.data.memoryContext.text as string
      // 30 days back from 2 March 2023 (the newest message), not from the clock (2026).
      expect(text).toContain('Porto')
      expect(text).not.toContain('Lisbon')
    } finally {
      await t.close()
    }
  })
})
