import { CONTEXT_SUMMARY_PREFIX, type MemoryCategory, type Role } from '@engram/core'
import type {
  FullTextCollection,
  MemoryItemFilter,
  MemoryUserActivity,
  RecalledKnowledge,
  RecalledMemoryItem,
  RecalledMessage,
  RecallSources,
  SpanTurn,
  SpeakerActivity,
  TurnBeside,
  TurnFilter,
  TurnSpan,
} from '@engram/engine'
import { type Database, readHotRows, readRows } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import { storedTime } from '../db/stored-time.ts'
import { COLLECTION_TABLES } from '../full-text/sqlite-full-text-index.ts'
import { FULL_TEXT_TABLES } from '../full-text/term-statistics.ts'
import type { Prisma } from '../generated/prisma/client.ts'
import { parseMetadata } from '../mappers.ts'
import {
  fromRawRow,
  memoryItemWhere,
  type RawMemoryItemRow,
  toMemoryItem,
} from '../memory-items/sqlite-memory-items.ts'

export { storedTime }

/** A turn and its conversation as the raw read returns them (either backend's types). */
interface MessageWithConversation {
  id: number | bigint
  sessionId: string
  role: string
  speaker: string | null
  content: string
  tokenCount: number | bigint
  isCompressed: number | boolean
  timestamp: number | bigint | string | Date
  metadata: string
  conversationId: string
}

/** The search's memory filter as the memory items' own Prisma condition. */
function recallWhere(
  agentId: string,
  filter: MemoryItemFilter,
  dialect: SqlDialect,
): Prisma.MemoryItemWhereInput {
  return memoryItemWhere(
    agentId,
    {
      ...filter,
      categories: filter.categories as readonly MemoryCategory[] | null | undefined,
      validAt: filter.includeSuperseded ? null : filter.asOf,
    },
    dialect,
  )
}

/** Spans per statement of turnSpans (SQLite's compound SELECT takes at most 500 terms). */
const SPANS_PER_READ = 100

/** The memory item's own columns (Postgres adds search columns a raw read cannot return). */
const MEMORY_ITEM_COLUMNS = [
  'id',
  'agentId',
  'userId',
  'content',
  'category',
  'tags',
  'importance',
  'confidence',
  'pinned',
  'sourceConversationId',
  'sourceMessageId',
  'accessCount',
  'lastAccessedAt',
  'validFrom',
  'validUntil',
  'supersededById',
  'metadata',
  'contentHash',
  'tokenCount',
  'createdAt',
  'updatedAt',
]
  .map((column) => `"${column}" AS "${column}"`)
  .join(', ')

/** Whether a memory filter asks for nothing but validity (search's usual read). */
function onlyValidity(filter: MemoryItemFilter): boolean {
  return (
    !filter.userId &&
    !filter.categories?.length &&
    !filter.tags?.length &&
    filter.minImportance == null &&
    !filter.createdAfter &&
    !filter.createdBefore &&
    filter.pinned == null &&
    !filter.search
  )
}

/** Summaries are the turns starting with the summary prefix; ordinary turns are the others. */
function turnSet(set: TurnFilter['set'], dialect: SqlDialect): Prisma.MessageWhereInput['content'] {
  return dialect.ignoringCase(
    set === 'summaries'
      ? { startsWith: CONTEXT_SUMMARY_PREFIX }
      : { not: { startsWith: CONTEXT_SUMMARY_PREFIX } },
  )
}

/**
 * How search reads its candidate memories' rows: by their primary key (the default), or with the
 * statement as before issue 18 (`planner`: SQLite's planner picks, and without statistics walks
 * the agent's index), kept so a bench can measure both in one run. The same rows either way.
 */
export type MemoryRowReads = 'primary-key' | 'planner'

/** The RecallSources port on SQLite: the reads search made itself before it moved into the engine. */
export class SqliteRecallSources implements RecallSources {
  /** See MemoryRowReads; a bench switches it between searches. */
  memoryRowReads: MemoryRowReads = 'primary-key'

