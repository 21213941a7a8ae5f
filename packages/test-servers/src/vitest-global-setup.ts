import type { TestProject } from 'vitest/node'
import { startPostgres } from './postgres.ts'
import { startRedis } from './redis.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's postgresql-15 server (maintenance database); test files create their own database. */
    postgresUrl: string
    /** The run's redis-server. */
    redisUrl: string
  }
}

/**
 * A vitest `globalSetup`: one Postgres and one Redis for the whole run, stopped when it ends. Test
 * files read them with `inject('postgresUrl')` / `inject('redisUrl')` and take a fresh database with
 * `createDatabase(inject('postgresUrl'))`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [postgres, redis] = await Promise.all([startPostgres(), startRedis()])
  project.provide('postgresUrl', postgres.url)
  project.provide('redisUrl', redis.url)
  return async () => {
    await Promise.all([postgres.stop(), redis.stop()])
  }
}
