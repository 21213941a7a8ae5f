import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { catalog } from '@engram/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Engram } from '../src/embedded/index.ts'
import { clientContract } from './client-contract.ts'

function tempFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-embedded-'))
  return { dir, file: path.join(dir, 'memory.db') }
}

clientContract('embedded (engine in-process on one SQLite file)', async () => {
  const { dir, file } = tempFile()
  const operator = await Engram.open({ path: file, operator: true, optimizerIntervalMs: 0 })
  return {
    async clients() {
      return {
        agentA: operator.forAgent('contract-a'),
        agentB: operator.forAgent('contract-b'),
        admin: operator,
        agentAId: 'contract-a',
      }
    },
    async close() {
      await operator.close()
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
})

describe('embedded client', () => {
  const { dir, file } = tempFile()
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
  let engram: Awaited<ReturnType<typeof Engram.open>>
  beforeAll(async () => {
    engram = await Engram.open({ path: file, optimizerIntervalMs: 0 })
  })

  it('acts for the default agent unless named; answers in the catalog’s output shapes', async () => {
    expect(engram.agentId).toBe('default')
    const added = await engram.addMessages({
      conversationId: 'c1',
      messages: [{ role: 'USER', content: 'Lena moved to Berlin last spring.' }],
    })
    expect(added.ok).toBe(true)
    if (added.ok) {
      expect(catalog.addMessages.output.safeParse(added.data).success).toBe(true)
      // Plain objects, as JSON.parse gives the remote client.
      expect(Object.getPrototypeOf(added.data.session)).toBe(Object.prototype)
      expect(added.data.session.agentId).toBe('default')
    }
    const found = await engram.search({ query: 'Where does Lena live?', scopes: ['MESSAGES'] })
    expect(found.ok && catalog.search.output.safeParse(found.data).success).toBe(true)
    expect(found.ok && found.data.hits[0]?.message?.content).toContain('Berlin')
    const agents = await engram.agents()
    expect(agents.ok && agents.data.map((a) => a.id)).toEqual(['default'])
  })

  it('a file reopened keeps its memory (durable writes); a closed client answers UNAVAILABLE', async () => {
    await engram.close()
    const closed = await engram.agents()
    expect(!closed.ok && closed.error.code).toBe('UNAVAILABLE')
    engram = await Engram.open({ path: file, optimizerIntervalMs: 0 })
    const session = await engram.session({ conversationId: 'c1' })
    expect(session.ok && session.data?.messageCount).toBe(1)
    await engram.close()
  })

  it('builds spec 002’s prompt with the context builder rules it was opened with', async () => {
    const opened = await Engram.open({
      path: file,
      optimizerIntervalMs: 0,
      contextBuilder: { contextWindow: 64_000, tokensPerTool: 100 },
    })
    const built = await opened.memoryContext({ query: 'Where do I live?', buildContext: { toolCount: 3 } })
    expect(built.ok && built.data.built?.budget).toMatchObject({ total: 64_000, tools: 300 })
    await opened.close()
    // Rules out of range stop the opening, naming the rule.
    await expect(
      Engram.open({ path: file, optimizerIntervalMs: 0, contextBuilder: { memoryShare: 2 } }),
    ).rejects.toThrow(/contextBuilder\.memoryShare/)
  })

  it('refuses an agent id that is not a slug before opening anything', async () => {
    await expect(Engram.open({ path: file, agentId: 'Not A Slug' })).rejects.toThrow(/slug/)
  })
})
