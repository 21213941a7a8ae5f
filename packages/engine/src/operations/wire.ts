/**
 * The engine's records as the contract's output shapes: what every door answers (dates as ISO 8601
 * strings, enums spelled as the catalog spells them, ids as strings, only the catalog's fields).
 * The object literals are typed against the catalog's outputs, so a field added to or removed from
 * the contract fails the type check here.
 */

import type { OperationName, OutputOf } from '@engram/contract'
import {
  type ContextWindowPlan,
  edgeHoldsAt,
  type OptimizerParameters,
  type Session,
  type StoredMessage,
  type SummaryStrategy,
  type TurnClassification,
} from '@engram/core'
import type { BuiltContext } from '../context/context-builder.ts'
import type { MemoryContextResult } from '../context/context-service.ts'
import type { SyncResult } from '../engine.ts'
import type { FormationActivity, FormationActivityEvent } from '../formation/formation-activity.ts'
import type { MemoryFormationSettings } from '../formation/formation-settings.ts'
import type { FormationWorkStats } from '../formation/formation-stats.ts'
import type { Neighbourhood, Paths, RelationshipView } from '../graph/graph-service.ts'
import type { MemoryWriteResult } from '../memory-items/memory-item-service.ts'
import type { ApiKeyRecord } from '../ports/api-keys.ts'
import type { BackupInfo } from '../ports/backup-store.ts'
import type { EmbeddingProgressEvent, SnapshotEvent } from '../ports/event-bus.ts'
import type { GraphEntityRecord } from '../ports/graph.ts'
import type { KnowledgeRecord } from '../ports/knowledge.ts'
import type { MemoryItemView } from '../ports/memory-items.ts'
import type { ProfileVersion } from '../ports/profiles.ts'
import type { AgentRecord } from '../ports/repositories.ts'
import type { StoredSummary } from '../ports/summaries.ts'
import { knowledgeRecordOf, type SearchHit } from '../search/search-types.ts'
import type { ExportDocument } from '../transfer/document.ts'

type Out<N extends OperationName> = OutputOf<N>

type Message = Out<'addMessage'>
type MemoryItem = Out<'memory'>
type Knowledge = Out<'storeKnowledge'>
type Snapshot = Out<'runOptimizer'>

const iso = (date: Date) => date.toISOString()
const isoOrNull = (date: Date | null | undefined) => (date ? date.toISOString() : null)
const upper = <T extends string>(value: T) => value.toUpperCase() as Uppercase<T>

export function messageOut(m: StoredMessage): Message {
  return {
    id: String(m.id),
    role: upper(m.role),
    content: m.content,
    speaker: m.speaker ?? null,
    metadata: m.metadata ?? {},
    timestamp: iso(m.timestamp),
    tokenCount: m.tokenCount,
    isCompressed: m.isCompressed,
  }
}

export function sessionOut(s: Session): Out<'sessions'>['sessions'][number] {
  return {
    id: String(s.id),
    agentId: s.scope,
    conversationId: s.conversationId,
    messageCount: s.messageCount,
    createdAt: iso(s.createdAt),
    updatedAt: iso(s.updatedAt),
  }
}

export function contextWindowOut(w: ContextWindowPlan<StoredMessage>): Out<'contextWindow'> {
  return {
    availableBudget: w.availableBudget,
    full: w.full.map(messageOut),
    compressed: w.compressed.map((c) => ({
      message: messageOut(c.message),
      content: c.content,
      tokenCount: c.tokenCount,
    })),
    dropped: w.dropped.map(messageOut),
    fullTokens: w.fullTokens,
    compressedTokens: w.compressedTokens,
    droppedTokens: w.droppedTokens,
    originalTokens: w.originalTokens,
    totalTokens: w.totalTokens,
    usageRatio: w.usageRatio,
    underPressure: w.underPressure,
    overBudget: w.overBudget,
    trimmedFullMessages: w.trimmedFullMessages,
  }
}

