import type { ContextMemory, ContextSources, ContextTurn } from '../ports/context-sources.ts'

/**
 * memoryContext's sources in the in-memory adapter, which holds no memory items or messages yet:
 * every section reads empty and no conversation exists.
 */
export class InMemoryContextSources implements ContextSources {
  async memories(): Promise<ContextMemory[]> {
    return []
  }

  async summaries(): Promise<ContextTurn[]> {
    return []
  }

  async recentTurns(): Promise<ContextTurn[] | null> {
    return null
  }
}
