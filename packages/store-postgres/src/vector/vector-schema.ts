import { createHash } from 'node:crypto'
import { ValidationError } from '@engram/core'
import type { PostgresDatabase } from '../db/client.ts'
import {
  VECTOR_OWNER_TABLES,
  VECTOR_SCHEMA_LOCK,
  VECTOR_TRIGGERS,
  vectorNotificationStatements,
} from './vector-changes.ts'

/**
 * How long the setup waits for each table's lock before it lets go of all of them and tries
 * again (ms; lowered at run time so the whole LOCK statement stays under the server's
 * deadlock_timeout, see installVectorSchema).
 */
export const DEFAULT_SCHEMA_LOCK_WAIT_MS = 100
/** Tries of the setup before it fails (the store's next vector call starts it again). */
export const DEFAULT_SCHEMA_SETUP_ATTEMPTS = 20
/** Pause before the next try: doubles from the first to the last (~15 s over the default tries). */
export const DEFAULT_SCHEMA_RETRY_DELAY_MS = { first: 25, last: 1_000 } as const

export interface VectorSchemaSetupOptions {
  /** Wait for each table's lock at most this long per try (ms, default 100). */
  lockWaitMs?: number
  /** Tries while other sessions hold the tables (default 20). */
  attempts?: number
  /** Pause between tries: doubles from `firstMs` (default 25) up to `lastMs` (default 1,000). */
  retryDelay?: { firstMs?: number; lastMs?: number }
}

interface SetupSettings {
  lockWaitMs: number
  attempts: number
  firstDelayMs: number
  lastDelayMs: number
}

/** The options checked once, at the store's construction (bad input is a typed error). */
export function checkedSchemaSetup(options: VectorSchemaSetupOptions = {}): SetupSettings {
  const settings = {
    lockWaitMs: options.lockWaitMs ?? DEFAULT_SCHEMA_LOCK_WAIT_MS,
    attempts: options.attempts ?? DEFAULT_SCHEMA_SETUP_ATTEMPTS,
    firstDelayMs: options.retryDelay?.firstMs ?? DEFAULT_SCHEMA_RETRY_DELAY_MS.first,
    lastDelayMs: options.retryDelay?.lastMs ?? DEFAULT_SCHEMA_RETRY_DELAY_MS.last,
  }
  const limits: [keyof SetupSettings, string, number][] = [
    ['lockWaitMs', 'setup.lockWaitMs', 1],
    ['attempts', 'setup.attempts', 1],
    ['firstDelayMs', 'setup.retryDelay.firstMs', 0],
    ['lastDelayMs', 'setup.retryDelay.lastMs', 0],
  ]
  for (const [key, field, min] of limits) {
    if (!Number.isInteger(settings[key]) || settings[key] < min)
      throw new ValidationError([{ field, message: `must be a whole number ≥ ${min}`, limit: min }])
  }
  return settings
}

/** Marks the installed triggers as this code's (a changed statement installs them again). */
const FINGERPRINT = `engram vector triggers ${createHash('sha256')
  .update(vectorNotificationStatements().join('\n'))
  .digest('hex')
  .slice(0, 16)}`

/** pgvector's first release with iterative index scans (an agent's filter keeps `limit` rows). */
const OLDEST_PGVECTOR = '0.8.0'

type Queries = Pick<PostgresDatabase, '$queryRawUnsafe'>

interface InstalledSchema {
  current: boolean
  /** The server's deadlock_timeout (ms): every lock wait of the setup stays below it. */
  deadlockTimeoutMs: number
}

/**
 * What the catalogs say is installed, read without a table lock: the triggers (by name) and the
 * fingerprint of their functions; with pgvector, the extension (recent enough), the mirror
 * column and its index.
 */
async function installed(db: Queries, pgvector: boolean): Promise<InstalledSchema> {
  const names = VECTOR_TRIGGERS.map((name) => `'${name}'`).join(', ')
  const [row] = await db.$queryRawUnsafe<
    {
      fingerprint: string | null
      triggers: number
      pgvector: string | null
      mirror: boolean
      unmirrored: boolean
      deadlockTimeoutMs: number
    }[]
  >(
    `SELECT
      (SELECT obj_description(p.oid, 'pg_proc') FROM pg_proc p
        WHERE p.proname = 'engram_vectors_notify' AND p.pronamespace = to_regnamespace(current_schema())) AS fingerprint,
      (SELECT count(*)::int FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = to_regnamespace(current_schema()) AND NOT t.tgisinternal
          AND t.tgname IN (${names})) AS triggers,
      (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS pgvector,
      EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('"Embedding"')
        AND attname = 'embedding' AND NOT attisdropped) AS mirror,
      to_regclass('"Embedding_unmirrored_idx"') IS NOT NULL AS unmirrored,
      (SELECT setting::int FROM pg_settings WHERE name = 'deadlock_timeout') AS "deadlockTimeoutMs"`,
  )
  const triggersCurrent = row?.fingerprint === FINGERPRINT && row.triggers === VECTOR_TRIGGERS.length
  const pgvectorCurrent =
    !pgvector ||
    (row?.pgvector != null &&
      compareVersions(row.pgvector, OLDEST_PGVECTOR) >= 0 &&
      row.mirror &&
      row.unmirrored)
  return { current: triggersCurrent && pgvectorCurrent, deadlockTimeoutMs: row?.deadlockTimeoutMs ?? 1_000 }
}