/** `now` decides isCurrent: valid from before now and not yet expired. */
export function memoryOut(m: MemoryItemView, now: Date): MemoryItem {
  return {
    id: String(m.id),
    agentId: m.agentId,
    userId: m.userId ?? null,
    content: m.content,
    category: upper(m.category),
    tags: [...m.tags],
    importance: m.importance,
    confidence: m.confidence,
    pinned: m.pinned,
    isCurrent: m.validFrom <= now && (m.validUntil == null || m.validUntil > now),
    accessCount: m.accessCount,
    lastAccessedAt: isoOrNull(m.lastAccessedAt),
    validFrom: iso(m.validFrom),
    validUntil: isoOrNull(m.validUntil),
    supersededById: m.supersededById == null ? null : String(m.supersededById),
    sourceConversationId: m.sourceConversationId ?? null,
    sourceMessageId: m.sourceMessageId ?? null,
    metadata: m.metadata ?? {},
    tokenCount: m.tokenCount,
    createdAt: iso(m.createdAt),
    updatedAt: iso(m.updatedAt),
  }
}

export function memoryWriteOut(r: MemoryWriteResult, now: Date): Out<'createMemory'> {
  return {
    outcome: r.outcome,
    memory: memoryOut(r.item, now),
    duplicateOf: r.duplicateOf ? memoryOut(r.duplicateOf, now) : null,
    superseded: r.superseded ? memoryOut(r.superseded, now) : null,
    evicted: r.evicted.map((m) => memoryOut(m, now)),
    layer: r.layer ? upper(r.layer) : null,
    similarity: r.similarity ?? null,
  }
}

export function knowledgeOut(k: KnowledgeRecord): Knowledge {
  return {
    id: String(k.id),
    agentId: k.agentId,
    category: upper(k.category),
    key: k.key,
    value: k.value,
    confidence: k.confidence,
    useCount: k.useCount,
    storeCount: k.storeCount,
    lastUsedAt: isoOrNull(k.lastUsedAt),
    createdAt: iso(k.createdAt),
    updatedAt: iso(k.updatedAt),
  }
}

export function searchOut(result: { hits: SearchHit[]; mmrLambda: number }, now: Date): Out<'search'> {
  return {
    mmrLambda: result.mmrLambda,
    hits: result.hits.map((h) => ({
      id: String(h.id),
      rank: h.rank,
      scope: h.scope,
      text: h.text,
      score: h.score,
      relevance: h.relevance,
      mmrScore: h.mmrScore,
      timestamp: iso(h.timestamp),
      conversationId: h.conversationId ?? null,
      components: {
        bm25: h.components.bm25,
        vector: h.components.vector,
        recency: h.components.recency,
        importance: h.components.importance,
        confidence: h.components.confidence,
        decay: h.components.decay,
        context: h.components.context,
        episode: h.components.episode,
        time: h.components.time,
        speaker: h.components.speaker,
        feedback: h.components.feedback,
        cooccurrence: h.components.cooccurrence,
        graph: h.components.graph,
      },
      message: h.message ? messageOut(h.message) : null,
      memory: h.memory ? memoryOut(h.memory, now) : null,
      knowledge: h.knowledge ? knowledgeOut(knowledgeRecordOf(h.knowledge)) : null,
      entity: h.entity ? graphEntityOut(h.entity) : null,
      relationship: h.relationship ? graphRelationshipOut(h.relationship, now) : null,
      poolId: h.poolId ?? null,
    })),
  }
}

export function memoryContextOut(c: MemoryContextResult): Out<'memoryContext'> {
  return {
    text: c.text,
    totalTokens: c.totalTokens,
    budgetTokens: c.budgetTokens,
    cached: c.cached,
    generatedAt: iso(c.generatedAt),
    sections: c.sections.map((s) => ({
      section: upper(s.name),
      title: s.title,
      budgetTokens: s.budgetTokens ?? null,
      usedTokens: s.usedTokens,
      includedCount: s.included.length,
      omittedCount: s.omitted.length,
      included: [...s.included],
      omitted: [...s.omitted],
    })),
    built: c.built ? builtContextOut(c.built) : null,
  }
}

