import type { PersistentSessionManager } from '@engram/core'
import type { ContextService } from '../context/context-service.ts'
import type { FormationStats } from '../formation/formation-stats.ts'
import type { MemoryService } from '../memory/memory-service.ts'
import type { OptimizerService } from '../optimizer/optimizer-service.ts'
import type { AgentDataStore, StoreRemainder } from '../ports/agent-data.ts'
import type { EventBus } from '../ports/event-bus.ts'
import type { AgentWrites } from './agent-writes.ts'
import type { LifecycleAgents, LifecycleEmbeddings, LifecycleSearch } from './collaborators.ts'

/** What remains of an agent, store by store: every count is zero once it is deleted. */
export interface DeletionReport {
  agentId: string
  remaining: number
  stores: StoreRemainder[]
}

export interface AgentLifecycleDeps<A extends { id: string }> {
  /** The store's purge and count of what remains (the adapter's physical side of a deletion). */
  data: AgentDataStore
  agents: LifecycleAgents<A>
  writes: AgentWrites
  context: ContextService
  embeddings: LifecycleEmbeddings
  sessions: Pick<PersistentSessionManager, 'forgetCached' | 'cachedCount'>
  memory: MemoryService
  search: LifecycleSearch
  optimizer: OptimizerService
  events: EventBus
  /** Formation's processing statistics: a new owner of the id starts at zero. */
  formationStats?: Pick<FormationStats, 'forget'>
  /** Work that must run while the agent's rows still exist (its pool contributions leave their pools). */
  beforeDelete?: (agentId: string) => Promise<void>
  /** What replicas share beside the database (spec 002's L2 episodic sets in Redis), when configured. */
  shared?: {
    forgetAgent(agentId: string | null): Promise<void>
    keysOf(agentId: string): Promise<number | null>
  }
  /** contextWindow's and memoryContext's kept token counts of messages (issue 18). */
  messageTokens?: { forget(agentId?: string): void; held(agentId: string): number }
  /** Search's in-process lexical indexes (issue 18): how many it holds for an agent. */
  lexicalIndexes?: { held(agentId: string): number }
  /** What this process knows of pending debounced jobs (ScheduledJobs): a deleted agent's go too. */
  scheduledJobs?: { forgetAgent(agentId: string | null): void; held(agentId: string): number }
  /** Spec 002's L1 working context (issue 17): this process's LRU and, with Redis, its shared key. */
  workingContext?: {
    forgetAgent(agentId: string | null): Promise<void>
    dropCached(agentId?: string): void
    held(agentId: string): number
    sharedKeys(agentId: string): Promise<number | null>
  }
}

/**
 * The end of an agent's data: deleting an agent, clearing, importing over it or restoring a backup
 * deletes rows, and everything derived from them must go too — in-memory caches (a new owner of
 * the same id must not be served them), saved vector graphs, and the bytes of deleted text in the
 * store. The deletion report lets an operator check that nothing remains.
 */
export class AgentLifecycle<A extends { id: string } = { id: string }> {
  constructor(private readonly deps: AgentLifecycleDeps<A>) {}

  /** Deletes an agent with all of its data and keys, and everything derived from them. */
  async deleteAgent(id: string): Promise<A> {
    await this.deps.beforeDelete?.(id)
    const agent = await this.deps.agents.deleteAgent(id)
    this.ended(agent.id)
    await this.purge(agent.id)
    await this.dropShared(agent.id)
    return agent
  }

  /** Its keys and tokens are gone: open subscriptions check again and end. */
  accessChanged(): void {
    this.deps.events.publish('access:changed', {})
  }

  /**
   * An agent (every agent when none is named) no longer exists as it was: a new incarnation of its
   * id, and nothing held in memory for the old one.
   */
  ended(agentId?: string): void {
    if (agentId) this.deps.writes.ended(agentId)
    else this.deps.writes.touchAll()
    this.forget(agentId)
    this.accessChanged()
  }

  /**
   * Drops everything held in memory that was derived from an agent's rows (every agent's when none
   * is named), after they were deleted or replaced behind the caches.
   */
  forget(agentId?: string): void {
    const { writes } = this.deps
    if (agentId) writes.touch(agentId, 'reset')
    else writes.touchAll()
    this.dropDerived(agentId)
  }

