import {
  type ApiKeyRecord,
  type ApiKeyRepository,
  type PrivacyPolicyRepository,
  readStoredPrivacyPolicy,
} from '@engram/engine'
import { type Database, directSqlite, hotReaderOf, readHotRows } from '../db/client.ts'
import type { ApiKey as ApiKeyRow } from '../generated/prisma/client.ts'

export function toApiKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    agentId: row.agentId,
    role: row.role,
    label: row.label,
    keyHash: row.keyHash,
    keyPrefix: row.keyPrefix,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
  }
}

/** A date column as the prepared-statement paths read it (text or epoch milliseconds; a Date on Postgres). */
function storedDate(value: string | number | Date | null): Date | null {
  return value == null ? null : new Date(value)
}

/** Each agent's privacy policy, in the agent's row. */
export function sqlitePrivacyPolicies(db: Database): PrivacyPolicyRepository {
  return {
    find: async (agentId) => {
      // Read on every write: a prepared statement rather than a Prisma query.
      const direct = directSqlite(db)
      const agent = direct
        ? await direct.get<{ privacyMode: string; privacyPatterns: string }>(
            `SELECT "privacyMode", "privacyPatterns" FROM "Agent" WHERE "id" = ?`,
            agentId,
          )
        : await db.agent.findUnique({
            where: { id: agentId },
            select: { privacyMode: true, privacyPatterns: true },
          })
      return agent ? readStoredPrivacyPolicy(agent.privacyMode, agent.privacyPatterns) : null
    },
    save: async (agentId, policy) => {
      await db.agent.update({
        where: { id: agentId },
        data: { privacyMode: policy.mode, privacyPatterns: JSON.stringify(policy.patterns) },
      })
    },
  }
}

/** API keys; the lookup by hash every request makes runs as a prepared statement. */
export function sqliteApiKeys(db: Database): ApiKeyRepository {
  return {
    find: async (id) => {
      const row = await db.apiKey.findUnique({ where: { id } })
      return row ? toApiKey(row) : null
    },
    findByHash: async (keyHash) => {
      const direct = directSqlite(db)
      // Every request's lookup: SQLite's cached statement, or a registered reader's (Postgres'
      // prepared statement), not Prisma's query path; its columns are text and times on both.
      if (!direct && !hotReaderOf(db)) {
        const row = await db.apiKey.findUnique({ where: { keyHash } })
        return row ? toApiKey(row) : null
      }
      type Row = Omit<ApiKeyRecord, 'createdAt' | 'revokedAt'> & {
        createdAt: string | number | Date
        revokedAt: string | number | Date | null
      }
      const sql = `SELECT "id", "agentId", "role", "label", "keyHash", "keyPrefix", "createdAt", "revokedAt" FROM "ApiKey" WHERE "keyHash" = ?`
      const row = direct
        ? await direct.get<Row>(sql, keyHash)
        : (await readHotRows<Row[]>(db, sql, keyHash))[0]
      return row
        ? { ...row, createdAt: storedDate(row.createdAt) as Date, revokedAt: storedDate(row.revokedAt) }
        : null
    },
    issueForAgent: async (agentId, key) =>
      toApiKey(
        await db.$transaction(async (tx) => {
          await tx.agent.upsert({
            where: { id: agentId },
            create: { id: agentId, name: agentId },
            update: {},
          })
          return tx.apiKey.create({ data: { ...key, agentId, role: 'AGENT' } })
        }),
      ),
    putAdmin: async (key) =>
      toApiKey(
        await db.apiKey.upsert({
          where: { keyHash: key.keyHash },
          create: { ...key, role: 'ADMIN' },
          update: { revokedAt: null },
        }),
      ),
    countActiveAdmins: (exceptId) =>
      db.apiKey.count({
        where: { role: 'ADMIN', revokedAt: null, ...(exceptId ? { id: { not: exceptId } } : {}) },
      }),
    revoke: async (id, at) => toApiKey(await db.apiKey.update({ where: { id }, data: { revokedAt: at } })),
    list: async (agentId) =>
      (await db.apiKey.findMany({ where: agentId ? { agentId } : {}, orderBy: { createdAt: 'asc' } })).map(
        toApiKey,
      ),
  }
}