/** Spec 002's built prompt (issue 17) in the catalog's shape: roles and kinds upper-cased. */
function builtContextOut(b: BuiltContext): NonNullable<Out<'memoryContext'>['built']> {
  return {
    messages: b.messages.map((m) => ({
      role: upper(m.role),
      content: m.content,
      kind: upper(m.kind),
      sourceId: m.sourceId,
      tokenCount: m.tokenCount,
    })),
    budget: { ...b.budget },
    tokenCount: b.tokenCount,
    memories: {
      included: [...b.memories.included],
      overflowed: [...b.memories.overflowed],
      summarized: [...b.memories.summarized],
    },
  }
}

export function optimizerStatusOut(s: {
  totalOptimizations: number
  totalTokensSaved: number
  avgSavingsPerRun: number
  currentParameters: OptimizerParameters
  lastRunAt: Date | null
  intervalMs: number
}): Out<'optimizerStatus'> {
  return {
    totalOptimizations: s.totalOptimizations,
    totalTokensSaved: s.totalTokensSaved,
    avgSavingsPerRun: s.avgSavingsPerRun,
    // Unrounded: 0.36 tokens a run stays 0.36 (avgSavingsPerRun, spec 000's figure, says 0).
    averageTokensSavedPerRun: s.totalOptimizations === 0 ? 0 : s.totalTokensSaved / s.totalOptimizations,
    currentParameters: {
      compressionTrigger: s.currentParameters.compressionTrigger,
      fullMessageWindow: s.currentParameters.fullMessageWindow,
      minRelevance: s.currentParameters.minRelevance,
      targetUsageRatio: s.currentParameters.targetUsageRatio,
    },
    lastRunAt: isoOrNull(s.lastRunAt),
    intervalMs: s.intervalMs,
  }
}

export function snapshotOut(event: SnapshotEvent): Snapshot {
  const s = event.snapshot
  return {
    id: String(event.id),
    agentId: event.agentId,
    tokensBefore: s.tokensBefore,
    tokensAfter: s.tokensAfter,
    tokensSaved: s.tokensBefore - s.tokensAfter,
    entriesCompressed: s.entriesCompressed,
    entriesDropped: s.entriesDropped,
    entriesPromoted: s.entriesPromoted,
    usageRatio: s.usageRatio,
    compressionTriggerRatio: s.compressionTriggerRatio,
    fullMessageWindow: s.fullMessageWindow,
    minRelevanceScore: s.minRelevanceScore,
    timestamp: iso(s.timestamp),
  }
}

export function exportOut(document: ExportDocument, exportedAt: Date): Out<'exportMemory'> {
  return {
    // As JSON: the document travels (and is imported back) as plain values.
    document: JSON.parse(JSON.stringify(document)) as Record<string, unknown>,
    exportedAt: iso(exportedAt),
    sessions: document.sessions.length,
    messages: document.sessions.reduce((n, s) => n + s.messages.length, 0),
    memories: document.memories.length,
    knowledge: document.knowledge.length,
    vectors: document.vectors.length,
  }
}

export function backupOut(b: BackupInfo): Out<'backupDatabase'> {
  return { name: b.name, bytes: b.bytes, createdAt: iso(b.createdAt) }
}

export function apiKeyOut(k: ApiKeyRecord): Out<'revokeApiKey'> {
  return {
    id: String(k.id),
    agentId: k.agentId ?? null,
    role: k.role,
    label: k.label,
    keyPrefix: k.keyPrefix,
    createdAt: iso(k.createdAt),
    revokedAt: isoOrNull(k.revokedAt),
  }
}

