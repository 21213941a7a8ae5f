/** Who wrote a profile version: the language model, or the offline extractive builder. */
export type ProfileWriter = 'llm' | 'extractive'

/** Why a version was built. */
export type ProfileTrigger = 'contributions' | 'overrides' | 'memory_deleted' | 'request'

/** One version of the generated profile of an agent's user (issue 13 §4, spec 003 layer 1). */
export interface NewProfileVersion {
  agentId: string
  /** The user the profile is about; '' for the agent's memories that name no user. */
  userId: string
  content: string
  tokenCount: number
  writer: ProfileWriter
  trigger: ProfileTrigger
  /** The memories it was built from: deleting one of them removes this version and rebuilds. */
  sourceMemoryIds: string[]
  /** The pinned memories (user overrides) it shows first and whole. */
  overrideIds: string[]
  createdAt: Date
}

export interface ProfileVersion extends NewProfileVersion {
  id: string
  /** 1, 2, 3… per (agent, user), assigned by the repository. */
  version: number
}

/** Every version is kept (newest is current) until its agent, or a memory it was built from, is deleted. */
export interface ProfileRepository {
  /** Appends the next version (the highest so far + 1) in one transaction. */
  insert(version: NewProfileVersion): Promise<ProfileVersion>
  current(agentId: string, userId: string): Promise<ProfileVersion | null>
  /** Newest first. */
  list(agentId: string, userId: string, page: { offset: number; limit: number }): Promise<ProfileVersion[]>
  count(agentId: string, userId: string): Promise<number>
  find(agentId: string, userId: string, version: number): Promise<ProfileVersion | null>
  /**
   * Removes every version of the agent built from (or showing as an override) one of these
   * memories, so no deleted memory's text survives in a profile; returns the users whose profiles lost versions.
   */
  deleteBuiltFrom(agentId: string, memoryIds: readonly string[]): Promise<string[]>
  /** Every version of the agent (a report's count). */
  countAll(agentId: string): Promise<number>
}
