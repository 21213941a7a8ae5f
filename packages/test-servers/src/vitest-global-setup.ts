import type { TestProject } from 'vitest/node'
import './provided-context.ts'
import { startPostgres } from './postgres.ts'
import { startRedis } from './redis.ts'

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
