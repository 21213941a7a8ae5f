import fs from 'node:fs'
import path from 'node:path'
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3'
import { PrismaClient } from '../generated/prisma/client.ts'

export type Database = PrismaClient
/** The client handed to a transaction callback. */
export type Transaction = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0]

export function createDatabase(databaseFile: string): Database {
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true })
  const adapter = new PrismaBetterSqlite3({ url: `file:${databaseFile}`, timeout: 5_000 })
  return new PrismaClient({ adapter })
}