  constructor(
    private readonly db: Database,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {}

  async speakersSince(agentId: string, afterMessageId: number): Promise<SpeakerActivity[]> {
    // One pass over the agent's new rows on the (agentId) index; GROUP BY keeps it one row a speaker.
    const rows = await readRows<
      { speaker: string | null; newest: number | bigint | string | null; top: number | bigint | null }[]
    >(
      this.db,
      `SELECT "speaker" AS speaker, max("timestamp") AS newest, max("id") AS top FROM "Message"
        WHERE "agentId" = ? AND "id" > ? GROUP BY "speaker"`,
      agentId,
      afterMessageId,
    )
    return rows.map((row) => ({
      speaker: row.speaker,
      newest: row.newest == null ? null : storedTime(row.newest),
      topMessageId: Number(row.top ?? 0),
    }))
  }

  async memoryUsersSince(agentId: string, afterMemoryId: number): Promise<MemoryUserActivity[]> {
    const rows = await readRows<{ userId: string | null; top: number | bigint | null }[]>(
      this.db,
      `SELECT "userId" AS "userId", max("id") AS top FROM "MemoryItem"
        WHERE "agentId" = ? AND "id" > ? AND "userId" IS NOT NULL GROUP BY "userId"`,
      agentId,
      afterMemoryId,
    )
    return rows.flatMap((row) =>
      row.userId ? [{ userId: row.userId, topMemoryId: Number(row.top ?? 0) }] : [],
    )
  }

  async documentTexts(collection: FullTextCollection, ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map()
    const base = FULL_TEXT_TABLES[COLLECTION_TABLES[collection]]
    // What the index holds of a knowledge row is its key and value (see the migrations' triggers).
    const column = base === 'Knowledge' ? `"key" || ' ' || "value"` : `"content"`
    const rows = await readRows<{ id: number | bigint; text: string }[]>(
      this.db,
      `SELECT "id" AS id, ${column} AS text FROM "${base}" WHERE "id" IN (${ids.map(() => '?').join(',')})`,
      ...ids.map(Number),
    )
    return new Map(rows.map((r) => [String(r.id), r.text]))
  }

  async hasSummaries(agentId: string, sessionId: string | null): Promise<boolean> {
    // Found through the index: every summary starts with CONTEXT_SUMMARY_PREFIX, whose words only
    // summaries hold in the usual case; "context summary" as one phrase (FTS5 tokenises it like
    // the stored prefix), then the prefix itself checked on the row.
    const phrase = this.dialect.messagesWithPhrase(CONTEXT_SUMMARY_PREFIX)
    if (!phrase) throw new Error('the summary prefix has no words to search for')
    const rows = await readRows<unknown[]>(
      this.db,
      `SELECT 1 FROM ${phrase.from}
        WHERE ${phrase.where} AND o."agentId" = ? AND substr(o."content", 1, ${CONTEXT_SUMMARY_PREFIX.length}) = ?
        ${sessionId ? `AND o."sessionId" = ?` : ''} LIMIT 1`,
      phrase.param,
      agentId,
      CONTEXT_SUMMARY_PREFIX,
      ...(sessionId ? [sessionId] : []),
    )
    return rows.length > 0
  }

  async memoryItemIdsBy(
    agentId: string,
    order: 'recency' | 'importance',
    limit: number,
    asOf: Date,
  ): Promise<string[]> {
    const rows = await this.db.memoryItem.findMany({
      where: memoryItemWhere(agentId, { validAt: asOf }, this.dialect),
      orderBy:
        order === 'recency'
          ? [{ createdAt: 'desc' }, { id: 'desc' }]
          : [{ importance: 'desc' }, { createdAt: 'desc' }],
      take: limit,
      select: { id: true },
    })
    return rows.map((r) => String(r.id))
  }

  async memoryItemIdsFromTurns(
    agentId: string,
    turnIds: readonly string[],
  ): Promise<{ memoryId: string; turnId: string }[]> {
    if (turnIds.length === 0) return []
    const rows = await this.db.memoryItem.findMany({
      where: { agentId, sourceMessageId: { in: [...turnIds] } },
      select: { id: true, sourceMessageId: true },
    })
    return rows.map((r) => ({ memoryId: String(r.id), turnId: r.sourceMessageId as string }))
  }

  async hasMemoryItemsFromTurns(agentId: string): Promise<boolean> {
    // One seek on the (agentId, sourceMessageId) index, per hybrid memory search.
    const rows = await readHotRows<unknown[]>(
      this.db,
      `SELECT 1 AS found FROM "MemoryItem" WHERE "agentId" = ? AND "sourceMessageId" IS NOT NULL LIMIT 1`,
      agentId,
    )
    return rows.length > 0
  }

  async knowledgeIdsBy(agentId: string, order: 'recency' | 'importance', limit: number): Promise<string[]> {
    const rows = await this.db.knowledge.findMany({
      where: { agentId },
      orderBy: order === 'recency' ? [{ updatedAt: 'desc' }] : [{ confidence: 'desc' }],
      take: limit,
      select: { id: true },
    })
    return rows.map((r) => String(r.id))
  }

  async newestMessageIds(agentId: string, set: TurnFilter['set'], limit: number): Promise<string[]> {
    const rows = await this.db.message.findMany({
      where: { agentId, content: turnSet(set, this.dialect) },
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      take: limit,
      select: { id: true },
    })
    return rows.map((r) => String(r.id))
  }

  async memoryItems(
    agentId: string,
    ids: readonly string[],
    filter: MemoryItemFilter,
  ): Promise<RecalledMemoryItem[]> {
    if (ids.length === 0) return []
    if (onlyValidity(filter)) {
      // Search's usual read (no filter but validity): one cached statement, the ids as one JSON
      // parameter; validity checked on the rows, as memoryItemWhere's validAt has it. The rows
      // are found by their key and the agent checked on them (checkedOnRows: a plan that does
      // not hang on statistics).
      const agent = this.memoryRowReads === 'planner' ? '"agentId"' : this.dialect.checkedOnRows('"agentId"')
      const rows = await readHotRows<RawMemoryItemRow[]>(
        this.db,
        `SELECT ${MEMORY_ITEM_COLUMNS} FROM "MemoryItem" WHERE "id" IN (${this.dialect.integersOf('?')}) AND ${agent} = ?`,
        JSON.stringify(ids.map(Number)),
        agentId,
      )
      const asOf = filter.includeSuperseded ? null : filter.asOf
      return rows
        .map(fromRawRow)
        .filter(
          (item) => !asOf || (item.validFrom <= asOf && (item.validUntil === null || item.validUntil > asOf)),
        )
    }
    const rows = await this.db.memoryItem.findMany({
      where: { ...recallWhere(agentId, filter, this.dialect), id: { in: ids.map(Number) } },
    })
    return rows.map(toMemoryItem)
  }

  async knowledge(agentId: string, ids: readonly string[]): Promise<RecalledKnowledge[]> {
    if (ids.length === 0) return []
    return this.db.knowledge.findMany({ where: { agentId, id: { in: ids.map(Number) } } })
  }

  async messages(agentId: string, ids: readonly string[], filter: TurnFilter): Promise<RecalledMessage[]> {
    if (ids.length === 0) return []
    // Raw SQL on a cached statement (the ids as one JSON parameter, so every search shares it):
    // through Prisma this read was compiled on every search and its `include` was a second query.
    // The set and the time bounds are checked on the rows here, on the times as read.
    const rows = await readHotRows<MessageWithConversation[]>(
      this.db,
      `SELECT m."id" AS id, m."sessionId" AS "sessionId", m."role" AS role, m."speaker" AS speaker,
              m."content" AS content, m."tokenCount" AS "tokenCount", m."isCompressed" AS "isCompressed",
              m."timestamp" AS timestamp, m."metadata" AS metadata, s."conversationId" AS "conversationId"
         FROM "Message" m JOIN "Session" s ON s."id" = m."sessionId"
        WHERE m."id" IN (${this.dialect.integersOf('?')}) AND m."agentId" = ?`,
      JSON.stringify(ids.map(Number)),
      agentId,
    )
    const prefix = CONTEXT_SUMMARY_PREFIX.toLowerCase()
    const out: RecalledMessage[] = []
    for (const row of rows) {
      const timestamp = row.timestamp instanceof Date ? row.timestamp : storedTime(row.timestamp)
      if (!timestamp) continue
      // Prisma's LIKE of the set filter ignores ASCII case (ILIKE on Postgres): so does this.
      const summary = row.content.slice(0, prefix.length).toLowerCase() === prefix
      if (summary !== (filter.set === 'summaries')) continue
      if (filter.sessionId && row.sessionId !== filter.sessionId) continue
      if (filter.since && timestamp < filter.since) continue
      if (filter.until && timestamp > filter.until) continue
      out.push({
        message: {
          id: String(row.id),
          sessionId: row.sessionId,
          role: row.role as Role,
          speaker: row.speaker,
          content: row.content,
          tokenCount: Number(row.tokenCount),
          isCompressed: Boolean(row.isCompressed),
          timestamp,
          metadata: parseMetadata(row.metadata),
        },
        conversationId: row.conversationId,
      })
    }
    return out
  }

  async turnsBeside(turnIds: readonly string[], reach: number): Promise<TurnBeside[]> {
    if (turnIds.length === 0) return []
    const ids = turnIds.map(Number)
    const marks = ids.map(() => '?').join(',')
    // Two seeks per turn on the (sessionId, timestamp, id) index in one statement (the dialect's:
    // Postgres needs LATERAL for the seeks, SQLite has none).
    const side = (direction: 'before' | 'after') => this.dialect.turnsBeside(marks, direction, reach)
    const rows = await readHotRows<
      { origin: number | bigint; id: number | bigint; ts: number | bigint | string; side: string }[]
    >(this.db, `${side('before')} UNION ALL ${side('after')}`, ...ids, ...ids)
    return rows.map((row) => ({
      origin: String(row.origin),
      id: String(row.id),
      timestamp: storedTime(row.ts),
      side: row.side === 'before' ? 'before' : 'after',
    }))
  }

  async turnSpans(spans: readonly TurnSpan[], limit: number): Promise<SpanTurn[]> {
    if (spans.length === 0) return []
    // Each span is an ordered, limited seek on the (sessionId, timestamp, id) index, its bounds the
    // two turns' own stored times (compared as stored, as turnsBeside does: no date format to
    // match); all of them in one statement (a read per conversation was a round trip per hit).
    const rows: { sessionId: string; id: number | bigint; ts: number | bigint | string | Date }[] = []
    const single = this.dialect.turnSpans(limit)
    if (single) {
      rows.push(
        ...(await readHotRows<typeof rows>(
          this.db,
          single,
          JSON.stringify(spans.map((s) => [s.sessionId, Number(s.fromTurnId), Number(s.toTurnId)])),
        )),
      )
    } else {
      const bound = `(SELECT b."timestamp" FROM "Message" b WHERE b."id" = ?)`
      const span = (
        i: number,
      ) => `SELECT * FROM (SELECT p."sessionId" AS "sessionId", p."id" AS id, p."timestamp" AS ts
        FROM "Message" p WHERE p."sessionId" = ? AND p."timestamp" >= ${bound} AND p."timestamp" <= ${bound}
        ORDER BY p."timestamp" ASC, p."id" ASC LIMIT ${Math.trunc(limit)}) AS span${i}`
      // SQLite takes at most 500 terms in a compound SELECT: a search over many conversations reads
      // its spans SPANS_PER_READ at a time.
      for (let from = 0; from < spans.length; from += SPANS_PER_READ) {
        const chunk = spans.slice(from, from + SPANS_PER_READ)
        rows.push(
          ...(await readHotRows<typeof rows>(
            this.db,
            chunk.map((_, i) => span(i)).join(' UNION ALL '),
            ...chunk.flatMap((s) => [s.sessionId, Number(s.fromTurnId), Number(s.toTurnId)]),
          )),
        )
      }
    }
    return rows.flatMap((row) => {
      const timestamp = row.ts instanceof Date ? row.ts : storedTime(row.ts)
      return timestamp ? [{ sessionId: row.sessionId, id: String(row.id), timestamp }] : []
    })
  }

  async sessionIdOf(agentId: string, conversationId: string): Promise<string | null> {
    const session = await this.db.session.findUnique({
      where: { agentId_conversationId: { agentId, conversationId } },
      select: { id: true },
    })
    return session?.id ?? null
  }

  async recordKnowledgeRecall(agentId: string, ids: readonly number[], at: Date): Promise<void> {
    if (ids.length === 0) return
    await this.db.knowledge.updateMany({
      where: { agentId, id: { in: [...ids] } },
      data: { useCount: { increment: 1 }, lastUsedAt: at },
    })
  }
}