export function agentOut(a: AgentRecord): Out<'createAgent'> {
  return { id: a.id, name: a.name, createdAt: iso(a.createdAt) }
}

export function embeddingProgressOut(p: EmbeddingProgressEvent): Out<'watchEmbeddingProgress'> {
  return {
    state: upper(p.state),
    model: p.model,
    total: p.total,
    done: p.done,
    failed: p.failed,
    error: p.error ?? null,
    startedAt: isoOrNull(p.startedAt),
    finishedAt: isoOrNull(p.finishedAt),
  }
}

export function syncMemoryOut(r: SyncResult, now: Date): Out<'syncMemory'> {
  return {
    conversations: r.conversations,
    turns: r.turns,
    stored: r.stored.map((m) => memoryOut(m, now)),
    duplicates: r.duplicates,
    superseded: r.superseded,
    rejected: r.rejected,
    extractors: r.extractors.map(
      (e) => upper(e).replace('-', '_') as Out<'syncMemory'>['extractors'][number],
    ),
    summaries: r.summaries.length,
    profileVersions: r.profileVersions.length,
  }
}

export function classificationOut(c: TurnClassification): Out<'classify'> {
  return {
    tier: upper(c.tier),
    category: upper(c.category),
    memoryType: upper(c.memoryType),
    importance: c.importance,
    reasons: [...c.reasons],
  }
}

export function formationSettingsOut(s: MemoryFormationSettings): Out<'memoryFormationSettings'> {
  return {
    enabled: s.enabled,
    extraction: { extractor: upper(s.extraction.extractor), model: s.extraction.model },
    summaries: {
      ...s.summaries,
      strategy: summaryStrategyOut(s.summaries.strategy),
    },
    profile: { ...s.profile },
  }
}

type WireStrategy = Out<'memoryFormationSettings'>['summaries']['strategy']

/** Core's strategy names as the catalog spells them (map-reduce is MAP_REDUCE), and back. */
export function summaryStrategyOut(strategy: SummaryStrategy): WireStrategy {
  return upper(strategy).replace('-', '_') as WireStrategy
}
export function summaryStrategyIn(strategy: WireStrategy): SummaryStrategy {
  return strategy.toLowerCase().replace('_', '-') as SummaryStrategy
}

export function summaryOut(s: StoredSummary): Out<'summaries'>[number] {
  return {
    id: s.id,
    agentId: s.agentId,
    conversationId: s.conversationId,
    content: s.content,
    strategy: summaryStrategyOut(s.strategy),
    writer: upper(s.writer),
    trigger: upper(s.trigger),
    firstMessageId: s.firstMessageId,
    lastMessageId: s.lastMessageId,
    messageCount: s.messageCount,
    tokenCount: s.tokenCount,
    createdAt: s.createdAt.toISOString(),
  }
}

export function profileVersionOut(v: ProfileVersion): Out<'regenerateProfile'> {
  return {
    id: v.id,
    agentId: v.agentId,
    // The engine keys the agent's memories that name no user as '': the wire says null.
    userId: v.userId === '' ? null : v.userId,
    version: v.version,
    content: v.content,
    tokenCount: v.tokenCount,
    writer: upper(v.writer),
    trigger: upper(v.trigger),
    sourceMemoryIds: [...v.sourceMemoryIds],
    overrideIds: [...v.overrideIds],
    createdAt: v.createdAt.toISOString(),
  }
}

/** The circuit's states as the catalog spells them (half-open is HALF_OPEN). */
const circuitStateOut = (state: FormationActivity['circuitState']) =>
  state === null ? null : (upper(state).replace('-', '_') as 'CLOSED' | 'OPEN' | 'HALF_OPEN')

function workStatsOut(w: FormationWorkStats): Out<'formationActivity'>['work'][number] {
  return {
    kind: upper(w.kind),
    calls: w.calls,
    successes: w.successes,
    failures: w.failures,
    successRate: w.calls > 0 ? w.successes / w.calls : null,
    totalDurationMs: w.totalDurationMs,
    averageDurationMs: w.averageDurationMs,
    lastRunAt: isoOrNull(w.lastRunAt),
    lastFailure: w.lastFailure ? { reason: w.lastFailure.reason, at: iso(w.lastFailure.at) } : null,
  }
}

