import {
  type Clock,
  DEFAULT_LIMITS,
  type Limits,
  PersistentSessionManager,
  summarizeMessages,
  type TokenCounter,
} from '@engram/core'
import { AgentService } from './agents/agent-service.ts'
import { ConversationReads } from './conversations/conversation-reads.ts'
import { InProcessEventBus } from './events/in-process-event-bus.ts'
import { JobWorker } from './jobs/job-worker.ts'
import { MemoryService } from './memory/memory-service.ts'
import { ParameterStore } from './parameters/parameter-store.ts'
import type { EventBus } from './ports/event-bus.ts'
import type { Logger } from './ports/logger.ts'
import type { Storage } from './ports/storage.ts'
import { PrivacyService } from './privacy/privacy-service.ts'

export interface EngineDeps<S extends Storage = Storage> {
  /** The storage adapter's bundle (store-sqlite's, or the in-memory one in tests). */
  storage: S
  clock: Clock
  tokenCounter: TokenCounter
  /** Where snapshots and progress are published; an in-process bus when none is given. */
  events?: EventBus
  log?: Logger
  limits?: Limits
  /** How often a started job worker looks for due jobs (ms); see JobWorker. */
  jobPollIntervalMs?: number
}

export type Engine<S extends Storage = Storage> = ReturnType<typeof createEngine<S>>

/**
 * The engine's facade: the use cases wired to one storage adapter. Doors (the GraphQL API, later
 * the SDK, MCP and CLI) call these and nothing below them. The use cases still in apps/api (see
 * docs/architecture.md) are wired beside it until they move here.
 */
export function createEngine<S extends Storage>(deps: EngineDeps<S>) {
  const { storage, clock, tokenCounter } = deps
  const limits = deps.limits ?? DEFAULT_LIMITS
  const log = deps.log ?? console
  const events = deps.events ?? new InProcessEventBus()
  const parameters = new ParameterStore(storage.repositories.parameters)
  const memory = new MemoryService(
    storage.repositories.memoryEntries,
    clock,
    tokenCounter,
    limits,
    parameters,
  )
  const sessions = new PersistentSessionManager({
    repository: storage.sessions,
    clock,
    tokenCounter,
    summarize: (messages) => summarizeMessages(messages),
    limits,
  })
  // One durable queue for all background work; each kind registers its handler on the worker.
  const jobs = new JobWorker<S['jobs']>(storage.jobs, clock, log, deps.jobPollIntervalMs)
  const conversations = new ConversationReads(storage.history, sessions, parameters, tokenCounter)
  // Every write an agent makes passes its sensitive-data policy.
  const privacy = new PrivacyService(storage.privacyPolicies)
  const agents = new AgentService(storage.repositories.agents, storage.apiKeys)
  return {
    storage,
    clock,
    tokenCounter,
    limits,
    log,
    events,
    parameters,
    memory,
    sessions,
    conversations,
    jobs,
    privacy,
    agents,
  }
}
