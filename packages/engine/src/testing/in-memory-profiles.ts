import type { NewProfileVersion, ProfileRepository, ProfileVersion } from '../ports/profiles.ts'

/** Profile versions in memory; ids count up like the SQLite rows'. */
export class InMemoryProfiles implements ProfileRepository {
  private readonly rows: ProfileVersion[] = []
  private nextId = 1

  async insert(version: NewProfileVersion): Promise<ProfileVersion> {
    const highest = this.of(version.agentId, version.userId).reduce(
      (max, row) => Math.max(max, row.version),
      0,
    )
    const row = { ...version, id: String(this.nextId++), version: highest + 1 }
    this.rows.push(row)
    return copy(row)
  }

  async current(agentId: string, userId: string): Promise<ProfileVersion | null> {
    const [newest] = this.of(agentId, userId)
    return newest ? copy(newest) : null
  }

  async list(
    agentId: string,
    userId: string,
    page: { offset: number; limit: number },
  ): Promise<ProfileVersion[]> {
    return this.of(agentId, userId)
      .slice(page.offset, page.offset + page.limit)
      .map(copy)
  }

  async count(agentId: string, userId: string): Promise<number> {
    return this.of(agentId, userId).length
  }

  async find(agentId: string, userId: string, version: number): Promise<ProfileVersion | null> {
    const row = this.of(agentId, userId).find((r) => r.version === version)
    return row ? copy(row) : null
  }

  async deleteBuiltFrom(agentId: string, memoryIds: readonly string[]): Promise<string[]> {
    const ids = new Set(memoryIds)
    const users = new Set<string>()
    for (let i = this.rows.length - 1; i >= 0; i--) {
      const row = this.rows[i]
      if (
        row &&
        row.agentId === agentId &&
        [...row.sourceMemoryIds, ...row.overrideIds].some((id) => ids.has(id))
      ) {
        this.rows.splice(i, 1)
        users.add(row.userId)
      }
    }
    return [...users].sort()
  }

  async countAll(agentId: string): Promise<number> {
    return this.rows.filter((row) => row.agentId === agentId).length
  }

  forgetAgent(agentId: string): void {
    for (let i = this.rows.length - 1; i >= 0; i--)
      if (this.rows[i]?.agentId === agentId) this.rows.splice(i, 1)
  }

  /** Newest version first. */
  private of(agentId: string, userId: string): ProfileVersion[] {
    return this.rows
      .filter((row) => row.agentId === agentId && row.userId === userId)
      .sort((a, b) => b.version - a.version)
  }
}

function copy(row: ProfileVersion): ProfileVersion {
  return { ...row, sourceMemoryIds: [...row.sourceMemoryIds], overrideIds: [...row.overrideIds] }
}
