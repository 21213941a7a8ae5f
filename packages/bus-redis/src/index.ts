export {
  DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS,
  eventChannel,
  RedisEventTarget,
  type RedisEventTargetOptions,
} from './redis-event-target.ts'
export { leaseKey, RedisLease, type RedisLeaseOptions } from './redis-lease.ts'
