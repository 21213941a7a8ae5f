import {
  catalog,
  describeFailure,
  type EngramClient,
  type EngramFailure,
  ERROR_CODES,
  fieldIssues,
  type OperationName,
  type OutputOf,
  type Result,
} from '@engram/contract'
import type { z } from 'zod'
import { POOL_TOOLS } from './pool-tools.ts'
import { WORKING_CONTEXT_TOOLS } from './working-context-tools.ts'

/**
 * One MCP tool: a catalog operation under a name a model reaches for, its input the catalog's
 * (same limits) less `agentId` — the key decides the agent, and an unknown key such as `agentId`
 * is refused, so no argument can point a tool at another agent.
 */
export interface MemoryTool {
  name: string
  title: string
  description: string
  operation: OperationName
  input: z.ZodObject
  run(client: EngramClient, input: never): Promise<Result<unknown>>
}

const withoutAgent = <S extends z.ZodObject>(schema: S) => schema.omit({ agentId: true } as never).strict()

export const TOOLS: MemoryTool[] = [
  {
    name: 'remember',
    title: 'Remember',
    operation: 'rememberThis',
    description:
      'Store something worth keeping across conversations: a fact about the user, a preference, a decision, a commitment. Write it as one plain statement ("Prefers tabs over spaces"). Near-duplicates of an existing memory are recognised and not stored twice; a correction supersedes the older memory. Use it when the user asks you to remember something or states a lasting fact about themselves.',
    input: withoutAgent(catalog.rememberThis.input),
    run: (client, input) => client.rememberThis(input),
  },
  {
    name: 'recall',
    title: 'Recall',
    operation: 'search',
    description:
      'Search memory before answering anything that may depend on the past. scopes picks what to search: MEMORIES (long-term facts and preferences), MESSAGES (earlier conversation turns), SUMMARIES (compressed older conversation), KNOWLEDGE (learned key/value facts), GRAPH (people, companies, places and how they relate: "Dana works at Acme"), POOLS (what the shared pools you are a member of know; each hit names its poolId); default MESSAGES. Ask in natural language; names, dates ("last week") and the speaker are understood. Hits come best first with a score and their text.',
    input: withoutAgent(catalog.search.input),
    run: async (client, input) => {
      const result = await client.search(input)
      if (!result.ok) return result
      // The model needs what was found and where, not the ranking's internals.
      return {
        ok: true,
        data: {
          hits: result.data.hits.map((hit) => ({
            rank: hit.rank,
            scope: hit.scope,
            score: Number(hit.score.toFixed(4)),
            text: hit.text,
            id: hit.memory?.id ?? hit.message?.id ?? hit.knowledge?.id ?? hit.id,
            conversationId: hit.conversationId,
            speaker: hit.message?.speaker ?? null,
            timestamp: hit.timestamp,
            ...(hit.poolId ? { poolId: hit.poolId } : {}),
          })),
        },
      }
    },
  },
  {
    name: 'get_context',
    title: 'Get memory context',
    operation: 'memoryContext',
    description:
      'Get a ready-made memory block to ground your next answer: pinned overrides, the user profile, working memory, summaries, the memories and knowledge relevant to query, and (with conversationId) recent turns, all within budgetTokens (default 8000). Pass the user’s current message as query. Add buildContext ({ contextWindow, instructions, toolCount, currentInput }) to also get `built`: a whole chat prompt for that model window (your instructions, your most relevant memories and past turns ranked by recency, similarity and importance, a "[Previous context summary]" of those that did not fit, then the input), with its token budget.',
    input: withoutAgent(catalog.memoryContext.input),
    run: async (client, input) => {
      const result = await client.memoryContext(input)
      if (!result.ok) return result
      const { text, totalTokens, budgetTokens, sections, built } = result.data
      return {
        ok: true,
        data: {
          text,
          totalTokens,
          budgetTokens,
          sections: sections.map((s) => ({
            section: s.section,
            included: s.includedCount,
            omitted: s.omittedCount,
          })),
          // Spec 002's prompt, only when asked for: the messages as a chat API takes them.
          ...(built
            ? {
                built: {
                  messages: built.messages.map((m) => ({
                    role: m.role,
                    content: m.content,
                    kind: m.kind,
                    ...(m.sourceId ? { sourceId: m.sourceId } : {}),
                  })),
                  tokenCount: built.tokenCount,
                  budget: built.budget,
                  memories: {
                    included: built.memories.included.length,
                    overflowed: built.memories.overflowed.length,
                    summarized: built.memories.summarized.length,
                  },
                },
              }
            : {}),
        },
      }
    },
  },
  {
    name: 'forget',
    title: 'Forget a memory',
    operation: 'deleteMemory',
    description:
      'Delete one long-term memory for good, by the id recall or list_memories gave. Use it when the user asks you to forget something or a memory is simply wrong (for a change of fact, prefer update_memory or remember the correction).',
    input: withoutAgent(catalog.deleteMemory.input),
    run: (client, input) => client.deleteMemory(input),
  },
  {
    name: 'add_messages',
    title: 'Add conversation messages',
    operation: 'addMessages',
    description:
      'Record turns of a conversation (in order, oldest first) so they can be recalled later and the conversation’s context window managed. conversationId is your own stable id for the conversation; speaker names who said it when there are several people.',
    input: withoutAgent(catalog.addMessages.input),
    run: async (client, input) => {
      const result = await client.addMessages(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          conversationId: result.data.session.conversationId,
          messageCount: result.data.session.messageCount,
          messageIds: result.data.messages.map((m) => m.id),
        },
      }
    },
  },
  {
    name: 'get_profile',
    title: 'Get the user profile',
    operation: 'userProfile',
    description:
      'The profile of the user that memory keeps on its own: who they are, what they prefer, their skills, relationships and commitments, with what they pinned first. Read it at the start of a conversation to personalise answers. Give userId only when one assistant serves several users. When no profile was generated yet, the profile section of the memory context is answered instead (generated: false).',
    input: withoutAgent(catalog.userProfile.input),
    run: async (client, input: { userId?: string }) => {
      const result = await client.userProfile(input)
      if (!result.ok) return result
      const current = result.data.current
      if (current)
        return {
          ok: true,
          data: {
            generated: true,
            version: current.version,
            text: current.content,
            updatedAt: current.createdAt,
          },
        }
      // Nothing generated yet: what the memory context would show about the user.
      const section = await client.profile({ ...(input.userId ? { userId: input.userId } : {}) })
      if (!section.ok) return section
      return { ok: true, data: { generated: false, version: null, text: section.data.text, updatedAt: null } }
    },
  },
  {
    name: 'sync_memory',
    title: 'Sync memory now',
    operation: 'syncMemory',
    description:
      'Form long-term memories now from the conversation turns recorded with add_messages that were not processed yet (this otherwise happens on its own a few seconds after a conversation goes quiet). Use it right before you rely on recall or get_context for something just said. Answers the memories formed.',
    input: withoutAgent(catalog.syncMemory.input),
    run: async (client, input) => {
      const result = await client.syncMemory(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          turns: result.data.turns,
          formed: result.data.stored.map((m) => ({ id: m.id, content: m.content, category: m.category })),
          alreadyKnown: result.data.duplicates,
          superseded: result.data.superseded,
        },
      }
    },
  },
  {
    name: 'formation_activity',
    title: 'Memory formation activity',
    operation: 'formationActivity',
    description:
      'How automatic memory formation is doing for you: per kind of work (extraction, summary, profile) the calls, failures with the latest reason and average duration since the server started; the jobs still queued; which extractor runs (OFFLINE or LLM) and the language model’s circuit state. Use it when memories you expect have not formed, before deciding to call sync_memory.',
    input: withoutAgent(catalog.formationActivity.input),
    run: async (client, input) => {
      const result = await client.formationActivity(input)
      if (!result.ok) return result
      const { extractor, circuitState, work, queue } = result.data
      return {
        ok: true,
        data: {
          extractor,
          circuitState,
          work: work.map((w) => ({
            kind: w.kind,
            calls: w.calls,
            failures: w.failures,
            averageDurationMs: Math.round(w.averageDurationMs),
            lastFailure: w.lastFailure?.reason ?? null,
          })),
          queued: Object.fromEntries(queue.map((q) => [q.kind, q.pending + q.running])),
        },
      }
    },
  },
  {
    name: 'list_memories',
    title: 'List memories',
    operation: 'memories',
    description:
      'List long-term memories, newest first, optionally filtered (categories, tags, pinned, minImportance, a substring in search). Use it to review what is remembered or to find an id to update or forget; use recall to find memories by meaning.',
    input: withoutAgent(catalog.memories.input),
    run: async (client, input) => {
      const result = await client.memories(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          totalCount: result.data.totalCount,
          nextCursor: result.data.pageInfo.hasNextPage ? result.data.pageInfo.endCursor : null,
          memories: result.data.memories.map((m) => ({
            id: m.id,
            content: m.content,
            category: m.category,
            tags: m.tags,
            importance: m.importance,
            pinned: m.pinned,
            validFrom: m.validFrom,
          })),
        },
      }
    },
  },
  {
    name: 'update_memory',
    title: 'Update a memory',
    operation: 'updateMemory',
    description:
      'Change a memory in place by id: its content, category, tags, importance, pinned (always in context) or validity. Fields left out keep their values.',
    input: withoutAgent(catalog.updateMemory.input),
    run: (client, input) => client.updateMemory(input),
  },
  {
    name: 'graph_search',
    title: 'Find entities in the knowledge graph',
    operation: 'graphEntities',
    description:
      'Find people, companies, places, projects, tools, concepts and events memory knows about, by name (fuzzy: "dana" finds "Dana Kim"; score 1 is an exact name or alias, lower is a partial match or a close spelling) and type. Use it to get an entity id, or to check how memory spells a name, before graph_neighbourhood or graph_paths.',
    input: withoutAgent(catalog.graphEntities.input),
    run: async (client, input) => {
      const result = await client.graphEntities(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          totalCount: result.data.totalCount,
          entities: result.data.matches.map((m) => ({
            id: m.entity.id,
            name: m.entity.name,
            type: m.entity.type,
            aliases: m.entity.aliases,
            summary: m.entity.summary,
            mentions: m.entity.mentionCount,
            score: Number(m.score.toFixed(3)),
          })),
        },
      }
    },
  },
  {
    name: 'graph_neighbourhood',
    title: 'Explore around an entity',
    operation: 'graphNeighbourhood',
    description:
      'What memory knows around one entity (entityId, or a name matched fuzzily): the entities linked to it up to depth hops (default 2, at most 4) and the relationships between them ("Dana —works at→ Acme"), as they hold now or asOf a past date. Use it for questions about a person, a project or a place and the people and things around them. A dense hub is cut; truncation then says what was left out.',
    input: withoutAgent(catalog.graphNeighbourhood.input),
    run: async (client, input) => {
      const result = await client.graphNeighbourhood(input)
      if (!result.ok) return result
      const { center, nodes, relationships, truncation, asOf } = result.data
      return {
        ok: true,
        data: {
          center: center && { id: center.id, name: center.name, type: center.type },
          asOf,
          entities: nodes.map((n) => ({
            id: n.entity.id,
            name: n.entity.name,
            type: n.entity.type,
            depth: n.depth,
          })),
          relationships: relationships.map(compactRelationship),
          truncation,
        },
      }
    },
  },
  {
    name: 'graph_relationships',
    title: 'List relationships',
    operation: 'graphRelationships',
    description:
      'Relationships from the knowledge graph by relation type ("works at", "lives in") and/or entity (entityId or a fuzzy name), most confident first, as they hold now or asOf a past date (knownAt: as memory believed them then). includeHistory also lists relationships that ended or were retired, with their validity: use it for "where did X work before?".',
    input: withoutAgent(catalog.graphRelationships.input),
    run: async (client, input) => {
      const result = await client.graphRelationships(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          totalCount: result.data.totalCount,
          relationships: result.data.relationships.map(compactRelationship),
        },
      }
    },
  },
  {
    name: 'graph_paths',
    title: 'How two entities are connected',
    operation: 'graphPaths',
    description:
      'The shortest chains of relationships linking two entities (fromId/fromName and toId/toName; names are matched fuzzily), at most maxDepth hops (4). Use it for "how does Dana know Lee?" or "what links this project to that company?".',
    input: withoutAgent(catalog.graphPaths.input),
    run: async (client, input) => {
      const result = await client.graphPaths(input)
      if (!result.ok) return result
      const { from, to, paths, truncation } = result.data
      return {
        ok: true,
        data: {
          from: from && { id: from.id, name: from.name, type: from.type },
          to: to && { id: to.id, name: to.name, type: to.type },
          paths: paths.map((path) => ({
            length: path.length,
            chain: chainText(path),
            relationshipIds: path.relationships.map((r) => r.id),
          })),
          truncation,
        },
      }
    },
  },
  // Trajectory memory (issue 16, spec 004): for an agent that acts (a browser, coding or tool-using
  // agent) and for the orchestrator that runs it.
  {
    name: 'start_run',
    title: 'Start a run',
    operation: 'startRun',
    description:
      'Call this when you begin a task that acts in the world (browsing a site, changing a repository, driving a tool) so what you learn is kept for next time. Give the goal and the domain (a host such as "shop.example.com") or the startUrl. Then call run_context before your first action, report_run_progress every few turns, and complete_run or fail_run at the end. sessionId groups runs of one project; isolation PER_RUN starts with clean memory, OFF uses none. Answers the run (its runId).',
    input: withoutAgent(catalog.startRun.input),
    run: async (client, input) => shaped(await client.startRun(input), compactRun),
  },
  {
    name: 'run_context',
    title: 'Memory for the next action',
    operation: 'runContext',
    description:
      'What memory knows that helps your next action in a run, as one text block to read before acting: SESSION HISTORY (what earlier runs on this domain did and where they ended), a REFERENCE TRAJECTORY (the steps of the most similar successful run: follow or adapt them instead of exploring), APP KNOWLEDGE (timings, patterns, quirks of the site), KNOWN SELECTORS (selectors that worked) and HINTS, within budgetTokens (default 2000). Give runId, or domain and goal.',
    input: withoutAgent(catalog.runContext.input),
    run: async (client, input) => {
      const result = await client.runContext(input)
      if (!result.ok) return result
      const { text, totalTokens, budgetTokens, sections, reference } = result.data
      return {
        ok: true,
        data: {
          text,
          totalTokens,
          budgetTokens,
          reference: reference && {
            goal: reference.trajectory.goal,
            similarity: Number(reference.similarity.toFixed(3)),
            steps: reference.trajectory.stepCount,
          },
          sections: sections.map((s) => ({
            section: s.section,
            items: s.items,
            available: s.availableItems,
            truncated: s.truncated,
          })),
        },
      }
    },
  },
  {
    name: 'report_run_progress',
    title: 'Report run progress',
    operation: 'reportRunProgress',
    description:
      'Tell the orchestrator where a running run is: the current URL, the turns taken so far and, in a sentence, what you are doing now. Call it every 3 turns or so; people watching the run see it live.',
    input: withoutAgent(catalog.reportRunProgress.input),
    run: async (client, input) => shaped(await client.reportRunProgress(input), compactRun),
  },
  {
    name: 'complete_run',
    title: 'Complete a run',
    operation: 'completeRun',
    description:
      'End a run that reached its goal. Send steps (each action you took: action such as click/type/navigate, selector, value, url, verified) so the next similar goal on this domain gets them as a reference; outcome in your own words ("Created the project with a TaskList component"); finalUrl; facts you learnt about the site (type TIMING, SELECTOR, PATTERN or QUIRK, a key and a value); and selectors that found elements (element like `button "Search"`, selector, outcome).',
    input: withoutAgent(catalog.completeRun.input),
    run: async (client, input) => shaped(await client.completeRun(input), compactRunEnd),
  },
  {
    name: 'fail_run',
    title: 'Fail a run',
    operation: 'failRun',
    description:
      'End a run that did not reach its goal, with the reason. It enters the domain’s session history as a failure so the next run knows; facts learnt and selectors that failed (outcome FAILURE) are still worth sending. No steps are kept.',
    input: withoutAgent(catalog.failRun.input),
    run: async (client, input) => shaped(await client.failRun(input), compactRunEnd),
  },
  {
    name: 'record_knowledge',
    title: 'Record app knowledge',
    operation: 'recordKnowledge',
    description:
      'Keep facts about a site or tool as soon as you learn them, for every later run on that domain: TIMING ("results take 5 s to load after submit"), SELECTOR ("the search box is [data-testid=search]"), PATTERN ("login: click Sign in → email → password → submit") or QUIRK ("modals use shadow DOM"). Each fact has a short key; the same value again makes it more certain, a different value for the key makes the old one less so. Give runId when inside a run.',
    input: withoutAgent(catalog.recordKnowledge.input),
    run: async (client, input) => {
      const result = await client.recordKnowledge(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          facts: result.data.map((f) => ({
            type: f.type,
            key: f.key,
            value: f.value,
            confidence: Number(f.confidence.toFixed(3)),
          })),
        },
      }
    },
  },
  {
    name: 'record_selector',
    title: 'Record a selector',
    operation: 'recordSelector',
    description:
      'Remember which selector found an element on a domain (element is how you would name it, e.g. `button "Search"` or `input "Email"`), or that one failed (outcome FAILURE), so later runs skip trial and error. Snapshot references such as "@e12" change between page loads: prefer stable selectors.',
    input: withoutAgent(catalog.recordSelector.input),
    run: async (client, input) => {
      const result = await client.recordSelector(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          selectors: result.data.map((s) => ({
            element: s.element,
            selector: s.selector,
            successes: s.successCount,
            failures: s.failureCount,
            knownGood: s.knownGood,
          })),
        },
      }
    },
  },
  {
    name: 'list_runs',
    title: 'List runs',
    operation: 'runs',
    description:
      'For an orchestrator: the runs of the registry, most recently updated first, filtered by domain, status (RUNNING, COMPLETED, FAILED), sessionId or parentRunId. Use it to find a run to inspect, resume or fork; give nextCursor as after for more.',
    input: withoutAgent(catalog.runs.input),
    run: async (client, input) => {
      const result = await client.runs(input)
      if (!result.ok) return result
      return {
        ok: true,
        data: {
          totalCount: result.data.totalCount,
          nextCursor: result.data.nextCursor,
          runs: result.data.runs.map(compactRun),
        },
      }
    },
  },
  {
    name: 'resume_run',
    title: 'Resume a run',
    operation: 'resumeRun',
    description:
      'For an orchestrator: start a new run that continues a previous one ("now add dark mode" after "build the app"): same session, starting where it ended (its final URL), with the same memory. goal defaults to the previous one’s. Answers the new run; hand its runId to the agent.',
    input: withoutAgent(catalog.resumeRun.input),
    run: async (client, input) => shaped(await client.resumeRun(input), compactRun),
  },
  {
    name: 'fork_run',
    title: 'Fork a run',
    operation: 'forkRun',
    description:
      'For an orchestrator: start a new run that branches off a previous one ("build auth instead"), in a new session, starting where it ended. Answers the new run; hand its runId to the agent.',
    input: withoutAgent(catalog.forkRun.input),
    run: async (client, input) => shaped(await client.forkRun(input), compactRun),
  },
  // Shared memory pools (issue 17): pool-tools.ts
  ...POOL_TOOLS,
  // The working context and recent memory (issue 17): working-context-tools.ts
  ...WORKING_CONTEXT_TOOLS,
]

