import { afterAll, beforeAll } from 'vitest'
import { pgliteInitializer, startPgliteDatabase, stopPgliteDatabase } from './initializers/pglite.ts'
import { describeVectors } from './spec/vectors.ts'

// The vector spec on the pgvector path: PGlite 0.3 serves Postgres with pgvector (Debian's
// postgresql-15 has none). Starting PGlite takes 10-20 s here, so it happens once, before the specs.
beforeAll(() => startPgliteDatabase().then(() => undefined), 120_000)
afterAll(() => stopPgliteDatabase(), 60_000)

describeVectors(pgliteInitializer)
