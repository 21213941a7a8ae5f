import type { AgentWrites } from '../agents/agent-writes.ts'
import type { RecallSources } from '../ports/recall-sources.ts'

/** Participants (speakers and memory users) recognised in queries, per agent, at most. */
const MAX_PARTICIPANTS = 1_000

/** An agent's figures the query signals need, kept per write version. */
export interface AgentFacts {
  version: string
  participants: string[]
  newest: Date | null
  topMessageId: number
  topMemoryId: number
}

/** Each agent's participants and newest message, kept between searches and extended from new rows. */
export class AgentFactsCache {
  private readonly facts = new Map<string, AgentFacts>()

  constructor(
    private readonly recall: RecallSources,
    private readonly writes: AgentWrites,
  ) {}

  /** Whether the agent's figures are held (the deletion report counts them). */
  holds(agentId: string): boolean {
    return this.facts.has(agentId)
  }

  /** Forgets one agent's figures (its rows were deleted or changed in place). */
  forget(agentId: string): void {
    this.facts.delete(agentId)
  }

  /** Forgets every agent's figures (rows deleted in bulk). */
  clear(): void {
    this.facts.clear()
  }

  /**
   * The agent's participants (speakers of its messages, users of its memories) and its newest
   * message time. Recomputed only from the rows added since the last look (a seek on the agent's
   * ids), so a search after each new message does not rescan the agent.
   */
  async of(agentId: string): Promise<AgentFacts> {
    const version = this.writes.version(agentId)
    const known = this.facts.get(agentId)
    if (known && known.version === version) return known
    const from = known ?? { participants: [], newest: null, topMessageId: 0, topMemoryId: 0 }
    const messages = await this.recall.speakersSince(agentId, from.topMessageId)
    const users = await this.recall.memoryUsersSince(agentId, from.topMemoryId)
    const participants = new Set(from.participants)
    let newest = from.newest
    let topMessageId = from.topMessageId
    let topMemoryId = from.topMemoryId
    for (const row of messages) {
      if (row.speaker && participants.size < MAX_PARTICIPANTS) participants.add(row.speaker)
      const time = row.newest
      if (time && (!newest || time > newest)) newest = time
      topMessageId = Math.max(topMessageId, row.topMessageId)
    }
    for (const row of users) {
      if (row.userId && participants.size < MAX_PARTICIPANTS) participants.add(row.userId)
      topMemoryId = Math.max(topMemoryId, row.topMemoryId)
    }
    const facts = { version, participants: [...participants], newest, topMessageId, topMemoryId }
    this.facts.set(agentId, facts)
    return facts
  }
}
