import { NotFoundError } from '@engram/core'
import type {
  AgentArchiveRepository,
  ArchivedGraph,
  ArchivedKnowledge,
  ArchivedMemory,
  ArchivedPrivacyPolicy,
  ArchivedSession,
  ArchivedSnapshot,
  NewArchivedVector,
  StoredMemorySettings,
} from '../ports/agent-archive.ts'
import type { AgentRecord, EntryVector, EntryView } from '../ports/repositories.ts'
import type { TrajectoryMemorySnapshot } from '../ports/trajectories.ts'

/** What one agent remembers beyond its entries and parameters (those have their own repositories). */
export interface AgentMemoryState {
  settings: StoredMemorySettings
  privacyPolicy: ArchivedPrivacyPolicy
  memories: ArchivedMemory[]
  knowledge: ArchivedKnowledge[]
  sessions: ArchivedSession[]
  vectors: NewArchivedVector[]
  snapshots: ArchivedSnapshot[]
  /** The knowledge graph as an import wrote it (the in-memory graph repository keeps its own). */
  graph: ArchivedGraph
  /** Trajectory memory as an import wrote it (the in-memory trajectory repository keeps its own). */
  trajectories: TrajectoryMemorySnapshot
}

const emptyTrajectoryMemory = (): TrajectoryMemorySnapshot => ({
  runs: [],
  runSessions: [],
  trajectories: [],
  facts: [],
  selectors: [],
  hints: [],
})

/** The part of the in-memory repositories' state the archive reads and writes. */
export interface ArchiveState {
  agents: Map<string, AgentRecord>
  entries: Map<string, EntryView>
  vectors: Map<string, EntryVector>
  parameters: Map<string, Map<string, number>>
  archives: Map<string, AgentMemoryState>
  nextArchiveId: number
}

const byTime = (a: Date, b: Date) => a.getTime() - b.getTime()
const byNumericId = (a: { id: string }, b: { id: string }) => Number(a.id) - Number(b.id)

/**
 * The archive over the in-memory state. It lives in that state (not beside it) so the unit of
 * work's copy-and-restore rolls a failed import back like every other write.
 */