export function formationActivityOut(a: FormationActivity): Out<'formationActivity'> {
  return {
    agentId: a.agentId,
    extractor: upper(a.extractor),
    circuitState: circuitStateOut(a.circuitState),
    work: a.work.map(workStatsOut),
    queue: a.queue.map((q) => ({
      kind: upper(q.kind),
      jobKind: q.jobKind,
      pending: q.pending,
      running: q.running,
      failed: q.failed,
    })),
  }
}

export function formationActivityEventOut(e: FormationActivityEvent): Out<'formationActivityEvents'> {
  return {
    agentId: e.agentId,
    kind: upper(e.kind),
    outcome: upper(e.outcome),
    reason: e.reason,
    durationMs: e.durationMs,
    at: iso(e.at),
    queueDepth: e.queueDepth,
  }
}

// --- knowledge graph (issue 15) ----------------------------------------------------------------

type GraphEntityOut = Out<'graphEntity'>
type GraphRelationshipOut = Out<'graphRelationship'>

export function graphEntityOut(e: GraphEntityRecord): GraphEntityOut {
  return {
    id: e.id,
    agentId: e.agentId,
    userId: e.userId,
    type: e.type,
    name: e.name,
    aliases: [...e.aliases],
    summary: e.summary,
    mentionCount: e.mentionCount,
    origin: e.origin,
    firstSeenAt: iso(e.firstSeenAt),
    lastSeenAt: iso(e.lastSeenAt),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  }
}

const entityRefOut = (e: GraphEntityRecord) => ({ id: e.id, name: e.name, type: e.type })

/** `now` decides `current`: the edge holds now (valid now and not retired). */
export function graphRelationshipOut(v: RelationshipView, now: Date): GraphRelationshipOut {
  const r = v.relationship
  return {
    id: r.id,
    agentId: r.agentId,
    userId: r.userId,
    source: entityRefOut(v.source),
    relation: r.relation,
    target: entityRefOut(v.target),
    confidence: r.confidence,
    validFrom: isoOrNull(r.validFrom),
    validUntil: isoOrNull(r.validUntil),
    learntAt: iso(r.learntAt),
    retiredAt: isoOrNull(r.retiredAt),
    retiredReason: r.retiredReason,
    supersededById: r.supersededById,
    current: edgeHoldsAt(r, { asOf: now, knownAt: now }),
    origin: r.origin,
    sources: v.sources.map((s) => ({
      memoryId: s.memoryId,
      messageId: s.messageId,
      conversationId: s.conversationId,
      excerpt: s.excerpt,
      at: isoOrNull(s.at),
    })),
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  }
}

export function graphNeighbourhoodOut(n: Neighbourhood, now: Date): Out<'graphNeighbourhood'> {
  return {
    center: n.center && graphEntityOut(n.center),
    nodes: n.nodes.map((node) => ({ entity: graphEntityOut(node.entity), depth: node.depth })),
    relationships: n.relationships.map((r) => graphRelationshipOut(r, now)),
    truncated: n.truncated,
    truncation: n.truncation,
    asOf: iso(n.time.asOf),
    knownAt: iso(n.time.knownAt),
  }
}

export function graphPathsOut(p: Paths, now: Date): Out<'graphPaths'> {
  return {
    from: p.from && graphEntityOut(p.from),
    to: p.to && graphEntityOut(p.to),
    paths: p.paths.map((path) => ({
      entities: path.entities.map(entityRefOut),
      relationships: path.relationships.map((r) => graphRelationshipOut(r, now)),
      length: path.relationships.length,
    })),
    truncated: p.truncated,
    truncation: p.truncation,
  }
}
