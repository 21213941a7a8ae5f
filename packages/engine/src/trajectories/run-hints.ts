import type { Clock } from '@engram/core'
import type { HintRecord, TrajectoryMemoryRepository } from '../ports/trajectories.ts'
import type { RunMemory } from './run-memory.ts'

/**
 * Cross-domain optimisation hints (spec 004's hints.json) of a memory scope: listed oldest first,
 * added, rewritten, deleted; their text passes the agent's sensitive-data policy.
 */
export class RunHints {
  private readonly repository: TrajectoryMemoryRepository
  private readonly clock: Clock
  private readonly memory: Pick<RunMemory, 'check' | 'guard' | 'limits'>

  constructor(deps: {
    repository: TrajectoryMemoryRepository
    clock: Clock
    memory: Pick<RunMemory, 'check' | 'guard' | 'limits'>
  }) {
    this.repository = deps.repository
    this.clock = deps.clock
    this.memory = deps.memory
  }

  async list(agentId: string, scope?: string | null): Promise<HintRecord[]> {
    const check = this.memory.check()
    const read = check.scopeOrDefault(scope)
    check.done()
    return this.repository.listHints(agentId, read)
  }

  async add(agentId: string, input: { scope?: string | null; text: string }): Promise<HintRecord> {
    const check = this.memory.check()
    const scope = check.scopeOrDefault(input.scope)
    check.text('text', input.text, this.memory.limits.maxHintChars)
    check.done()
    const { text } = await this.memory.guard(agentId, { text: input.text })
    const now = this.clock.now()
    return this.repository.addHint(agentId, {
      scope,
      text: text as string,
      createdAt: now,
      updatedAt: now,
      extra: null,
    })
  }

  /** NOT_FOUND when the agent has no such hint. */
  async update(agentId: string, id: string, text: string): Promise<HintRecord> {
    const check = this.memory.check()
    check.text('text', text, this.memory.limits.maxHintChars)
    check.done()
    const guarded = (await this.memory.guard(agentId, { text })).text as string
    return this.repository.updateHint(agentId, id, { text: guarded, updatedAt: this.clock.now() })
  }

  delete(agentId: string, id: string): Promise<boolean> {
    return this.repository.deleteHint(agentId, id)
  }
}