  /**
   * Drops this process's derived state of an agent (every agent's when none is named) without
   * announcing it: `forget`, and what another replica's deletion or replacement calls here.
   */
  dropDerived(agentId?: string): void {
    const { context, embeddings, sessions, memory, search, optimizer } = this.deps
    context.forget(agentId)
    embeddings.reset(agentId)
    sessions.forgetCached(agentId)
    memory.invalidate(agentId ?? null)
    optimizer.forget(agentId)
    search.forgetStatistics(agentId)
    search.forgetAccesses(agentId)
    this.deps.formationStats?.forget(agentId)
    this.deps.scheduledJobs?.forgetAgent(agentId ?? null)
    this.deps.workingContext?.dropCached(agentId)
    this.deps.messageTokens?.forget(agentId)
  }

  /**
   * After an agent's rows were deleted or replaced (every agent's when none is named): what the
   * replicas share beside the database (the L2 episodic sets) goes too, so none is served again.
   */
  async dropShared(agentId?: string): Promise<void> {
    await this.deps.shared?.forgetAgent(agentId ?? null)
    await this.deps.workingContext?.forgetAgent(agentId ?? null)
  }

  /**
   * After rows were deleted in bulk: removes the agent's saved vector graphs (every agent's when
   * none is named), then has the store erase what it still keeps of deleted rows physically.
   */
  async purge(agentId?: string): Promise<void> {
    this.deps.embeddings.removeFiles(agentId)
    await this.deps.data.purge(agentId)
  }

  /**
   * At start: saved vector graphs of agents that no longer exist are removed (left by a deletion
   * that a crash interrupted, or by a server without this sweep). Returns how many files.
   */
  async removeOrphanFiles(): Promise<number> {
    return this.deps.embeddings.removeOrphanFiles(await this.deps.data.agentIds())
  }

  /** What remains of an agent in every store; all zero once it is deleted. */
  async report(agentId: string): Promise<DeletionReport> {
    const { data, context, embeddings, sessions, memory, optimizer } = this.deps
    const stores: StoreRemainder[] = [
      ...(await data.remains(agentId)),
      { store: 'vector graph files', kind: 'FILE', count: embeddings.files(agentId).length },
      { store: 'context cache', kind: 'CACHE', count: context.cachedEntries(agentId) },
      { store: 'session cache', kind: 'CACHE', count: sessions.cachedCount(agentId) },
      {
        store: 'vector indexes in memory',
        kind: 'CACHE',
        count: embeddings.held(agentId).indexes + (memory.holdsIndex(agentId) ? 1 : 0),
      },
      { store: 'optimizer redundancy joins', kind: 'CACHE', count: optimizer.cachedJoins(agentId) },
      { store: 'optimizer kept entries', kind: 'CACHE', count: optimizer.cachedEntries(agentId) },
      { store: 'search facts in memory', kind: 'CACHE', count: this.deps.search.cachedFacts(agentId) },
      {
        store: 'lexical indexes in memory',
        kind: 'CACHE',
        count: this.deps.lexicalIndexes?.held(agentId) ?? 0,
      },
      {
        store: 'message token counts',
        kind: 'CACHE',
        count: this.deps.messageTokens?.held(agentId) ?? 0,
      },
      {
        store: 'debounced jobs known pending',
        kind: 'CACHE',
        count: this.deps.scheduledJobs?.held(agentId) ?? 0,
      },
    ]
    const { workingContext } = this.deps
    if (workingContext)
      stores.push({ store: 'working context (L1)', kind: 'CACHE', count: workingContext.held(agentId) })
    // Keys shared by the replicas (Redis); a store that cannot be asked is left out, not counted 0.
    // The shared scan finds every key naming the agent (the working context's too); without it
    // (a working context store alone) that store counts its own.
    const sharedKeys = this.deps.shared
      ? await this.deps.shared.keysOf(agentId)
      : ((await workingContext?.sharedKeys(agentId)) ?? null)
    if (sharedKeys !== null) stores.push({ store: 'Redis keys', kind: 'CACHE', count: sharedKeys })
    return { agentId, remaining: stores.reduce((sum, s) => sum + s.count, 0), stores }
  }
}
