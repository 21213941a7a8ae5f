import {
  type NewProfileVersion,
  type ProfileRepository,
  type ProfileTrigger,
  type ProfileVersion,
  type ProfileWriter,
  parseTags,
} from '@engram/engine'
import type { Database } from '../db/client.ts'
import type { ProfileVersion as ProfileVersionRow } from '../generated/prisma/client.ts'

function toVersion(row: ProfileVersionRow): ProfileVersion {
  return {
    id: String(row.id),
    agentId: row.agentId,
    userId: row.userId,
    version: row.version,
    content: row.content,
    tokenCount: row.tokenCount,
    writer: row.writer as ProfileWriter,
    trigger: row.trigger as ProfileTrigger,
    sourceMemoryIds: parseTags(row.sourceMemoryIds),
    overrideIds: parseTags(row.overrideIds),
    createdAt: row.createdAt,
  }
}

/** Profile versions in SQLite: the next number is taken in the insert's transaction (unique per agent and user). */
export function sqliteProfiles(db: Database): ProfileRepository {
  return {
    insert: (version: NewProfileVersion) =>
      db.$transaction(async (tx) => {
        const highest = await tx.profileVersion.aggregate({
          where: { agentId: version.agentId, userId: version.userId },
          _max: { version: true },
        })
        const row = await tx.profileVersion.create({
          data: {
            ...version,
            version: (highest._max.version ?? 0) + 1,
            sourceMemoryIds: JSON.stringify(version.sourceMemoryIds),
            overrideIds: JSON.stringify(version.overrideIds),
          },
        })
        return toVersion(row)
      }),

    current: async (agentId, userId) => {
      const row = await db.profileVersion.findFirst({
        where: { agentId, userId },
        orderBy: { version: 'desc' },
      })
      return row ? toVersion(row) : null
    },

    list: async (agentId, userId, page) =>
      (
        await db.profileVersion.findMany({
          where: { agentId, userId },
          orderBy: { version: 'desc' },
          skip: page.offset,
          take: page.limit,
        })
      ).map(toVersion),

    count: (agentId, userId) => db.profileVersion.count({ where: { agentId, userId } }),

    find: async (agentId, userId, version) => {
      if (!Number.isSafeInteger(version)) return null
      const row = await db.profileVersion.findUnique({
        where: { agentId_userId_version: { agentId, userId, version } },
      })
      return row ? toVersion(row) : null
    },

    deleteBuiltFrom: (agentId, memoryIds) =>
      db.$transaction(async (tx) => {
        const ids = new Set(memoryIds)
        // The ids sit in JSON arrays: the agent's versions are few (one per rebuild), read and matched here.
        const rows = await tx.profileVersion.findMany({
          where: { agentId },
          select: { id: true, userId: true, sourceMemoryIds: true, overrideIds: true },
        })
        const hit = rows.filter((row) =>
          [...parseTags(row.sourceMemoryIds), ...parseTags(row.overrideIds)].some((id) => ids.has(id)),
        )
        if (hit.length === 0) return []
        await tx.profileVersion.deleteMany({ where: { id: { in: hit.map((row) => row.id) } } })
        return [...new Set(hit.map((row) => row.userId))].sort()
      }),

    countAll: (agentId) => db.profileVersion.count({ where: { agentId } }),
  }
}
