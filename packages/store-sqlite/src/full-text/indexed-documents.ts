import { isSummaryText } from '@engram/core'
import {
  type DocumentCursor,
  type FullTextCollection,
  INDEXED_DOCUMENT_BATCH,
  type IndexedDocumentBatch,
} from '@engram/engine'
import { storedTime } from '../recall/sqlite-recall-sources.ts'

/**
 * Where each collection's documents are and which columns FTS5 indexes (the migrations' column
 * order); `edited` when rows change in place (their `updatedAt` moves), so a catch-up re-reads them.
 */
export const INDEXED_SOURCES: Record<
  FullTextCollection,
  { table: string; columns: readonly string[]; edited: boolean; session: boolean }
> = {
  messages: { table: 'Message', columns: ['content'], edited: false, session: true },
  memories: { table: 'MemoryItem', columns: ['content', 'tags'], edited: true, session: false },
  knowledge: { table: 'Knowledge', columns: ['key', 'value'], edited: true, session: false },
}

/** The stream's position: the newest id read and the latest edit time seen (raw, as stored). */
interface Position {
  id: number
  edited: string | number | null
}

export function readCursor(cursor: DocumentCursor | null): Position | null {
  if (cursor === null) return null
  const parsed = JSON.parse(cursor) as Position
  return { id: Number(parsed.id), edited: parsed.edited ?? null }
}

export interface IndexedRow {
  id: number | bigint
  sessionId?: string | null
  /** A turn's stored time (messages: the collection with sessions), as the driver returns it. */
  storedAt?: string | number | bigint | Date | null
  editedAt?: string | number | null
  [column: string]: unknown
}

/** One SQL dialect's reads: rows of the agent after an id, or edited since a time at or below an id. */
export interface IndexedRowReader {
  newer(afterId: number, limit: number): Promise<IndexedRow[]>
  edited(since: string | number, throughId: number, afterId: number, limit: number): Promise<IndexedRow[]>
}

/**
 * The agent's documents written after the cursor (every one without), then those edited in place
 * since it (edit times at or after the cursor's, so an edit in the same millisecond is not lost:
 * re-reading a document is harmless), tokenised in batches by FTS5's own tokenizer.
 */
export async function* indexedDocumentBatches(
  collection: FullTextCollection,
  cursor: DocumentCursor | null,
  reader: IndexedRowReader,
  tokenize: (documents: string[][]) => string[][],
): AsyncIterable<IndexedDocumentBatch> {
  const source = INDEXED_SOURCES[collection]
  const start = readCursor(cursor) ?? { id: 0, edited: null }
  const position: Position = { ...start }
  const toBatch = (rows: IndexedRow[]): IndexedDocumentBatch => {
    const terms = tokenize(rows.map((row) => source.columns.map((column) => String(row[column] ?? ''))))
    for (const row of rows) {
      position.id = Math.max(position.id, Number(row.id))
      const edited = row.editedAt ?? null
      if (edited !== null && (position.edited === null || edited > position.edited)) position.edited = edited
    }
    return {
      documents: rows.map((row, i) => ({
        id: String(row.id),
        sessionId: source.session ? (row.sessionId ?? null) : null,
        time: source.session ? timeOf(row.storedAt) : null,
        summary: collection === 'messages' && isSummaryText(String(row.content ?? '')),
        // Both stores select the speaker with the session (INDEXED_SOURCES' `session`).
        ...(source.session ? { speaker: typeof row.speaker === 'string' ? row.speaker : null } : {}),
        terms: terms[i] as string[],
      })),
      cursor: JSON.stringify(position),
    }
  }
  let yielded = false
  for (let after = start.id; ; ) {
    const rows = await reader.newer(after, INDEXED_DOCUMENT_BATCH)
    if (rows.length === 0) break
    yielded = true
    yield toBatch(rows)
    after = Number((rows[rows.length - 1] as IndexedRow).id)
    if (rows.length < INDEXED_DOCUMENT_BATCH) break
  }
  if (source.edited && start.edited !== null) {
    for (let after = 0; ; ) {
      const rows = await reader.edited(start.edited, start.id, after, INDEXED_DOCUMENT_BATCH)
      if (rows.length === 0) break
      yielded = true
      yield toBatch(rows)
      after = Number((rows[rows.length - 1] as IndexedRow).id)
      if (rows.length < INDEXED_DOCUMENT_BATCH) break
    }
  }
  if (!yielded) yield { documents: [], cursor: JSON.stringify(position) }
}

/** A stored time as epoch ms (SQLite's text or number, Postgres' Date); null when unreadable. */
function timeOf(value: IndexedRow['storedAt']): number | null {
  if (value === null || value === undefined) return null
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime()
  return storedTime(value)?.getTime() ?? null
}
