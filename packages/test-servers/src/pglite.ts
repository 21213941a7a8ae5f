import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite/vector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

export interface PgliteServer {
  /** `postgres://` URL of the socket server: the production `pg` / `@prisma/adapter-pg` code connects to it. */
  url: string
  stop(): Promise<void>
}

/**
 * PGlite (Postgres 17 in WASM, with pgvector 0.8) in memory, served on a free port of 127.0.0.1
 * by `@electric-sql/pglite-socket`, so the production code runs against it unchanged. It serves
 * one connection at a time: a client (or a pool of one) must close before the next connects.
 * Covers the pgvector SQL, which Debian's postgresql-15 cannot run (no pgvector package).
 */
export async function startPglite(): Promise<PgliteServer> {
  const db = await PGlite.create({ extensions: { vector } })
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 })
  await server.start()
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop()
      await db.close()
    },
  }
}
