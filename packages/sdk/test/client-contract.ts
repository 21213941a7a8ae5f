import { CONTRACT_LIMITS, type EngramClient, type Result, unwrap } from '@engram/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * What a client of Engram must do, whichever implementation: the remote client over a real
 * server now, the embedded client (engine in-process) when it lands, each through its own setup.
 * A setup hands out clients for two agents (A and B, fresh ones) and an operator's client.
 */
export interface ClientContractSetup {
  /** A client acting for agent A, one for agent B, and one with an admin key. */
  clients(): Promise<{ agentA: EngramClient; agentB: EngramClient; admin: EngramClient; agentAId: string }>
  close(): Promise<void>
}

function expectFailure<T>(result: Result<T>, code: string) {
  expect(result.ok, JSON.stringify(result)).toBe(false)
  if (result.ok) throw new Error('expected a failure')
  expect(result.error.code).toBe(code)
  return result.error
}

export function clientContract(name: string, setup: () => Promise<ClientContractSetup>) {
  describe(`client contract: ${name}`, () => {
    let context: ClientContractSetup
    let agentA: EngramClient
    let agentB: EngramClient
    let admin: EngramClient
    let agentAId: string

    beforeAll(async () => {
      context = await setup()
      ;({ agentA, agentB, admin, agentAId } = await context.clients())
    })
    afterAll(async () => {
      await Promise.all([agentA?.close(), agentB?.close(), admin?.close()])
      await context?.close()
    })

    it('remember → search → memory context: what was remembered is found and assembled', async () => {
      const write = unwrap(await agentA.rememberThis({ text: 'Remember that I prefer tabs over spaces' }))
      expect(write.outcome).toBe('STORED')
      expect(write.memory.content.toLowerCase()).toContain('tabs')

      const search = unwrap(await agentA.search({ query: 'tabs or spaces?', scopes: ['MEMORIES'] }))
      expect(search.hits[0]?.memory?.id).toBe(write.memory.id)
      expect(search.hits[0]?.scope).toBe('MEMORIES')

      const context = unwrap(await agentA.memoryContext({ query: 'how should I indent code?' }))
      expect(context.text).toContain('tabs')
      expect(context.totalTokens).toBeLessThanOrEqual(context.budgetTokens)
    })

    it('memory context with buildContext: spec 002’s whole prompt (issue 17)', async () => {
      unwrap(await agentA.rememberThis({ text: 'Remember that my editor is Helix' }))
      const context = unwrap(
        await agentA.memoryContext({
          query: 'which editor do I use?',
          buildContext: { instructions: 'You are a coding assistant.', toolCount: 2, contextWindow: 32_000 },
        }),
      )
      const built = context.built
      expect(built?.budget).toMatchObject({ total: 32_000, system: 1_600, tools: 1_000, output: 3_200 })
      expect(built?.messages[0]).toMatchObject({ role: 'SYSTEM', kind: 'INSTRUCTIONS' })
      expect(built?.messages.at(-1)).toMatchObject({
        role: 'USER',
        kind: 'INPUT',
        content: 'which editor do I use?',
      })
      expect(built?.messages.some((m) => m.kind === 'MEMORY' && m.content.includes('Helix'))).toBe(true)
      expect(unwrap(await agentA.memoryContext({ query: 'editor' })).built ?? null).toBeNull()
      // B's prompt never holds A's memory.
      const theirs = unwrap(await agentB.memoryContext({ query: 'which editor do I use?', buildContext: {} }))
      expect(JSON.stringify(theirs.built)).not.toContain('Helix')
      const refused = expectFailure(
        await agentA.memoryContext({
          query: 'q',
          buildContext: { toolCount: CONTRACT_LIMITS.maxBuildToolCount + 1 },
        }),
        'VALIDATION',
      )
      expect(refused.issues?.[0]).toMatchObject({
        field: 'buildContext.toolCount',
        limit: CONTRACT_LIMITS.maxBuildToolCount,
      })
    })

    it('memory formation: a turn asking to be remembered forms a memory on sync; classify routes it', async () => {
      unwrap(
        await agentA.addMessage({
          conversationId: 'formation',
          role: 'USER',
          content: 'My name is John. Remember that I am allergic to peanuts.',
        }),
      )
      const formed = unwrap(await agentA.syncMemory({}))
      const peanuts = formed.stored.find((m) => /peanuts/i.test(m.content))
      expect(peanuts, JSON.stringify(formed)).toMatchObject({
        sourceConversationId: 'formation',
        importance: 0.8,
      })
      expect(formed.extractors).toContain('OFFLINE')
      // B's sync forms nothing of A's turns.
      const other = unwrap(await agentB.syncMemory({}))
      expect(other.stored.some((m) => /peanuts/i.test(m.content))).toBe(false)
      const routed = unwrap(await agentA.classify({ content: 'Remember that I am allergic to peanuts.' }))
      expect(routed).toMatchObject({ tier: 'SEMANTIC' })
      expect(routed.importance).toBeGreaterThanOrEqual(0.8)
      expectFailure(await agentA.classify({ content: '' }), 'VALIDATION')
    })

    it('memory formation settings: one object, changed in part, validated whole, per agent', async () => {
      const defaults = unwrap(await agentA.memoryFormationSettings({}))
      expect(defaults).toMatchObject({
        enabled: true,
        summaries: { strategy: 'EXTRACTIVE', summaryDebounceSeconds: 60, summaryRetentionDays: 7 },
        profile: { profileRegenerateThreshold: 10, profileMaxTokens: 2_000 },
      })
      const changed = unwrap(
        await agentA.updateMemoryFormationSettings({
          settings: { summaries: { strategy: 'MAP_REDUCE', summaryRetentionDays: 14 } },
        }),
      )
      expect(changed.summaries).toMatchObject({ strategy: 'MAP_REDUCE', summaryRetentionDays: 14 })
      expect(unwrap(await agentA.memoryFormationSettings({}))).toEqual(changed)
      expect(unwrap(await agentB.memoryFormationSettings({})).summaries.strategy).toBe('EXTRACTIVE')
      const bad = expectFailure(
        await agentA.updateMemoryFormationSettings({
          settings: { enabled: false, summaries: { summaryDebounceSeconds: 3_601 } },
        }),
        'VALIDATION',
      )
      expect(bad.issues?.map((i) => [i.field, String(i.limit)])).toEqual([
        ['settings.summaries.summaryDebounceSeconds', '3600'],
      ])
      expect(unwrap(await agentA.memoryFormationSettings({}))).toEqual(changed)
      expectFailure(await agentA.memoryFormationSettings({ agentId: 'agent-b' }), 'FORBIDDEN')
    })

    it('summaries: summarize now with a strategy, list them, each agent its own', async () => {
      unwrap(
        await agentA.addMessages({
          conversationId: 'summarised',
          messages: [
            { role: 'USER', content: 'We agreed that the budget for the trip is 2,000 euros.' },
            { role: 'ASSISTANT', content: 'Noted: 2,000 euros for the trip.' },
          ],
        }),
      )
      const made = unwrap(await agentA.summarize({ conversationId: 'summarised', strategy: 'HIERARCHICAL' }))
      expect(made.summary).toMatchObject({
        conversationId: 'summarised',
        strategy: 'HIERARCHICAL',
        trigger: 'REQUEST',
        messageCount: 2,
      })
      expect(made.summary?.content).toMatch(/2,000 euros/)
      expect(unwrap(await agentA.summarize({ conversationId: 'summarised' })).summary).toBeNull()
      const listed = unwrap(await agentA.summaries({ conversationId: 'summarised' }))
      expect(listed.map((s) => s.id)).toEqual([made.summary?.id])
      expect(unwrap(await agentB.summaries({ conversationId: 'summarised' }))).toEqual([])
      const bad = expectFailure(await agentA.summaries({ limit: 0 }), 'VALIDATION')
      expect(bad.issues?.map((i) => [i.field, String(i.limit)])).toEqual([['limit', '1']])
      // One by id: the same summary for A; B's id lookup of it is NOT_FOUND.
      const id = made.summary?.id ?? ''
      expect(unwrap(await agentA.summary({ id }))).toEqual(made.summary)
      expectFailure(await agentB.summary({ id }), 'NOT_FOUND')
      expectFailure(await agentA.summary({ agentId: 'agent-b', id }), 'FORBIDDEN')
    })

    it('formation activity: counters of the agent’s own work, its extractor and settings', async () => {
      unwrap(
        await agentA.addMessage({
          conversationId: 'activity',
          role: 'USER',
          content: 'Remember that my locker code is on the blue card.',
        }),
      )
      const events = agentA.formationActivityEvents()
      const next = events.next()
      // A subscription registers a moment after it is asked for: sync until one arrives.
      const received = await Promise.race([
        next,
        (async () => {
          for (let attempt = 0; attempt < 50; attempt++) {
            await agentA.syncMemory({})
            await agentA.addMessage({
              conversationId: 'activity',
              role: 'USER',
              content: `I prefer tea ${attempt}`,
            })
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
          return null
        })(),
      ])
      expect(received && !received.done && received.value.ok && received.value.data).toMatchObject({
        agentId: agentAId,
        outcome: 'SUCCESS',
      })
      await events.close()
      const activity = unwrap(await agentA.formationActivity({}))
      expect(activity).toMatchObject({ agentId: agentAId, extractor: 'OFFLINE', circuitState: null })
      const extraction = activity.work.find((w) => w.kind === 'EXTRACTION')
      expect(extraction?.calls).toBeGreaterThanOrEqual(1)
      expectFailure(await agentA.formationActivity({ agentId: 'agent-b' }), 'FORBIDDEN')
      // No model here: the extractor setting refuses LLM, naming the field; a model name is kept.
      const refused = expectFailure(
        await agentA.updateMemoryFormationSettings({ settings: { extraction: { extractor: 'LLM' } } }),
        'VALIDATION',
      )
      expect(refused.issues?.map((i) => i.field)).toEqual(['settings.extraction.extractor'])
      const named = unwrap(
        await agentA.updateMemoryFormationSettings({ settings: { extraction: { model: 'qwen2.5:7b' } } }),
      )
      expect(named.extraction).toEqual({ extractor: 'OFFLINE', model: 'qwen2.5:7b' })
    })

    it('the user profile: null until generated, versions kept and diffed, each agent its own', async () => {
      expect(unwrap(await agentA.userProfile({ userId: 'omar' }))).toEqual({ current: null })
      unwrap(
        await agentA.createMemory({
          content: 'Omar prefers aisle seats',
          category: 'PREFERENCE',
          userId: 'omar',
        }),
      )
      const first = unwrap(await agentA.regenerateProfile({ userId: 'omar' }))
      expect(first).toMatchObject({ version: 1, userId: 'omar', trigger: 'REQUEST' })
      expect(first.content).toMatch(/aisle seats/)
      unwrap(
        await agentA.createMemory({
          content: 'Omar is learning the cello',
          category: 'SKILL',
          userId: 'omar',
        }),
      )
      const second = unwrap(await agentA.regenerateProfile({ userId: 'omar' }))
      expect(unwrap(await agentA.userProfile({ userId: 'omar' })).current).toEqual(second)
      const page = unwrap(await agentA.profileVersions({ userId: 'omar' }))
      expect(page.totalCount).toBe(2)
      expect(page.versions.map((v) => v.version)).toEqual([2, 1])
      const diff = unwrap(await agentA.profileDiff({ userId: 'omar', from: 1, to: 2 }))
      expect(diff.added.join(' ')).toMatch(/cello/)
      expect(unwrap(await agentB.userProfile({ userId: 'omar' })).current).toBeNull()
      expectFailure(await agentB.profileDiff({ userId: 'omar', from: 1, to: 2 }), 'NOT_FOUND')
      expectFailure(await agentA.regenerateProfile({ agentId: 'agent-b' }), 'FORBIDDEN')
      const bad = expectFailure(await agentA.profileVersions({ limit: 101 }), 'VALIDATION')
      expect(bad.issues?.map((i) => [i.field, String(i.limit)])).toEqual([['limit', '100']])
    })

    it('conversations: a batch, its session, its context window within budget', async () => {
      const batch = unwrap(
        await agentA.addMessages({
          conversationId: 'contract-c1',
          messages: [
            { role: 'USER', content: 'My sister Lena lives in Berlin.', speaker: 'Sam' },
            { role: 'ASSISTANT', content: 'Noted: Lena lives in Berlin.' },
          ],
        }),
      )
      expect(batch.session.messageCount).toBe(2)
      expect(batch.messages.map((m) => m.speaker)).toEqual(['Sam', null])
      const one = unwrap(
        await agentA.addMessage({
          conversationId: 'contract-c1',
          role: 'USER',
          content: 'And I live in Paris.',
        }),
      )
      expect(one.role).toBe('USER')

      const session = unwrap(await agentA.session({ conversationId: 'contract-c1' }))
      expect(session?.messageCount).toBe(3)
      const sessions = unwrap(await agentA.sessions({ first: 10 }))
      expect(sessions.sessions.map((s) => s.conversationId)).toContain('contract-c1')

      const window = unwrap(await agentA.contextWindow({ conversationId: 'contract-c1' }))
      expect(window.full.map((m) => m.content)).toEqual([
        'My sister Lena lives in Berlin.',
        'Noted: Lena lives in Berlin.',
        'And I live in Paris.',
      ])
      expect(window.totalTokens).toBeLessThanOrEqual(window.availableBudget)

      const hits = unwrap(await agentA.search({ query: 'Where does Lena live?', scopes: ['MESSAGES'] }))
      expect(hits.hits[0]?.message?.content).toContain('Lena')

      const deleted = unwrap(await agentA.deleteSession({ conversationId: 'contract-c1' }))
      expect(deleted.deleted).toBe(true)
      expect(unwrap(await agentA.session({ conversationId: 'contract-c1' }))).toBeNull()
    })

    it('the working context: append, tool result, scratchpad, recent memory, flush into the conversation, clear', async () => {
      const appended = unwrap(
        await agentA.appendWorkingContext({
          messages: [{ role: 'USER', content: 'Find me a flight to Rome' }],
          conversationId: 'contract-wc',
        }),
      )
      expect(appended.flush).toBeNull()
      expect(appended.context.messages.map((m) => [m.role, m.content])).toEqual([
        ['USER', 'Find me a flight to Rome'],
      ])
      unwrap(
        await agentA.recordToolResult({ toolCallId: 'call-1', name: 'search_flights', content: 'AZ 123' }),
      )
      const padded = unwrap(await agentA.setWorkingScratchpad({ scratchpad: 'then a hotel' }))
      expect(padded).toMatchObject({ scratchpad: 'then a hotel', flushThresholdTokens: 32_000 })
      expect(padded.tokenCount).toBeGreaterThan(0)
      expect(unwrap(await agentB.workingContext({})).messages).toEqual([])
      const recent = unwrap(await agentA.recentMemory({ conversationId: 'contract-wc', limit: 5 }))
      expect(recent.map((i) => [i.source, i.role, i.content])).toEqual([
        ['WORKING_CONTEXT', 'TOOL', 'AZ 123'],
        ['WORKING_CONTEXT', 'USER', 'Find me a flight to Rome'],
      ])
      const flushed = unwrap(await agentA.flushWorkingContext({}))
      expect(flushed.flush).toMatchObject({ reason: 'REQUEST', messages: 2, toolResults: 1 })
      expect(unwrap(await agentA.session({ conversationId: 'contract-wc' }))?.messageCount).toBe(2)
      expect(
        unwrap(await agentA.recentMemory({ conversationId: 'contract-wc' })).map((i) => i.source),
      ).toEqual(['DATABASE', 'DATABASE'])
      const cleared = unwrap(await agentA.clearWorkingContext({}))
      expect(cleared).toMatchObject({ messages: [], scratchpad: '' })
      const tooLong = await agentA.setWorkingScratchpad({
        scratchpad: 'x'.repeat(CONTRACT_LIMITS.maxScratchpadChars + 1),
      })
      expect(expectFailure(tooLong, 'VALIDATION').issues?.[0]).toMatchObject({ field: 'scratchpad' })
    })

    it('memories: create, read, update, list, delete; the profile section', async () => {
      const created = unwrap(
        await agentA.createMemory({ content: 'Works as a nurse in Lyon', category: 'FACT', tags: ['work'] }),
      )
      const id = created.memory.id
      expect(unwrap(await agentA.memory({ id })).content).toBe('Works as a nurse in Lyon')
      const updated = unwrap(await agentA.updateMemory({ id, importance: 0.9, tags: ['work', 'city'] }))
      expect(updated.importance).toBe(0.9)
      expect(updated.tags).toEqual(['work', 'city'])
      const page = unwrap(await agentA.memories({ filter: { tags: ['city'] } }))
      expect(page.memories.map((m) => m.id)).toEqual([id])
      expect(page.totalCount).toBe(1)

      const profile = unwrap(await agentA.profile())
      expect(profile.sections.map((s) => s.section)).toEqual(['PROFILE'])

      unwrap(await agentA.deleteMemory({ id }))
      expectFailure(await agentA.memory({ id }), 'NOT_FOUND')
    })

    it('knowledge: store, list, relevant, use, delete', async () => {
      const fact = unwrap(
        await agentA.storeKnowledge({
          category: 'WEBSITE_KNOWLEDGE',
          key: 'example.com login',
          value: '#email and #password',
        }),
      )
      expect(fact.confidence).toBe(0.5)
      const again = unwrap(
        await agentA.storeKnowledge({
          category: 'WEBSITE_KNOWLEDGE',
          key: 'example.com login',
          value: '#email and #password',
        }),
      )
      expect(again.id).toBe(fact.id)
      expect(again.confidence).toBeCloseTo(0.6)
      expect(unwrap(await agentA.knowledge({})).knowledge.map((k) => k.id)).toContain(fact.id)
      const relevant = unwrap(await agentA.relevantKnowledge({ text: 'log in to example.com' }))
      expect(relevant.matches[0]?.knowledge.id).toBe(fact.id)
      expect(unwrap(await agentA.recordKnowledgeUse({ id: fact.id })).useCount).toBe(1)
      unwrap(await agentA.deleteKnowledge({ id: fact.id }))
    })

    it('knowledge graph: an operator corrects it, the agent reads it as of a time, others see none', async () => {
      const agentId = agentAId
      const dana = unwrap(
        await admin.createGraphEntity({ agentId, type: 'PERSON', name: 'Dana Kim', aliases: ['Dana'] }),
      )
      const acme = unwrap(await admin.createGraphEntity({ agentId, type: 'COMPANY', name: 'Acme Corp' }))
      const globex = unwrap(await admin.createGraphEntity({ agentId, type: 'COMPANY', name: 'Globex' }))
      const first = unwrap(
        await admin.createGraphRelationship({
          agentId,
          sourceId: dana.id,
          relation: 'works at',
          targetId: acme.id,
          validFrom: '2020-01-01T00:00:00.000Z',
        }),
      )
      expect(first).toMatchObject({
        current: true,
        source: { id: dana.id, name: 'Dana Kim', type: 'PERSON' },
      })
      const second = unwrap(
        await admin.createGraphRelationship({
          agentId,
          sourceId: dana.id,
          relation: 'Works At',
          targetId: globex.id,
          validFrom: '2024-01-01T00:00:00.000Z',
        }),
      )
      // The contradicted edge is ended, not overwritten: "as of" 2022 still answers Acme.
      const ended = unwrap(await agentA.graphRelationship({ id: first.id }))
      expect(ended).toMatchObject({
        current: false,
        validUntil: '2024-01-01T00:00:00.000Z',
        supersededById: second.id,
      })
      const now = unwrap(await agentA.graphRelationships({ name: 'dana', relation: 'works at' }))
      expect(now.relationships.map((r) => r.target.name)).toEqual(['Globex'])
      const then = unwrap(
        await agentA.graphRelationships({
          name: 'dana',
          relation: 'works at',
          asOf: '2022-06-01T00:00:00.000Z',
        }),
      )
      expect(then.relationships.map((r) => r.target.name)).toEqual(['Acme Corp'])

      const found = unwrap(await agentA.graphEntities({ name: 'Dana' }))
      expect(found.matches[0]).toMatchObject({ entity: { id: dana.id }, score: 1 })
      const around = unwrap(await agentA.graphNeighbourhood({ entityId: dana.id }))
      expect(around.nodes.map((n) => [n.entity.name, n.depth])).toEqual([
        ['Dana Kim', 0],
        ['Globex', 1],
      ])
      expect(around.truncated).toBe(false)
      const paths = unwrap(await agentA.graphPaths({ fromName: 'Globex', toId: dana.id }))
      expect(paths.paths.map((p) => p.entities.map((e) => e.name))).toEqual([['Globex', 'Dana Kim']])

      const retired = unwrap(
        await admin.retireGraphRelationship({ agentId, id: second.id, reason: 'wrong company' }),
      )
      expect(retired).toMatchObject({ current: false, retiredReason: 'wrong company' })
      expect(unwrap(await agentA.graphNeighbourhood({ entityId: dana.id })).nodes).toHaveLength(1)

      // B's graph is its own; agent keys cannot correct a graph; bad input names the field and limit.
      expect(unwrap(await agentB.graphEntities({ name: 'Dana' })).matches).toEqual([])
      expectFailure(await agentB.graphEntity({ id: dana.id }), 'NOT_FOUND')
      expectFailure(await agentA.createGraphEntity({ type: 'PERSON', name: 'Eve' }), 'FORBIDDEN')
      expectFailure(await agentA.deleteGraphEntity({ id: dana.id }), 'FORBIDDEN')
      const deep = expectFailure(
        await agentA.graphNeighbourhood({ entityId: dana.id, depth: 5 }),
        'VALIDATION',
      )
      expect(deep.issues).toEqual([expect.objectContaining({ field: 'depth', limit: 4 })])
      unwrap(await admin.deleteGraphEntity({ agentId, id: globex.id }))
      // Scoped to Dana: memories other cases store form edges of their own in the background.
      const left = unwrap(await agentA.graphRelationships({ entityId: dana.id, includeHistory: true }))
      expect(left.relationships.map((r) => r.target.name)).toEqual(['Acme Corp'])
    })

    it('optimizer: a run is reported in the status and streamed to a subscriber', async () => {
      unwrap(
        await agentA.addMessage({ conversationId: 'contract-opt', role: 'USER', content: 'hello there' }),
      )
      const live = agentA.watchOptimizerSnapshots()
      // A subscription registers a moment after it is asked for: run until one arrives.
      const first = live.next()
      let run: Awaited<ReturnType<EngramClient['runOptimizer']>> | null = null
      const received = await Promise.race([
        first,
        (async () => {
          for (let attempt = 0; attempt < 50; attempt++) {
            run = await agentA.runOptimizer()
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
          return null
        })(),
      ])
      expect(received && !received.done && received.value.ok).toBe(true)
      if (received && !received.done && received.value.ok) expect(received.value.data.agentId).toBe(agentAId)
      await live.close()
      expect(run === null || (run as Result<unknown>).ok).toBe(true)
      const status = unwrap(await agentA.optimizerStatus())
      expect(status.totalOptimizations).toBeGreaterThanOrEqual(1)
      expect(status.currentParameters.targetUsageRatio).toBeGreaterThan(0)
    })

    it('trajectory memory: a run started, watched, completed; its memory in the next run’s context; resume, fork, lineage', async () => {
      const started = unwrap(
        await agentA.startRun({
          runId: 'contract-run-1',
          sessionId: 'contract-proj',
          goal: 'Search for smart watch reviews',
          startUrl: 'https://shop.example.com/',
        }),
      )
      expect(started).toMatchObject({ status: 'RUNNING', kind: 'START', domain: 'shop.example.com' })
      // Live events of the run: a subscription registers a moment after it is asked for, so
      // progress is reported until the first event arrives.
      const live = agentA.runEvents({ runId: 'contract-run-1' })
      const first = live.next()
      const reported = await Promise.race([
        first,
        (async () => {
          for (let attempt = 0; attempt < 50; attempt++) {
            unwrap(
              await agentA.reportRunProgress({
                runId: 'contract-run-1',
                currentUrl: 'https://shop.example.com/search?q=watch',
                turnCount: 3,
              }),
            )
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
          return null
        })(),
      ])
      expect(reported && !reported.done && reported.value.ok && reported.value.data.kind).toBe('PROGRESS')
      const ended = unwrap(
        await agentA.completeRun({
          runId: 'contract-run-1',
          outcome: 'Found three reviews',
          finalUrl: 'https://shop.example.com/reviews',
          steps: [
            { action: 'click', selector: '#search', url: 'https://shop.example.com/', verified: true },
            { action: 'type', selector: '#search', value: 'smart watch', verified: true },
          ],
          facts: [{ type: 'QUIRK', key: 'shadow-dom', value: 'uses shadow DOM for modals' }],
          selectors: [{ element: 'button "Search"', selector: '#search' }],
        }),
      )
      expect(ended).toMatchObject({ factsRecorded: 1, selectorsRecorded: 1, sessionRecorded: true })
      expect(ended.trajectoryId).not.toBeNull()
      let kind: string | null = null
      while (kind !== 'COMPLETED') {
        const step = await live.next()
        if (step.done || !step.value.ok) break
        kind = step.value.data.kind
        expect(step.value.data.run.id).toBe('contract-run-1')
      }
      expect(kind).toBe('COMPLETED')
      await live.close()

      const context = unwrap(
        await agentA.runContext({ domain: 'shop.example.com', goal: 'search smart watch reviews' }),
      )
      expect(context.reference?.trajectory.id).toBe(ended.trajectoryId)
      expect(context.text).toContain('REFERENCE TRAJECTORY')
      expect(context.text).toContain('shadow DOM')
      expect(context.totalTokens).toBeLessThanOrEqual(context.budgetTokens)
      const sessions = unwrap(await agentA.runSessions({ domain: 'shop.example.com' }))
      expect(sessions.map((s) => s.outcome)).toEqual(['Found three reviews'])

      const resumed = unwrap(await agentA.resumeRun({ runId: 'contract-run-1', goal: 'Now compare prices' }))
      expect(resumed).toMatchObject({
        kind: 'RESUME',
        parentRunId: 'contract-run-1',
        sessionId: 'contract-proj',
        startUrl: 'https://shop.example.com/reviews',
      })
      const forked = unwrap(await agentA.forkRun({ runId: 'contract-run-1', goal: 'Look for headphones' }))
      expect(forked.sessionId).not.toBe('contract-proj')
      const lineage = unwrap(await agentA.runLineage({ runId: forked.id }))
      expect(lineage.rootRunId).toBe('contract-run-1')
      expect(lineage.ancestry).toEqual(['contract-run-1', forked.id])
      expect(lineage.runs.map((n) => n.run.id).sort()).toEqual(
        ['contract-run-1', forked.id, resumed.id].sort(),
      )
      const running = unwrap(await agentA.runs({ domain: 'shop.example.com', status: 'RUNNING' }))
      expect(running.runs.map((r) => r.id).sort()).toEqual([forked.id, resumed.id].sort())

      // Typed errors: a limit, a blank goal, a bad id, a run id taken, another agent's run.
      const tooMany = expectFailure(
        await agentA.completeRun({
          runId: resumed.id,
          steps: Array.from({ length: CONTRACT_LIMITS.maxStepsPerTrajectory + 1 }, () => ({
            action: 'click',
          })),
        }),
        'VALIDATION',
      )
      expect(tooMany.issues?.map((i) => [i.field, String(i.limit)])).toEqual([
        ['steps', String(CONTRACT_LIMITS.maxStepsPerTrajectory)],
      ])
      const blank = expectFailure(await agentA.startRun({ goal: '  ', domain: 'x.example' }), 'VALIDATION')
      expect(blank.issues?.map((i) => i.field)).toEqual(['goal'])
      const badId = expectFailure(await agentA.run({ runId: 'not a run id' }), 'VALIDATION')
      expect(badId.issues?.map((i) => i.field)).toEqual(['runId'])
      expectFailure(
        await agentA.startRun({ runId: 'contract-run-1', goal: 'again', domain: 'shop.example.com' }),
        'CONFLICT',
      )
      expect(unwrap(await agentB.run({ runId: 'contract-run-1' }))).toBeNull()
      expectFailure(await agentB.resumeRun({ runId: 'contract-run-1' }), 'NOT_FOUND')
      expect(unwrap(await agentB.runs({})).totalCount).toBe(0)
      expectFailure(await agentA.runs({ agentId: 'someone-else' }), 'FORBIDDEN')
    })

    it('shared memory pools: an admin creates one, A contributes, B (a reader) finds it and syncs it', async () => {
      const [agentBId] = unwrap(await agentB.agents()).map((a) => a.id)
      const pool = unwrap(
        await admin.createPool({
          name: `contract-docs-${agentAId}`,
          members: [
            { agentId: agentAId, role: 'CONTRIBUTOR' },
            { agentId: agentBId as string, role: 'READER' },
          ],
        }),
      )
      const shader = 'WebGPU requires WGSL shaders, not GLSL'
      const stored = unwrap(
        await agentA.contributeToPool({ poolId: pool.id, content: shader, category: 'FACT', source: 'MDN' }),
      )
      expect(stored).toMatchObject({ outcome: 'STORED', contributorAgentId: agentAId })
      expectFailure(
        await agentB.contributeToPool({ poolId: pool.id, content: 'x y', category: 'FACT' }),
        'FORBIDDEN',
      )
      const found = unwrap(
        await agentB.queryPool({ poolId: pool.id, query: 'how do shaders work in WebGPU?' }),
      )
      expect(found.hits[0]?.memory.content).toBe(shader)
      const listed = unwrap(await agentB.pools({}))
      expect(listed.map((p) => [p.id, p.role])).toEqual([[pool.id, 'READER']])
      const synced = unwrap(await agentB.syncPoolToAgent({ poolId: pool.id }))
      expect(synced).toMatchObject({ stored: 1, agentId: agentBId })
      expect(unwrap(await agentB.syncPoolToAgent({ poolId: pool.id })).stored).toBe(0)
      unwrap(await admin.removePoolMember({ poolId: pool.id, agentId: agentBId as string }))
      expectFailure(await agentB.pool({ id: pool.id }), 'NOT_FOUND')
      expect(unwrap(await admin.deletePool({ id: pool.id })).deleted).toBe(true)
    })

    it('export → import: one agent’s memory moves into another', async () => {
      unwrap(await agentA.rememberThis({ text: 'Remember that my cat is called Miso' }))
      const exported = unwrap(await agentA.exportMemory())
      expect(exported.memories).toBeGreaterThanOrEqual(1)
      const report = unwrap(await agentB.importMemory({ document: exported.document, mode: 'REPLACE' }))
      expect(report.memories).toBe(exported.memories)
      const hits = unwrap(await agentB.search({ query: 'what is my cat called', scopes: ['MEMORIES'] }))
      expect(hits.hits[0]?.memory?.content).toContain('Miso')
    })

    it('typed errors: bad input names the field and the limit; others’ data is forbidden or absent', async () => {
      const tooLong = expectFailure(
        await agentA.addMessage({
          conversationId: 'c',
          role: 'USER',
          content: 'x'.repeat(CONTRACT_LIMITS.maxContentChars + 1),
        }),
        'VALIDATION',
      )
      expect(tooLong.issues).toEqual([
        expect.objectContaining({ field: 'content', limit: CONTRACT_LIMITS.maxContentChars }),
      ])
      expectFailure(await agentA.search({ query: 'x', agentId: 'someone-else' }), 'FORBIDDEN')
      expectFailure(await agentA.memory({ id: '999999' }), 'NOT_FOUND')
      const theirs = unwrap(await agentB.createMemory({ content: 'B’s private note', category: 'FACT' }))
      expectFailure(await agentA.memory({ id: theirs.memory.id }), 'NOT_FOUND')
      expectFailure(await agentA.deleteMemory({ id: theirs.memory.id }), 'NOT_FOUND')
      expectFailure(await agentA.apiKeys(), 'FORBIDDEN')
    })

    it('operator work: keys, agents, backups', async () => {
      const created = unwrap(await admin.createApiKey({ agentId: 'contract-ops', label: 'ops' }))
      expect(created.key).toMatch(/^engram_/)
      const keys = unwrap(await admin.apiKeys({ agentId: 'contract-ops' }))
      expect(keys.map((k) => k.id)).toContain(created.apiKey.id)
      expect(unwrap(await admin.agents()).map((a) => a.id)).toContain('contract-ops')
      const revoked = unwrap(await admin.revokeApiKey({ id: created.apiKey.id }))
      expect(revoked.revokedAt).not.toBeNull()
      const backup = unwrap(await admin.backupDatabase())
      expect(backup.bytes).toBeGreaterThan(0)
      expect(unwrap(await admin.backups()).map((b) => b.name)).toContain(backup.name)
    })

    it('maintenance (issue 17 §4): the operator sets a retention, dry-runs, reads the runs; an agent is refused', async () => {
      const settings = unwrap(await admin.updateMaintenanceSettings({ agentId: agentAId, retentionDays: 30 }))
      expect(settings).toEqual({ agentId: agentAId, retentionDays: 30, effectiveRetentionDays: 30 })
      const run = unwrap(await admin.runMaintenance({ dryRun: true, agentId: agentAId }))
      expect(run).toMatchObject({ trigger: 'MANUAL', dryRun: true, status: 'SUCCEEDED', agentId: agentAId })
      expect(unwrap(await admin.maintenanceRuns({ first: 5 })).runs.map((r) => r.id)).toContain(run.id)
      const status = unwrap(await admin.maintenanceStatus())
      expect(status.rules.cleanupInterval).toBe('0 3 * * *')
      expect(status.lastRuns.map((r) => r.id)).toContain(run.id)
      const tooShort = expectFailure(
        await admin.updateMaintenanceSettings({ agentId: agentAId, retentionDays: 0 }),
        'VALIDATION',
      )
      expect(tooShort.issues).toEqual([expect.objectContaining({ field: 'retentionDays', limit: 1 })])
      expectFailure(await agentA.runMaintenance({ dryRun: true }), 'FORBIDDEN')
      expectFailure(await agentA.maintenanceStatus(), 'FORBIDDEN')
    })
  })
}
