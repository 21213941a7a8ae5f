import type { MemoryType, Metadata, Role, Session, StoredMessage } from '@engram/core'
import type { EntryView } from '@engram/engine'
import type {
  MemoryEntry as MemoryEntryRow,
  Message as MessageRow,
  Session as SessionRow,
} from './generated/prisma/client.ts'

/** Stored JSON text back to an object; rows are only ever written from validated objects. */
export function parseMetadata(text: string): Metadata {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Metadata) : {}
  } catch {
    return {}
  }
}

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    scope: row.agentId,
    conversationId: row.conversationId,
    messageCount: row.messageCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

export function toMessage(row: MessageRow): StoredMessage {
  return {
    id: String(row.id),
    sessionId: row.sessionId,
    role: row.role as Role,
    speaker: row.speaker,
    content: row.content,
    tokenCount: row.tokenCount,
    isCompressed: row.isCompressed,
    timestamp: row.timestamp,
    metadata: parseMetadata(row.metadata),
  }
}

export type { EntryView }

export function toEntry(row: MemoryEntryRow): EntryView {
  return {
    id: String(row.id),
    agentId: row.agentId,
    type: row.type as MemoryType,
    role: row.role as Role,
    content: row.content,
    tokenCount: row.tokenCount,
    relevance: row.relevance,
    isCompressed: row.isCompressed,
    timestamp: row.timestamp,
    sessionId: row.sessionId,
    messageId: row.messageId == null ? null : String(row.messageId),
    metadata: parseMetadata(row.metadata),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

/** Numeric row ids travel as strings; anything else is a client error, not a crash. */
export function parseRowId(id: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(id)) return null
  const value = Number(id)
  return Number.isSafeInteger(value) ? value : null
}
