import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { isPortFree } from './ports.ts'
import { createDatabase, type PostgresServer, startPostgres } from './postgres.ts'
import { type RedisServer, startRedis } from './redis.ts'

describe('throwaway postgresql-15', () => {
  let server: PostgresServer | undefined
  afterAll(() => server?.stop())

  it('starts on a free port, serves a fresh database, and frees the port when stopped', async () => {
    server = await startPostgres()
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`)
    expect(await isPortFree(server.port)).toBe(false)

    const first = await server.createDatabase()
    const second = await createDatabase(server.url)
    expect(first).not.toBe(second)
    const client = new pg.Client({ connectionString: first })
    await client.connect()
    try {
      const version = await client.query<{ server_version: string }>('SHOW server_version')
      expect(version.rows[0]?.server_version).toMatch(/^15\./)
      const fsync = await client.query<{ fsync: string }>('SHOW fsync')
      expect(fsync.rows[0]?.fsync).toBe('off')
      await client.query('CREATE TABLE note (id int PRIMARY KEY, body text NOT NULL)')
      await client.query('INSERT INTO note VALUES ($1, $2)', [1, 'remember the milk'])
      const back = await client.query<{ body: string }>('SELECT body FROM note WHERE id = $1', [1])
      expect(back.rows).toEqual([{ body: 'remember the milk' }])
    } finally {
      await client.end()
    }
    // A database of its own: the other one does not see the table.
    const other = new pg.Client({ connectionString: second })
    await other.connect()
    try {
      const tables = await other.query("SELECT 1 FROM pg_tables WHERE tablename = 'note'")
      expect(tables.rowCount).toBe(0)
    } finally {
      await other.end()
    }

    await server.stop()
    expect(await isPortFree(server.port)).toBe(true)
  })

  it('refuses a database name that is not a plain identifier', async () => {
    await expect(createDatabase('postgres://postgres@127.0.0.1:1/postgres', 'x"; DROP')).rejects.toThrow(
      /database name/,
    )
  })

  it('says how to install postgresql-15 when its binaries are missing', async () => {
    await expect(startPostgres({ binDir: '/nonexistent/bin' })).rejects.toThrow(/ensure-services\.sh/)
  })
})

describe('throwaway redis-server', () => {
  let server: RedisServer | undefined
  afterAll(() => server?.stop())

  it('starts on a free port without persistence, round-trips a value, and frees the port when stopped', async () => {
    server = await startRedis()
    const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 })
    await redis.connect()
    try {
      await redis.set('engram:test', 'remember the milk')
      expect(await redis.get('engram:test')).toBe('remember the milk')
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'no'])
      expect(await redis.config('GET', 'save')).toEqual(['save', ''])
    } finally {
      redis.disconnect()
    }
    await server.stop()
    expect(await isPortFree(server.port)).toBe(true)
  })

  it('says how to install redis-server when it is missing', async () => {
    await expect(startRedis({ serverPath: '/nonexistent/redis-server' })).rejects.toThrow(
      /ensure-services\.sh/,
    )
  })
})
