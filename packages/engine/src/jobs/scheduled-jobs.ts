import type { Clock } from '@engram/core'

/**
 * How far a debounced job's due time may lag behind the time a new turn asks for before the turn
 * rewrites the job (ms). Every stored turn used to postpone its conversation's extraction and
 * summary jobs: two queue statements each, per turn. With this granularity a conversation's job is
 * rewritten about once per granularity while turns keep coming, and it runs at most this much
 * earlier than the exact debounce (a summary job that runs early sees the cursor and comes back
 * when due). 0 rewrites the job on every turn, as before.
 */
export const DEFAULT_DEBOUNCE_GRANULARITY_MS = 500

/** Notes kept (conversations with a job known pending); the oldest go first past it. */
export const SCHEDULED_JOB_NOTES_MAX = 20_000

/** Writes not yet committed whose jobs wait for it; a failed write's note is never trusted and ages out. */
const UNCONFIRMED_MAX = 4_096

/**
 * What this process knows of its debounced jobs (issue 18): "the pending job of this key will not
 * run before T", because this process committed it so. While the clock is before T the job cannot
 * have been claimed (a claim takes only jobs whose run-at has passed, and a postpone only moves it
 * later), so a turn asking for a run-at within the granularity after T needs no queue write.
 *
 * A note names the conversation's session row as well as the key: a conversation deleted and
 * started again (here or in another process) has a new session id, so a note never stands for a
 * job its deletion cancelled. Cancellations by this process forget their notes; settings changes
 * and agent resets of any process forget the agent's (the engine's replica caches). Nothing here is
 * durable: after a restart the first turn writes the job again, as every turn did before.
 */
export class ScheduledJobs {
  /** Note id → the committed run-at (ms on the engine's clock), oldest first. */
  private readonly notes = new Map<string, number>()
  /** A write's token → the notes it carries once committed. */
  private readonly unconfirmed = new Map<string, { id: string; runAfter: number }[]>()

  constructor(
    private readonly clock: Clock,
    readonly granularityMs: number = DEFAULT_DEBOUNCE_GRANULARITY_MS,
    private readonly capacity: number = SCHEDULED_JOB_NOTES_MAX,
  ) {}

  /** Whether the pending job of `key` already runs late enough for a turn that wants `runAfter`. */
  covers(agentId: string, sessionId: string, key: string, runAfter: Date): boolean {
    if (this.granularityMs <= 0) return false
    const id = noteId(agentId, sessionId, key)
    const noted = this.notes.get(id)
    if (noted === undefined) return false
    // Due (or past): a worker may have taken it already; the turn writes a job of its own.
    if (noted <= this.clock.now().getTime()) {
      this.notes.delete(id)
      return false
    }
    return runAfter.getTime() - noted < this.granularityMs
  }

  /** The job was written with this run-at and its write has committed. */
  committed(agentId: string, sessionId: string, key: string, runAfter: Date): void {
    if (this.granularityMs <= 0) return
    this.note(noteId(agentId, sessionId, key), runAfter.getTime())
  }

  /**
   * The job is written inside a write that has not committed yet (the messages' transaction): the
   * note counts once `confirm(token)` says the write committed.
   */
  writing(token: string, agentId: string, sessionId: string, key: string, runAfter: Date): void {
    if (this.granularityMs <= 0) return
    const notes = this.unconfirmed.get(token) ?? []
    notes.push({ id: noteId(agentId, sessionId, key), runAfter: runAfter.getTime() })
    this.unconfirmed.set(token, notes)
    if (this.unconfirmed.size > UNCONFIRMED_MAX) {
      const oldest = this.unconfirmed.keys().next().value
      if (oldest !== undefined) this.unconfirmed.delete(oldest)
    }
  }

  /** The write of `token` committed: its jobs are pending as written. */
  confirm(token: string): void {
    const notes = this.unconfirmed.get(token)
    if (!notes) return
    this.unconfirmed.delete(token)
    for (const { id, runAfter } of notes) this.note(id, runAfter)
  }

  /** Forgets the notes of these keys of the agent (their jobs were cancelled), in every session. */
  forget(agentId: string, keys: readonly string[]): void {
    const wanted = new Set(keys)
    for (const id of this.notes.keys()) {
      const [agent, , key] = JSON.parse(id) as [string, string, string]
      if (agent === agentId && wanted.has(key)) this.notes.delete(id)
    }
  }

  /** Forgets the agent's notes (every agent's when null). */
  forgetAgent(agentId: string | null): void {
    if (agentId === null) {
      this.notes.clear()
      this.unconfirmed.clear()
      return
    }
    for (const id of this.notes.keys()) if ((JSON.parse(id) as string[])[0] === agentId) this.notes.delete(id)
  }

  /** Notes held (tests). */
  get size(): number {
    return this.notes.size
  }

  /** Notes held for an agent (the deletion report). */
  held(agentId: string): number {
    let count = 0
    for (const id of this.notes.keys()) if ((JSON.parse(id) as string[])[0] === agentId) count++
    return count
  }

  private note(id: string, runAfter: number): void {
    const known = this.notes.get(id)
    // Two writes of one conversation may confirm out of order: the job waits for the later time.
    const latest = known === undefined ? runAfter : Math.max(known, runAfter)
    this.notes.delete(id)
    this.notes.set(id, latest)
    if (this.notes.size > this.capacity) {
      const oldest = this.notes.keys().next().value
      if (oldest !== undefined) this.notes.delete(oldest)
    }
  }
}

function noteId(agentId: string, sessionId: string, key: string): string {
  return JSON.stringify([agentId, sessionId, key])
}
