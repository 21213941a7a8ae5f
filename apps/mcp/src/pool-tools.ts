import { catalog, type OutputOf, type Result } from '@engram/contract'
import type { z } from 'zod'
import type { MemoryTool } from './tools.ts'

// Shared memory pools (issue 17) as tools: the member's side only (listing, searching,
// contributing, syncing). Creating pools and changing membership is admin work, which the key's
// agent cannot do; the key decides the agent, so no tool names one.

const withoutAgent = <S extends z.ZodObject>(schema: S) => schema.omit({ agentId: true } as never).strict()

const shaped = <T, U>(result: Result<T>, shape: (data: T) => U): Result<U> =>
  result.ok ? { ok: true, data: shape(result.data) } : result

type PoolMemory = OutputOf<'memory'>
const compactMemory = (m: PoolMemory) => ({ id: m.id, content: m.content, category: m.category })

export const POOL_TOOLS: MemoryTool[] = [
  {
    name: 'list_pools',
    title: 'List shared memory pools',
    operation: 'pools',
    description:
      'The shared memory pools you belong to: knowledge several agents share (a team’s documentation, a project’s decisions). Each says your role: READER (you can search and sync it) or CONTRIBUTOR (you can also add to it). Use the pool id with query_pool, contribute_to_pool and sync_pool.',
    input: withoutAgent(catalog.pools.input),
    run: async (client, input) =>
      shaped(await client.pools(input), (pools) =>
        pools.map((p) => ({
          id: p.id,
          name: p.name,
          description: p.description,
          role: p.role,
          memories: p.memoryCount,
          members: p.memberCount,
        })),
      ),
  },
  {
    name: 'query_pool',
    title: 'Search a shared memory pool',
    operation: 'queryPool',
    description:
      'Search a shared pool’s knowledge in natural language (words and meaning, best first), e.g. "how do shaders work in WebGPU?". Use it when other agents may already know the answer. Each hit names the agent that contributed it.',
    input: catalog.queryPool.input.strict(),
    run: async (client, input) =>
      shaped(await client.queryPool(input), (r) => ({
        hits: r.hits.map((h) => ({
          ...compactMemory(h.memory),
          score: Number(h.score.toFixed(4)),
          contributedBy: h.contributorAgentId,
        })),
      })),
  },
  {
    name: 'contribute_to_pool',
    title: 'Contribute to a shared memory pool',
    operation: 'contributeToPool',
    description:
      'Share one piece of knowledge with the other members of a pool you CONTRIBUTE to: one plain statement ("WebGPU requires WGSL shaders, not GLSL"), its category, and where it comes from (source). Knowledge the pool already has is recognised as a DUPLICATE and not stored twice; a correction SUPERSEDES the older statement.',
    input: withoutAgent(catalog.contributeToPool.input),
    run: async (client, input) =>
      shaped(await client.contributeToPool(input), (c) => ({
        outcome: c.outcome,
        memory: compactMemory(c.memory),
        duplicateOf: c.duplicateOf?.id ?? null,
        superseded: c.superseded?.id ?? null,
      })),
  },
  {
    name: 'sync_pool',
    title: 'Copy a pool into your memory',
    operation: 'syncPoolToAgent',
    description:
      'Copy a shared pool’s knowledge into your own long-term memory, so recall and get_context find it without asking the pool. Safe to repeat: what you already have is not stored again. Each copy remembers which pool it came from.',
    input: withoutAgent(catalog.syncPoolToAgent.input),
    run: async (client, input) =>
      shaped(await client.syncPoolToAgent(input), (s) => ({
        stored: s.stored,
        alreadyKnown: s.duplicates,
        superseded: s.superseded,
        memories: s.memories.map(compactMemory),
      })),
  },
]
