import { type Clock, createTokenCounter, DEFAULT_OPTIMIZER_CONFIG } from '@engram/core'
import type { AgentWrites } from '../agents/agent-writes.ts'
import { createEngine } from '../engine.ts'
import { InProcessEventBus } from '../events/in-process-event-bus.ts'
import { OptimizerService, type OptimizerServiceConfig } from '../optimizer/optimizer-service.ts'
import type { Lease } from '../ports/lease.ts'
import { type Logger, SILENT_LOGGER } from '../ports/logger.ts'
import type { OptimizerRepository } from '../ports/optimizer.ts'
import { createInMemoryStorage } from './index.ts'

/** What one optimizer replica of a test is given beyond the shared engine. */
export interface OptimizerReplicaOptions {
  /** Its view of the optimizer repository (default: the storage's own). */
  store?: OptimizerRepository
  log?: Logger
  writes?: AgentWrites
  /** The lease store the replicas share (default: an in-process one of its own). */
  lease?: Lease
}

/**
 * The optimizer on the in-memory storage, for tests: one storage, event bus and engine on `clock`,
 * and `optimizer()` builds an OptimizerService on them, one a replica (as separate processes on
 * one database would each run theirs).
 */
export function optimizerOnMemory(clock: Clock) {
  const storage = createInMemoryStorage(clock)
  const events = new InProcessEventBus()
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: createTokenCounter(),
    events,
    log: SILENT_LOGGER,
  })
  const optimizer = (
    config: Omit<OptimizerServiceConfig, 'snapshotHistoryLimit'>,
    options: OptimizerReplicaOptions = {},
  ) =>
    new OptimizerService(
      options.store ?? storage.optimizer,
      clock,
      engine.tokenCounter,
      engine.parameters,
      engine.memory,
      events,
      { snapshotHistoryLimit: DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit, ...config },
      options.log ?? SILENT_LOGGER,
      options.writes,
      options.lease,
    )
  /** Agents, each with one short-term note for the optimizer to work on. */
  const addAgents = async (...agents: string[]) => {
    for (const agent of agents) {
      await storage.repositories.agents.upsert(agent, null)
      await storage.repositories.memoryEntries.create(agent, {
        type: 'short_term',
        role: 'user',
        content: `a note of ${agent} about the garden`,
        tokenCount: 7,
        relevance: 0.5,
        timestamp: clock.now(),
      })
    }
  }
  return { storage, events, engine, optimizer, addAgents }
}
