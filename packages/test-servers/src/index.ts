// inject('postgresUrl') / inject('redisUrl') are typed wherever the harness is imported.
import './provided-context.ts'

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