/**
 * Installs the NOTIFY triggers (and, with pgvector, the extension, the mirror column and its
 * index), or does nothing when the catalogs show them installed already: the usual start,
 * which then takes no lock on any table.
 *
 * Installing takes SHARE ROW EXCLUSIVE on "Embedding" and the four vector owner tables (ACCESS
 * EXCLUSIVE on "Embedding" with pgvector's ALTER TABLE), which every write of those tables
 * waits for. A delete of an owner row holds its table and then takes "Embedding" (the
 * *_embedding_delete trigger): a setup holding "Embedding" while waiting for that table was a
 * deadlock, and Postgres aborted one side, the delete as often as the setup (the conformance
 * suite's flaky "deletes many at once", docs/speed-pgflake18.md). So the setup takes every
 * table in one LOCK statement first, owners before "Embedding" (the order deletes take them),
 * and waits for each at most `lockWaitMs`, with (tables + 1) × wait below the server's
 * deadlock_timeout: a session waiting on the setup has not waited long enough for Postgres to
 * look for a deadlock before the setup has either all its tables (and then waits on nobody) or
 * given up and released them. A given-up try (lock_timeout, or a deadlock found anyway) is tried
 * again after a pause, at most `attempts` times.
 */
export async function installVectorSchema(
  db: PostgresDatabase,
  pgvector: boolean,
  settings: SetupSettings,
): Promise<void> {
  const before = await installed(db, pgvector)
  if (before.current) return
  const tables = Object.keys(VECTOR_OWNER_TABLES).length + 1
  const lockWaitMs = Math.max(
    1,
    Math.min(settings.lockWaitMs, Math.floor(before.deadlockTimeoutMs / (tables + 1))),
  )
  let delayMs = settings.firstDelayMs
  for (let attempt = 1; ; attempt++) {
    try {
      await installOnce(db, pgvector, lockWaitMs)
      return
    } catch (error) {
      if (attempt >= settings.attempts || !isLockConflict(error)) throw error
      // The setup's own pause (no record's lifetime depends on it), as the listener's reconnection.
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      delayMs = Math.min(delayMs * 2, settings.lastDelayMs)
    }
  }
}

async function installOnce(db: PostgresDatabase, pgvector: boolean, lockWaitMs: number): Promise<void> {
  await db.$transaction(async (tx) => {
    // One replica at a time; one that waited here finds the work done by the one before.
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${VECTOR_SCHEMA_LOCK})`)
    if ((await installed(tx, pgvector)).current) return
    await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = ${lockWaitMs}`)
    const owners = Object.keys(VECTOR_OWNER_TABLES)
      .map((table) => `"${table}"`)
      .join(', ')
    await tx.$executeRawUnsafe(`LOCK TABLE ${owners} IN SHARE ROW EXCLUSIVE MODE`)
    await tx.$executeRawUnsafe(
      `LOCK TABLE "Embedding" IN ${pgvector ? 'ACCESS EXCLUSIVE' : 'SHARE ROW EXCLUSIVE'} MODE`,
    )
    // Every table is held: nothing below waits on a session that could be waiting on this one.
    for (const statement of vectorNotificationStatements()) await tx.$executeRawUnsafe(statement)
    await tx.$executeRawUnsafe(`COMMENT ON FUNCTION engram_vectors_notify() IS '${FINGERPRINT}'`)
    if (!pgvector) return
    await tx.$executeRawUnsafe('CREATE EXTENSION IF NOT EXISTS vector')
    const [extension] = await tx.$queryRawUnsafe<{ version: string }[]>(
      `SELECT extversion AS version FROM pg_extension WHERE extname = 'vector'`,
    )
    if (!extension || compareVersions(extension.version, OLDEST_PGVECTOR) < 0)
      throw new Error(`pgvector ${extension?.version ?? '?'} is installed; 0.8.0 or later is needed`)
    // Outside Prisma's schema (the schema cannot depend on an extension the server may lack).
    await tx.$executeRawUnsafe(`ALTER TABLE "Embedding" ADD COLUMN IF NOT EXISTS "embedding" vector`)
    // Rows written without the mirror (imports, restores, raw writes) are found at once.
    await tx.$executeRawUnsafe(
      `CREATE INDEX IF NOT EXISTS "Embedding_unmirrored_idx" ON "Embedding" ("agentId", "kind", "model") WHERE "embedding" IS NULL`,
    )
  })
}

/** SQLSTATEs of a lock wait given up: lock_not_available (lock_timeout), deadlock_detected. */
const LOCK_CONFLICTS = new Set(['55P03', '40P01'])

/** Whether the error is a lock wait the setup gave up on (worth another try), through Prisma's adapter. */
export function isLockConflict(error: unknown): boolean {
  const cause = (error as { meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } })?.meta
    ?.driverAdapterError?.cause
  const state = cause?.originalCode ?? cause?.code
  return typeof state === 'string' && LOCK_CONFLICTS.has(state)
}

function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number)
  const pb = b.split('.').map(Number)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}