export function inMemoryArchive(state: () => ArchiveState): AgentArchiveRepository {
  const memoryOf = (agentId: string): AgentMemoryState => {
    const s = state()
    if (!s.agents.has(agentId)) throw new NotFoundError('Agent', agentId)
    let memory = s.archives.get(agentId)
    if (!memory) {
      memory = {
        settings: {},
        privacyPolicy: { mode: 'redact', patterns: [] },
        memories: [],
        knowledge: [],
        sessions: [],
        vectors: [],
        snapshots: [],
        graph: { entities: [], relationships: [], evidence: [] },
        trajectories: emptyTrajectoryMemory(),
      }
      s.archives.set(agentId, memory)
    }
    return memory
  }
  const nextId = () => String(state().nextArchiveId++)
  return {
    read: async (agentId, { vectorModel, includeSnapshots }) => {
      const agent = state().agents.get(agentId)
      if (!agent) return null
      const memory = structuredClone(memoryOf(agentId))
      const parameters = state().parameters.get(agentId) ?? new Map<string, number>()
      return {
        agent: {
          id: agent.id,
          name: agent.name,
          memorySettings: memory.settings,
          privacyPolicy: memory.privacyPolicy,
        },
        memories: memory.memories.sort((a, b) => byTime(a.createdAt, b.createdAt) || byNumericId(a, b)),
        knowledge: memory.knowledge.sort((a, b) => byTime(a.createdAt, b.createdAt) || byNumericId(a, b)),
        sessions: memory.sessions
          .sort(
            (a, b) =>
              byTime(a.createdAt, b.createdAt) ||
              (a.conversationId < b.conversationId ? -1 : a.conversationId > b.conversationId ? 1 : 0),
          )
          .map((s) => ({
            ...s,
            messages: s.messages.sort((a, b) => byTime(a.timestamp, b.timestamp) || byNumericId(a, b)),
          })),
        vectors: memory.vectors
          .filter((v) => v.model === vectorModel)
          .map((v) => ({ kind: v.kind, ownerId: v.ownerId, dimensions: v.dimensions, vector: v.vector })),
        parameters: [...parameters]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, value]) => ({ key, value })),
        snapshots: includeSnapshots
          ? memory.snapshots.sort((a, b) => byTime(a.timestamp, b.timestamp))
          : null,
        graph: {
          entities: memory.graph.entities.sort(
            (a, b) => byTime(a.createdAt, b.createdAt) || byNumericId(a, b),
          ),
          relationships: memory.graph.relationships.sort(
            (a, b) => byTime(a.createdAt, b.createdAt) || byNumericId(a, b),
          ),
          evidence: memory.graph.evidence,
        },
        trajectories: memory.trajectories,
      }
    },
    clear: async (agentId) => {
      const s = state()
      const memory = s.archives.get(agentId)
      const counts = {
        memories: memory?.memories.length ?? 0,
        knowledge: memory?.knowledge.length ?? 0,
        sessions: memory?.sessions.length ?? 0,
      }
      if (memory)
        Object.assign(memory, {
          memories: [],
          knowledge: [],
          sessions: [],
          vectors: [],
          snapshots: [],
          graph: { entities: [], relationships: [], evidence: [] },
          trajectories: emptyTrajectoryMemory(),
        })
      for (const [id, entry] of s.entries)
        if (entry.agentId === agentId) {
          s.entries.delete(id)
          s.vectors.delete(id)
        }
      s.parameters.delete(agentId)
      return counts
    },
    agentIds: async () => [...state().agents.keys()],
    setMemorySettings: async (agentId, settings) => {
      memoryOf(agentId).settings = structuredClone(settings)
    },
    setPrivacyPolicy: async (agentId, policy) => {
      memoryOf(agentId).privacyPolicy = structuredClone(policy)
    },
    existingConversation: async (agentId, conversationIds) => {
      const held = new Set(
        state()
          .archives.get(agentId)
          ?.sessions.map((s) => s.conversationId),
      )
      return conversationIds.find((id) => held.has(id)) ?? null
    },
    addMemories: async (agentId, memories) => {
      const memory = memoryOf(agentId)
      return memories.map(({ contentHash: _hash, tokenCount: _tokens, ...m }) => {
        const id = nextId()
        memory.memories.push({ ...structuredClone(m), id, supersededById: null })
        return id
      })
    },
    linkSupersessions: async (agentId, links) => {
      const memory = memoryOf(agentId)
      for (const link of links) {
        const row = memory.memories.find((m) => m.id === link.id)
        if (!row) throw new NotFoundError('MemoryItem', link.id)
        row.supersededById = link.supersededById
      }
    },
    putKnowledge: async (agentId, facts) => {
      const memory = memoryOf(agentId)
      return facts.map((fact) => {
        const existing = memory.knowledge.find((k) => k.category === fact.category && k.key === fact.key)
        if (existing) {
          Object.assign(existing, structuredClone(fact))
          return existing.id
        }
        const id = nextId()
        memory.knowledge.push({ ...structuredClone(fact), id })
        return id
      })
    },
    removeVectors: async (agentId, kind, ownerIds) => {
      const memory = memoryOf(agentId)
      const owners = new Set(ownerIds)
      memory.vectors = memory.vectors.filter((v) => v.kind !== kind || !owners.has(v.ownerId))
    },
    addConversation: async (agentId, session) => {
      const memory = memoryOf(agentId)
      if (memory.sessions.some((s) => s.conversationId === session.conversationId))
        // The SQLite schema's unique (agent, conversation) key refuses a second one likewise.
        throw new Error(`conversation ${session.conversationId} exists`)
      const messages = session.messages.map((m) => ({ ...structuredClone(m), id: nextId() }))
      memory.sessions.push({ ...structuredClone(session), messages })
      return messages.map((m) => m.id)
    },
    addSnapshots: async (agentId, snapshots) => {
      memoryOf(agentId).snapshots.push(...structuredClone([...snapshots]))
    },
    addTrajectoryMemory: async (agentId, memory) => {
      const held = memoryOf(agentId).trajectories
      // Records with the same id are replaced, as the trajectory repository's restore does.
      const put = <T extends { id: string }>(list: T[], added: readonly T[]) => {
        const ids = new Set(added.map((r) => r.id))
        return [
          ...list.filter((r) => !ids.has(r.id)),
          ...structuredClone(added).map((r) => ({ ...r, agentId })),
        ]
      }
      memoryOf(agentId).trajectories = {
        runs: put(held.runs, memory.runs),
        runSessions: put(held.runSessions, memory.runSessions),
        trajectories: put(held.trajectories, memory.trajectories),
        facts: put(held.facts, memory.facts),
        selectors: put(held.selectors, memory.selectors),
        hints: put(held.hints, memory.hints),
      }
    },
    addGraph: async (agentId, graph) => {
      const held = memoryOf(agentId).graph
      const ids = new Map<string, string>()
      const known = (key: string | null, what: string) => {
        if (key == null) return null
        const id = ids.get(`${what}:${key}`)
        if (id == null) throw new Error(`the graph names no ${what} ${key}`)
        return id
      }
      for (const e of graph.entities) {
        ids.set(`entity:${e.id}`, nextId())
        held.entities.push({ ...structuredClone(e), id: known(e.id, 'entity') as string })
      }
      for (const r of graph.relationships) ids.set(`relationship:${r.id}`, nextId())
      for (const r of graph.relationships)
        held.relationships.push({
          ...structuredClone(r),
          id: known(r.id, 'relationship') as string,
          sourceId: known(r.sourceId, 'entity') as string,
          targetId: known(r.targetId, 'entity') as string,
          supersededById: known(r.supersededById, 'relationship'),
        })
      for (const ev of graph.evidence)
        held.evidence.push({
          ...structuredClone(ev),
          entityId: known(ev.entityId, 'entity'),
          relationshipId: known(ev.relationshipId, 'relationship'),
        })
    },
    addVectors: async (agentId, vectors) => {
      const memory = memoryOf(agentId)
      for (const v of vectors) {
        if (
          memory.vectors.some(
            (held) => held.kind === v.kind && held.ownerId === v.ownerId && held.model === v.model,
          )
        )
          // One vector per (kind, owner, model), as the Embedding table's key has it.
          throw new Error(`a ${v.kind} vector of ${v.ownerId} exists`)
        memory.vectors.push({ ...v, vector: v.vector.slice() })
      }
    },
  }
}
