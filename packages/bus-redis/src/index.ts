export { DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS } from './redis-connection.ts'
export {
  DEFAULT_EPISODIC_COMMAND_TIMEOUT_MS,
  DEFAULT_EPISODIC_MAX_MESSAGES,
  DEFAULT_EPISODIC_TTL_MS,
  DEFAULT_EPISODIC_WRITE_LEASE_MS,
  RedisEpisodicStore,
  type RedisEpisodicStoreOptions,
} from './redis-episodic-store.ts'
export {
  eventChannel,
  RedisEventTarget,
  type RedisEventTargetOptions,
} from './redis-event-target.ts'
export {
  agentKeyPatterns,
  episodicKey,
  episodicMetaKey,
  keyNamesAgent,
  workingContextKey,
} from './redis-keys.ts'
export { leaseKey, RedisLease, type RedisLeaseOptions } from './redis-lease.ts'
export {
  DEFAULT_WORKING_CONTEXT_COMMAND_TIMEOUT_MS,
  RedisWorkingContextStore,
  type RedisWorkingContextStoreOptions,
} from './redis-working-context-store.ts'