type RunOut = OutputOf<'startRun'>

/** A successful answer reshaped for the model; a failure passed on as it is. */
function shaped<T, U>(result: Result<T>, shape: (data: T) => U): Result<U> {
  return result.ok ? { ok: true, data: shape(result.data) } : result
}

/** A run as a model or an orchestrator needs it: which, where, how far, how it ended. */
function compactRun(r: RunOut) {
  return {
    runId: r.id,
    sessionId: r.sessionId,
    parentRunId: r.parentRunId,
    kind: r.kind,
    status: r.status,
    goal: r.goal,
    domain: r.domain,
    url: r.finalUrl ?? r.currentUrl ?? r.startUrl,
    turnCount: r.turnCount,
    success: r.success,
    summary: r.summary,
    reason: r.reason,
    memory: r.scope === null ? 'OFF' : r.scope,
    updatedAt: r.updatedAt,
  }
}

function compactRunEnd(end: OutputOf<'completeRun'>) {
  return {
    run: compactRun(end.run),
    trajectoryKept: end.trajectoryId !== null,
    factsRecorded: end.factsRecorded,
    selectorsRecorded: end.selectorsRecorded,
    sessionRecorded: end.sessionRecorded,
  }
}

type GraphRelationshipOut = OutputOf<'graphRelationship'>

