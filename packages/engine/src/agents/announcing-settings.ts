import type { MemoryItemRepository } from '../ports/memory-items.ts'
import type { AgentWrites } from './agent-writes.ts'

/**
 * The repository with its saveSettings announcing a `settings` change of the agent once saved
 * (AgentWrites; ReplicaCaches publishes it). Its other methods are the repository's own.
 */
export function announcingSettings<R extends Pick<MemoryItemRepository, 'saveSettings'>>(
  repository: R,
  writes: AgentWrites,
): R {
  const announcing = Object.create(repository) as R
  announcing.saveSettings = async (agentId, stored) => {
    await repository.saveSettings(agentId, stored)
    writes.touch(agentId, 'settings')
  }
  return announcing
}
