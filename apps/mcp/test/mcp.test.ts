import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONTRACT_LIMITS, type EngramClient } from '@engram/contract'
import { Engram, unwrap } from '@engram/sdk'
import { open } from '@engram/sdk/embedded'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, startServer } from '../../../packages/sdk/test/server.ts'
import { listenHttp } from '../src/server.ts'

const appDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)))

type Transport = 'stdio' | 'http'

/** Remote: against a running API with an agent key. Embedded: on a database file, no server. */
type Mode = 'remote' | 'embedded'

/**
 * Where the MCP server's memory lives: a running API (agent keys) or a file (agent ids). `clientOf`
 * is an agent's client in this process (to seed another agent's data); `args` the flags the
 * stdio server is started with for an agent.
 */
interface Backend {
  clientOf(agentId: string): Promise<EngramClient>
  /** An operator's client: the graph's corrections are admin work. */
  adminClient(): Promise<EngramClient>
  args(agentId: string): Promise<string[]>
  close(): Promise<void>
}

async function backend(mode: Mode): Promise<Backend> {
  if (mode === 'remote') {
    const api = await startServer()
    const keys = new Map<string, string>()
    const keyOf = async (agentId: string) => {
      if (!keys.has(agentId)) keys.set(agentId, await api.agentKey(agentId))
      return keys.get(agentId) as string
    }
    return {
      clientOf: async (agentId) => Engram.connect({ url: api.url, apiKey: await keyOf(agentId) }),
      adminClient: async () => Engram.connect({ url: api.url, apiKey: ADMIN_KEY }),
      args: async (agentId) => ['--url', api.url, '--api-key', await keyOf(agentId)],
      close: () => api.close(),
    }
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-mcp-'))
  const file = path.join(dir, 'memory.db')
  return {
    clientOf: (agentId) => open({ path: file, agentId, optimizerIntervalMs: 0 }),
    adminClient: () => open({ path: file, operator: true, optimizerIntervalMs: 0 }),
    args: async (agentId) => ['--db', file, '--agent', agentId],
    async close() {
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

describe.each<[Transport, Mode]>([
  ['stdio', 'remote'],
  ['http', 'remote'],
  ['stdio', 'embedded'],
  ['http', 'embedded'],
])('MCP server over %s, %s', (transport, mode) => {
  let api: Backend
  let mcp: Client
  let clientA: EngramClient | null = null
  let stopHttp: (() => Promise<void>) | null = null
  let theirMemoryId: string
  let theirEntityId: string
  const agentA = `mcp-a-${transport}`
  const agentB = `mcp-b-${transport}`

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = (await mcp.callTool({ name, arguments: args })) as {
      isError?: boolean
      content: { type: string; text: string }[]
    }
    const text = result.content[0]?.text ?? ''
    return { isError: result.isError === true, text, json: result.isError ? null : JSON.parse(text) }
  }

  beforeAll(async () => {
    api = await backend(mode)
    const b = await api.clientOf(agentB)
    theirMemoryId = unwrap(
      await b.createMemory({ content: 'B keeps a secret about a purple giraffe', category: 'FACT' }),
    ).memory.id
    await b.close()

    // A small graph for each agent, entered by the operator (agent keys cannot write the graph).
    const admin = await api.adminClient()
    for (const id of [agentA, agentB]) unwrap(await admin.createAgent({ id }))
    const entity = async (agentId: string, type: 'PERSON' | 'COMPANY' | 'CONCEPT', name: string) =>
      unwrap(await admin.createGraphEntity({ agentId, type, name })).id
    const dana = await entity(agentA, 'PERSON', 'Dana Kim')
    const acme = await entity(agentA, 'COMPANY', 'Acme Corp')
    const lee = await entity(agentA, 'PERSON', 'Lee Park')
    for (const sourceId of [dana, lee])
      unwrap(
        await admin.createGraphRelationship({
          agentId: agentA,
          sourceId,
          relation: 'works at',
          targetId: acme,
        }),
      )
    theirEntityId = await entity(agentB, 'CONCEPT', 'Purple Giraffe')
    await admin.close()

    mcp = new Client({ name: 'engram-test', version: '1.0.0' })
    if (transport === 'stdio') {
      await mcp.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ['--import', 'tsx', 'src/main.ts', ...(await api.args(agentA))],
          cwd: appDir,
          stderr: 'ignore',
        }),
      )
    } else {
      clientA = await api.clientOf(agentA)
      const server = await listenHttp(clientA, 0)
      stopHttp = server.close
      await mcp.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    }
  })
  afterAll(async () => {
    await mcp?.close()
    await stopHttp?.()
    await clientA?.close()
    await api?.close()
  })

  it('get_profile answers the generated profile, and the context’s profile section before one exists', async () => {
    // First in this block: before anything is remembered no profile can exist. Once a memory is,
    // the server may build one by itself (automatic profile) at any moment, so the read before
    // must come before every test that remembers.
    const before = await call('get_profile', {})
    expect(before.isError).toBe(false)
    expect(before.json).toMatchObject({ generated: false, version: null })
    await call('remember', { text: 'Remember that I prefer oat milk' })
    const own = await api.clientOf(agentA)
    const version = await own.regenerateProfile({})
    await own.close()
    expect(version.ok).toBe(true)
    const after = await call('get_profile', {})
    expect(after.json).toMatchObject({ generated: true })
    // The version asked for, or a newer one the automatic rebuild wrote after it.
    expect(after.json.version).toBeGreaterThanOrEqual(
      version.ok ? version.data.version : Number.POSITIVE_INFINITY,
    )
    expect(after.json.text).toMatch(/oat milk/)
    // The resource reads the same generated text.
    const resource = await mcp.readResource({ uri: 'engram://profile' })
    expect((resource.contents[0] as { text: string }).text).toBe(after.json.text)
    // The key decides the agent: no argument can name another.
    expect((await call('get_profile', { agentId: 'agent-b' })).isError).toBe(true)
  })

  it('lists the thirty-five memory tools with their hints and the catalog’s limits in their schemas', async () => {
    const { tools } = await mcp.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'add_messages',
      'append_working_context',
      'clear_working_context',
      'complete_run',
      'contribute_to_pool',
      'fail_run',
      'flush_working_context',
      'forget',
      'fork_run',
      'formation_activity',
      'get_context',
      'get_profile',
      'graph_neighbourhood',
      'graph_paths',
      'graph_relationships',
      'graph_search',
      'list_memories',
      'list_pools',
      'list_runs',
      'query_pool',
      'recall',
      'recent_memory',
      'record_knowledge',
      'record_selector',
      'record_tool_result',
      'remember',
      'report_run_progress',
      'resume_run',
      'run_context',
      'set_scratchpad',
      'start_run',
      'sync_memory',
      'sync_pool',
      'update_memory',
      'working_context',
    ])
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    expect(byName.query_pool?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(byName.contribute_to_pool?.annotations?.readOnlyHint).toBe(false)
    expect(byName.forget?.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false })
    expect(byName.recall?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(byName.remember?.annotations?.readOnlyHint).toBe(false)
    expect(byName.formation_activity?.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
    })
    const remember = byName.remember?.inputSchema as { properties: Record<string, { maxLength?: number }> }
    expect(remember.properties.text?.maxLength).toBe(CONTRACT_LIMITS.maxMemoryChars)
    expect(remember.properties).not.toHaveProperty('agentId')
    const recall = byName.recall?.inputSchema as {
      properties: Record<string, { maximum?: number }>
      required: string[]
    }
    expect(recall.properties.limit?.maximum).toBe(CONTRACT_LIMITS.maxSearchLimit)
    expect(recall.required).toEqual(['query'])
    expect(byName.graph_neighbourhood?.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
    })
    const around = byName.graph_neighbourhood?.inputSchema as {
      properties: Record<string, { maximum?: number }>
    }
    expect(around.properties.depth?.maximum).toBe(CONTRACT_LIMITS.maxGraphDepth)
    expect(around.properties).not.toHaveProperty('agentId')
    expect(byName.run_context?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false })
    expect(byName.complete_run?.annotations?.readOnlyHint).toBe(false)
    const complete = byName.complete_run?.inputSchema as {
      properties: Record<string, { maxItems?: number }>
      required: string[]
    }
    expect(complete.properties.steps?.maxItems).toBe(CONTRACT_LIMITS.maxStepsPerTrajectory)
    expect(complete.required).toEqual(['runId'])
    expect(complete.properties).not.toHaveProperty('agentId')
  })

  it('pool tools: list, contribute, query and sync the pools this key’s agent belongs to, and no other', async () => {
    const admin = await api.adminClient()
    const pool = unwrap(
      await admin.createPool({
        name: `mcp-docs-${transport}-${mode}`,
        members: [
          { agentId: agentA, role: 'CONTRIBUTOR' },
          { agentId: agentB, role: 'READER' },
        ],
      }),
    )
    const theirs = unwrap(
      await admin.createPool({
        name: `mcp-b-only-${transport}-${mode}`,
        members: [{ agentId: agentB, role: 'CONTRIBUTOR' }],
      }),
    )
    await admin.close()
    const listed = await call('list_pools', {})
    expect(listed.json).toEqual([expect.objectContaining({ id: pool.id, role: 'CONTRIBUTOR', memories: 0 })])
    const shared = await call('contribute_to_pool', {
      poolId: pool.id,
      content: 'WebGPU requires WGSL shaders, not GLSL',
      category: 'FACT',
      source: 'MDN documentation',
    })
    expect(shared.json).toMatchObject({ outcome: 'STORED', duplicateOf: null })
    const found = await call('query_pool', { poolId: pool.id, query: 'how do shaders work in WebGPU?' })
    expect(found.json.hits[0]).toMatchObject({
      content: 'WebGPU requires WGSL shaders, not GLSL',
      contributedBy: agentA,
    })
    // recall takes the catalog's scopes: POOLS searches the member's pools, each hit naming its pool.
    const recalled = await call('recall', { query: 'WebGPU shaders', scopes: ['POOLS'] })
    expect(recalled.json.hits).toEqual([
      expect.objectContaining({
        scope: 'POOLS',
        poolId: pool.id,
        text: 'WebGPU requires WGSL shaders, not GLSL',
      }),
    ])
    expect((await call('sync_pool', { poolId: pool.id })).json).toMatchObject({ stored: 1 })
    expect((await call('sync_pool', { poolId: pool.id })).json).toMatchObject({ stored: 0, alreadyKnown: 1 })
    // Another agent's pool does not exist for this key; no argument names another agent.
    expect((await call('query_pool', { poolId: theirs.id, query: 'anything' })).text).toMatch(/^NOT_FOUND/)
    expect((await call('sync_pool', { poolId: pool.id, agentId: agentB })).isError).toBe(true)
  })

  it('graph tools: search, neighbourhood, relationships and paths of this key’s agent only', async () => {
    const found = await call('graph_search', { name: 'dana' })
    expect(found.json.entities[0]).toMatchObject({ name: 'Dana Kim', type: 'PERSON' })
    const around = await call('graph_neighbourhood', { name: 'Dana Kim' })
    expect(around.json.entities.map((e: { name: string }) => e.name)).toEqual([
      'Dana Kim',
      'Acme Corp',
      'Lee Park',
    ])
    expect(around.json.relationships.map((r: { fact: string }) => r.fact).sort()).toEqual([
      'Dana Kim —works at→ Acme Corp',
      'Lee Park —works at→ Acme Corp',
    ])
    expect(around.json.truncation).toBeNull()
    const works = await call('graph_relationships', { relation: 'Works At' })
    expect(works.json.totalCount).toBe(2)
    const paths = await call('graph_paths', { fromName: 'Dana', toName: 'Lee Park' })
    expect(paths.json.paths.map((p: { chain: string }) => p.chain)).toEqual([
      'Dana Kim —works at→ Acme Corp ←works at— Lee Park',
    ])
    const deep = await call('graph_neighbourhood', { name: 'Dana', depth: 5 })
    expect(deep.text).toMatch(/^VALIDATION: depth: .*\(limit 4\)/)
    // Another agent's graph is out of reach: not found by name, by id, or by naming the agent.
    expect(JSON.stringify((await call('graph_search', { name: 'Purple Giraffe' })).json)).not.toContain(
      'Giraffe',
    )
    expect((await call('graph_neighbourhood', { entityId: theirEntityId })).text).toMatch(/^NOT_FOUND:/)
    expect((await call('graph_search', { name: 'Giraffe', agentId: agentB })).isError).toBe(true)
  })

  it('every tool works: add_messages, remember, recall, get_context, list_memories, update_memory, forget', async () => {
    const added = await call('add_messages', {
      conversationId: 'trip',
      messages: [
        { role: 'USER', content: 'I am flying to Lisbon on Friday.', speaker: 'Ana' },
        { role: 'ASSISTANT', content: 'Have a good flight to Lisbon!' },
      ],
    })
    expect(added.isError).toBe(false)
    expect(added.json).toMatchObject({ conversationId: 'trip', messageCount: 2 })

    const remembered = await call('remember', { text: 'Remember that I am allergic to peanuts' })
    expect(remembered.json.outcome).toBe('STORED')
    const memoryId = remembered.json.memory.id as string

    const recalled = await call('recall', { query: 'Where am I flying?', scopes: ['MESSAGES'] })
    expect(recalled.json.hits[0]).toMatchObject({ scope: 'MESSAGES', speaker: 'Ana' })
    expect(recalled.json.hits[0].text).toContain('Lisbon')
    const allergy = await call('recall', { query: 'allergies', scopes: ['MEMORIES'] })
    expect(allergy.json.hits[0]).toMatchObject({ id: memoryId, scope: 'MEMORIES' })

    const context = await call('get_context', {
      query: 'what food am I allergic to?',
      conversationId: 'trip',
    })
    expect(context.json.text).toContain('peanuts')
    expect(context.json.totalTokens).toBeLessThanOrEqual(context.json.budgetTokens)
    expect(context.json).not.toHaveProperty('built')
    // Spec 002's whole prompt (issue 17): instructions, memories and turns, the input last.
    const built = await call('get_context', {
      query: 'what food am I allergic to?',
      buildContext: { instructions: 'You are a travel assistant.', toolCount: 3, contextWindow: 16_000 },
    })
    expect(built.json.built.budget).toMatchObject({ total: 16_000, system: 800, tools: 1_500, output: 1_600 })
    expect(built.json.built.messages[0]).toEqual({
      role: 'SYSTEM',
      content: 'You are a travel assistant.',
      kind: 'INSTRUCTIONS',
    })
    expect(built.json.built.messages.at(-1)).toEqual({
      role: 'USER',
      content: 'what food am I allergic to?',
      kind: 'INPUT',
    })
    expect(built.json.built.messages).toContainEqual(
      expect.objectContaining({
        kind: 'MEMORY',
        content: expect.stringContaining('peanuts'),
        sourceId: `memory:${memoryId}`,
      }),
    )
    const tooMany = await call('get_context', { query: 'q', buildContext: { toolCount: 1_001 } })
    expect(tooMany.isError).toBe(true)
    expect(tooMany.text).toContain('buildContext.toolCount')

    const updated = await call('update_memory', { id: memoryId, importance: 1, pinned: true })
    expect(updated.json).toMatchObject({ id: memoryId, importance: 1, pinned: true })
    const listed = await call('list_memories', { filter: { pinned: true } })
    expect(listed.json.memories.map((m: { id: string }) => m.id)).toEqual([memoryId])

    const forgotten = await call('forget', { id: memoryId })
    expect(forgotten.json.id).toBe(memoryId)
    const after = await call('list_memories', {})
    expect(after.json.memories.map((m: { id: string }) => m.id)).not.toContain(memoryId)
  })

  it('working context tools: append, tool result, scratchpad, read, recent memory, flush, clear; this key’s agent only', async () => {
    const appended = await call('append_working_context', {
      conversationId: 'task',
      messages: [{ role: 'USER', content: 'Book the cheapest flight to Oslo' }],
    })
    expect(appended.json).toMatchObject({ held: 1, flushThresholdTokens: 32_000, flushed: null })
    await call('record_tool_result', {
      toolCallId: 'call-7',
      name: 'search_flights',
      content: 'SK 4410, 89 EUR',
    })
    await call('set_scratchpad', { scratchpad: 'compare with the train' })
    const read = await call('working_context', {})
    expect(read.json).toMatchObject({
      messages: [{ role: 'USER', content: 'Book the cheapest flight to Oslo' }],
      toolResults: [{ toolCallId: 'call-7', name: 'search_flights', isError: false }],
      scratchpad: 'compare with the train',
    })
    const recent = await call('recent_memory', { conversationId: 'task', limit: 5 })
    expect(recent.json.map((i: { source: string }) => i.source)).toEqual([
      'WORKING_CONTEXT',
      'WORKING_CONTEXT',
    ])
    const flushed = await call('flush_working_context', {})
    expect(flushed.json.flushed).toMatchObject({ reason: 'REQUEST', messages: 2, conversationIds: ['task'] })
    const stored = await call('recent_memory', { conversationId: 'task' })
    expect(stored.json.map((i: { source: string; role: string }) => [i.source, i.role])).toEqual([
      ['DATABASE', 'TOOL'],
      ['DATABASE', 'USER'],
    ])
    expect((await call('clear_working_context', {})).json).toMatchObject({ messages: [], scratchpad: '' })
    expect((await call('working_context', { agentId: agentB })).isError).toBe(true)
    const tooLong = await call('set_scratchpad', {
      scratchpad: 'x'.repeat(CONTRACT_LIMITS.maxScratchpadChars + 1),
    })
    expect(tooLong.isError).toBe(true)
    expect(tooLong.text).toContain('scratchpad')
  })

  it('sync_memory forms memories from recorded turns now, for this key’s agent', async () => {
    await call('add_messages', {
      conversationId: 'family',
      messages: [{ role: 'USER', content: 'Remember that my daughter is called Ella.' }],
    })
    const synced = await call('sync_memory', {})
    expect(synced.isError).toBe(false)
    expect(synced.json.formed.map((m: { content: string }) => m.content).join(' | ')).toMatch(/Ella/)
    const listed = await call('list_memories', { filter: { search: 'Ella' } })
    expect(listed.json.memories.length).toBeGreaterThan(0)
    // The sync counted as extraction work of this key's agent; no argument reaches another agent.
    const activity = await call('formation_activity', {})
    expect(activity.isError).toBe(false)
    expect(activity.json).toMatchObject({ extractor: 'OFFLINE', circuitState: null })
    const extraction = activity.json.work.find((w: { kind: string }) => w.kind === 'EXTRACTION')
    expect(extraction.calls).toBeGreaterThanOrEqual(1)
    expect(Object.keys(activity.json.queued)).toEqual(['EXTRACTION', 'SUMMARY', 'PROFILE'])
    expect((await call('formation_activity', { agentId: 'agent-b' })).isError).toBe(true)
  })

  it('run tools: start, context, progress, knowledge, selectors, complete; the next run gets them; orchestrators list, resume, fork', async () => {
    const domain = `app-${transport}-${mode}.example.com`
    const started = await call('start_run', {
      goal: 'Create a todo list called Groceries',
      startUrl: `https://${domain}/`,
      sessionId: 'proj-1',
    })
    expect(started.isError, started.text).toBe(false)
    expect(started.json).toMatchObject({ status: 'RUNNING', domain, sessionId: 'proj-1', memory: 'default' })
    const runId = started.json.runId as string
    const cold = await call('run_context', { runId })
    expect(cold.json.reference).toBeNull()
    const progress = await call('report_run_progress', {
      runId,
      currentUrl: `https://${domain}/lists`,
      turnCount: 3,
      summary: 'Opening the lists page',
    })
    expect(progress.json).toMatchObject({ url: `https://${domain}/lists`, turnCount: 3 })
    const knowledge = await call('record_knowledge', {
      domain,
      runId,
      facts: [{ type: 'TIMING', key: 'save-delay', value: 'saving takes 2 s' }],
    })
    expect(knowledge.json.facts).toEqual([
      { type: 'TIMING', key: 'save-delay', value: 'saving takes 2 s', confidence: 0.6 },
    ])
    const selector = await call('record_selector', {
      domain,
      runId,
      selectors: [{ element: 'button "New list"', selector: '[data-testid=new-list]' }],
    })
    expect(selector.json.selectors[0]).toMatchObject({ successes: 1, knownGood: true })
    const completed = await call('complete_run', {
      runId,
      outcome: 'Created the Groceries list',
      finalUrl: `https://${domain}/lists/groceries`,
      steps: [
        { action: 'click', selector: '[data-testid=new-list]', verified: true },
        { action: 'type', selector: 'input[name=title]', value: 'Groceries', verified: true },
      ],
    })
    expect(completed.json).toMatchObject({ trajectoryKept: true, sessionRecorded: true })
    expect(completed.json.run.status).toBe('COMPLETED')

    // The next run on the domain with a similar goal gets all of it.
    const next = await call('start_run', { goal: 'Create a todo list called Chores', domain })
    const warm = await call('run_context', { runId: next.json.runId })
    expect(warm.json.reference).toMatchObject({ goal: 'Create a todo list called Groceries', steps: 2 })
    expect(warm.json.text).toContain('saving takes 2 s')
    expect(warm.json.text).toContain('[data-testid=new-list]')
    expect(warm.json.text).toContain('Created the Groceries list')
    const failed = await call('fail_run', { runId: next.json.runId, reason: 'the page would not load' })
    expect(failed.json.run).toMatchObject({ status: 'FAILED', success: false })

    const resumed = await call('resume_run', { runId, goal: 'Add milk to Groceries' })
    expect(resumed.json).toMatchObject({
      kind: 'RESUME',
      parentRunId: runId,
      sessionId: 'proj-1',
      url: `https://${domain}/lists/groceries`,
    })
    const forked = await call('fork_run', { runId, goal: 'Create a list called Chores instead' })
    expect(forked.json).toMatchObject({ kind: 'FORK', parentRunId: runId })
    expect(forked.json.sessionId).not.toBe('proj-1')
    const listed = await call('list_runs', { domain, status: 'RUNNING' })
    expect(listed.json.runs.map((r: { runId: string }) => r.runId).sort()).toEqual(
      [resumed.json.runId, forked.json.runId].sort(),
    )

    // Typed errors naming the field and the limit; another agent's run is out of reach.
    const tooMany = await call('complete_run', {
      runId: resumed.json.runId,
      steps: Array.from({ length: CONTRACT_LIMITS.maxStepsPerTrajectory + 1 }, () => ({ action: 'click' })),
    })
    expect(tooMany.text).toMatch(
      new RegExp(`^VALIDATION: steps: .*\\(limit ${CONTRACT_LIMITS.maxStepsPerTrajectory}\\)`),
    )
    expect((await call('start_run', { goal: ' ', domain })).text).toMatch(/^VALIDATION: goal:/)
    expect((await call('resume_run', { runId: 'has spaces' })).text).toMatch(/^VALIDATION: runId:/)
    expect((await call('start_run', { runId, goal: 'again', domain })).text).toMatch(/^CONFLICT:/)
    const b = await api.clientOf(agentB)
    const theirs = unwrap(await b.startRun({ goal: 'B’s secret errand', domain }))
    await b.close()
    expect((await call('resume_run', { runId: theirs.id })).text).toMatch(/^NOT_FOUND:/)
    expect((await call('report_run_progress', { runId: theirs.id, turnCount: 9 })).text).toMatch(
      /^NOT_FOUND:/,
    )
    expect(JSON.stringify((await call('list_runs', { domain })).json)).not.toContain('secret errand')
    expect((await call('list_runs', { agentId: agentB })).isError).toBe(true)
  })

  it('answers bad input with a typed tool error naming the field and the limit, and keeps serving', async () => {
    const tooLong = await call('remember', { text: 'x'.repeat(CONTRACT_LIMITS.maxMemoryChars + 1) })
    expect(tooLong.isError).toBe(true)
    expect(tooLong.text).toMatch(
      new RegExp(`^VALIDATION: text: .*\\(limit ${CONTRACT_LIMITS.maxMemoryChars}\\)`),
    )
    const missing = await call('recall', {})
    expect(missing.text).toMatch(/^VALIDATION: query:/)
    const badEnum = await call('recall', { query: 'q', scopes: ['EVERYTHING'] })
    expect(badEnum.text).toMatch(/^VALIDATION: scopes\.0:/)
    const batch = await call('add_messages', {
      conversationId: 'c',
      messages: Array.from({ length: CONTRACT_LIMITS.maxBatchMessages + 1 }, () => ({
        role: 'USER',
        content: 'x',
      })),
    })
    expect(batch.text).toMatch(
      new RegExp(`^VALIDATION: messages: .*\\(limit ${CONTRACT_LIMITS.maxBatchMessages}\\)`),
    )
    const unknown = await call('teleport', {})
    expect(unknown).toMatchObject({ isError: true })
    expect(unknown.text).toMatch(/^NOT_FOUND: no tool named teleport/)
    const gone = await call('forget', { id: '99999999' })
    expect(gone.text).toMatch(/^NOT_FOUND:/)
    // Still serving.
    expect((await call('list_memories', {})).isError).toBe(false)
  })

  it('scoping: the key’s agent only — another agent’s memory cannot be read, changed, deleted or named', async () => {
    const recalled = await call('recall', {
      query: 'purple giraffe secret',
      scopes: ['MEMORIES', 'MESSAGES'],
    })
    expect(JSON.stringify(recalled.json)).not.toContain('giraffe')
    const listed = await call('list_memories', { first: 200, filter: { includeSuperseded: true } })
    expect(JSON.stringify(listed.json)).not.toContain('giraffe')
    const context = await call('get_context', { query: 'purple giraffe' })
    expect(context.json.text).not.toContain('giraffe')
    expect((await call('update_memory', { id: theirMemoryId, content: 'hijacked' })).text).toMatch(
      /^NOT_FOUND:/,
    )
    expect((await call('forget', { id: theirMemoryId })).text).toMatch(/^NOT_FOUND:/)
    const named = await call('recall', { query: 'giraffe', agentId: agentB })
    expect(named.isError).toBe(true)
    expect(named.text).toMatch(/^VALIDATION: .*agentId/)
  })

  it('serves the profile and the recent memories as resources', async () => {
    await call('remember', { text: 'Remember that my name is Ana' })
    const { resources } = await mcp.listResources()
    expect(resources.map((r) => r.uri).sort()).toEqual(['engram://memories/recent', 'engram://profile'])
    const recent = await mcp.readResource({ uri: 'engram://memories/recent' })
    const memories = JSON.parse((recent.contents[0] as { text: string }).text) as { content: string }[]
    expect(memories[0]?.content).toContain('Ana')
    const profile = await mcp.readResource({ uri: 'engram://profile' })
    expect(profile.contents[0]).toMatchObject({ uri: 'engram://profile', mimeType: 'text/plain' })
    await expect(mcp.readResource({ uri: 'engram://nothing' })).rejects.toThrow(/no resource/)
  })
})