/** A relationship as a model reads it: who, what, whom, how sure, and when it held. */
function compactRelationship(r: GraphRelationshipOut) {
  return {
    id: r.id,
    fact: `${r.source.name} —${r.relation}→ ${r.target.name}`,
    sourceId: r.source.id,
    targetId: r.target.id,
    confidence: Number(r.confidence.toFixed(3)),
    validFrom: r.validFrom,
    validUntil: r.validUntil,
    current: r.current,
    sources: r.sources.length,
  }
}

/** "Ann —knows→ Ben ←mentors— Dev": each step in the direction its relationship points. */
function chainText(path: OutputOf<'graphPaths'>['paths'][number]): string {
  let text = path.entities[0]?.name ?? ''
  path.relationships.forEach((r, i) => {
    const here = path.entities[i]
    const next = path.entities[i + 1]
    const forward = r.source.id === here?.id
    text += forward ? ` —${r.relation}→ ${next?.name}` : ` ←${r.relation}— ${next?.name}`
  })
  return text
}

export function parseToolInput(tool: MemoryTool, input: unknown): Result<unknown> {
  const parsed = tool.input.safeParse(input ?? {})
  if (parsed.success) return { ok: true, data: parsed.data }
  const issues = fieldIssues(parsed.error)
  return {
    ok: false,
    error: {
      code: ERROR_CODES.VALIDATION,
      message: issues.map((i) => `${i.field}: ${i.message}`).join('; '),
      issues,
    },
  }
}

/** A tool's answer: the data as JSON text, or a typed error the model can read and correct. */
export function toolResult(result: Result<unknown>) {
  if (result.ok) {
    return {
      content: [{ type: 'text' as const, text: JSON.stringify(result.data, null, 2) }],
      structuredContent: { result: result.data },
    }
  }
  return toolError(result.error)
}

export function toolError(error: EngramFailure) {
  return {
    isError: true,
    content: [{ type: 'text' as const, text: describeFailure(error) }],
    structuredContent: { error },
  }
}
