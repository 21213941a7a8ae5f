import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { freePort } from './ports.ts'
import { ServerStartError, spawnUntilReady } from './process.ts'

export const DEFAULT_REDIS_SERVER_PATH = '/usr/bin/redis-server'
const PORT_ATTEMPTS = 3

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string
  port: number
  /** Stops the server and removes its temp dir. Safe to call twice. */
  stop(): Promise<void>
}

export interface StartRedisOptions {
  serverPath?: string
  /** A given port (e.g. to restart a stopped server where its clients reconnect); free one by default. */
  port?: number
  startTimeoutMs?: number
}

/** Starts a throwaway redis-server on a free port of 127.0.0.1, with no persistence at all. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  const serverPath = options.serverPath ?? process.env.REDIS_SERVER_PATH ?? DEFAULT_REDIS_SERVER_PATH
  if (!fs.existsSync(serverPath)) {
    throw new ServerStartError(
      `${serverPath} is missing: run scripts/ensure-services.sh (installs redis-server) or set REDIS_SERVER_PATH`,
    )
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-redis-'))
  let lastError: unknown
  // A given port is not retried elsewhere: the caller needs that one.
  const attempts = options.port === undefined ? PORT_ATTEMPTS : 1
  for (let attempt = 0; attempt < attempts; attempt++) {
    const port = options.port ?? (await freePort())
    try {
      const server = await spawnUntilReady(
        serverPath,
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
          '--daemonize',
          'no',
        ],
        /Ready to accept connections/,
        'redis-server',
        options.startTimeoutMs ?? 30_000,
      )
      // No server left behind by a run that ends without stop().
      const onExit = () => {
        server.child.kill('SIGKILL')
        fs.rmSync(dir, { recursive: true, force: true })
      }
      process.once('exit', onExit)
      let stopped: Promise<void> | null = null
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: () => {
          stopped ??= (async () => {
            process.off('exit', onExit)
            server.child.kill('SIGTERM')
            await server.exited
            fs.rmSync(dir, { recursive: true, force: true })
          })()
          return stopped
        },
      }
    } catch (error) {
      lastError = error
      if (!/Address already in use/i.test(String(error))) break
    }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  throw lastError
}
