// The servers without the vitest typings of index.ts: for harnesses outside vitest (the e2e run's
// Postgres launcher, whose package has no vitest to augment).
export { freePort, isPortFree } from './ports.ts'
export {
  createDatabase,
  DEFAULT_POSTGRES_BIN_DIR,
  dropDatabase,
  type PostgresServer,
  type StartPostgresOptions,
  startPostgres,
} from './postgres.ts'
export { ServerStartError } from './process.ts'
export { DEFAULT_REDIS_SERVER_PATH, type RedisServer, type StartRedisOptions, startRedis } from './redis.ts'
