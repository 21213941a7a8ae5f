/**
 * An agent's turns in conversation order, in process (issue 18): each conversation's turns sorted
 * by (time, id), as the store's (sessionId, timestamp, id) index orders them. Dialogue context asks
 * for the turns beside its candidates and for the turns between two of a conversation's turns on
 * every hybrid search over messages; the store answered those with a seek per candidate and side
 * (~2-3 ms of a 10 ms search at 100K turns). The timeline is fed from the same document stream as
 * the in-process lexical index, so it is exactly as current as the candidates search found.
 *
 * Ids are the store's numeric turn ids. A turn the timeline does not hold is reported (null), and
 * the caller reads the store instead: it never answers for a turn it has not seen.
 */

/** A turn as the timeline holds it: its id and stored time (epoch ms). */
export interface TimelineTurn {
  id: string
  time: number
}

/**
 * What the timeline knows of one turn: its conversation, stored time and whether it is a
 * conversation summary (the SUMMARIES set). Search ranks a hybrid MESSAGES candidate on these
 * alone and reads the rows only of those that reach the pool (issue 18, hybridmsg18).
 */
export interface TimelineTurnFacts {
  sessionId: string
  time: number
  summary: boolean
  /** Its speaker (null: none named); undefined when it was added without one known. */
  speaker: string | null | undefined
}

/** A turn beside another one, on one side of it (nearest first). */
export interface TimelineNeighbours {
  before: TimelineTurn[]
  after: TimelineTurn[]
}

/**
 * A conversation's turns, by slot, sorted by (time, id) when `sorted`; a removed turn's slot stays
 * in `slots` until the list is next cleaned (its owner is then null), so it is not reused before.
 */
interface Conversation {
  sessionId: string
  slots: number[]
  sorted: boolean
  live: number
}

/** Removed turns whose slots wait in their conversations' lists past which every list is cleaned. */
const CLEAN_MIN_DEAD = 1_024
const CLEAN_DEAD_SHARE = 0.25

export class ConversationTimeline {
  private readonly slotOf = new Map<number, number>()
  private readonly conversations = new Map<string, Conversation>()
  /** Per slot: the turn's id (NaN once removed), its time, and its conversation. */
  private ids = new Float64Array(16)
  private times = new Float64Array(16)
  /** Per slot: 1 when the turn is a conversation summary (one byte a turn: no speaker or text is held). */
  private summaries = new Uint8Array(16)
  /**
   * Per slot: its speaker's number in `speakerNames` plus one; 0 for none named, -1 for not known.
   * An agent's turns have few speakers: a number a turn, each name held once.
   */
  private speakers = new Int32Array(16)
  private readonly speakerNames: string[] = []
  private readonly speakerNumbers = new Map<string, number>()
  private owners: (Conversation | null)[] = []
  private readonly free: number[] = []
  private slots = 0
  /** Removed turns' slots not yet cleaned out of their conversations' lists. */
  private dead = 0

  /** Turns held. */
  get size(): number {
    return this.slotOf.size
  }

  has(id: string): boolean {
    return this.slotOf.has(Number(id))
  }

  /**
   * Adds a turn, replacing the one of that id. A turn without a numeric id, a conversation or a
   * finite time is not held (the caller then reads the store for it).
   */
  add(
    id: string,
    sessionId: string | null,
    time: number | null | undefined,
    summary = false,
    speaker?: string | null,
  ): void {
    const numeric = Number(id)
    this.remove(id)
    if (!Number.isFinite(numeric) || sessionId === null || time == null || !Number.isFinite(time)) return
    let conversation = this.conversations.get(sessionId)
    if (!conversation) {
      conversation = { sessionId, slots: [], sorted: true, live: 0 }
      this.conversations.set(sessionId, conversation)
    }
    const slot = this.free.pop() ?? this.slots++
    if (slot >= this.ids.length) this.grow(slot + 1)
    this.ids[slot] = numeric
    this.times[slot] = time
    this.summaries[slot] = summary ? 1 : 0
    this.speakers[slot] = speaker === undefined ? -1 : speaker === null ? 0 : this.speakerNumber(speaker) + 1
    this.owners[slot] = conversation
    // Turns mostly arrive in conversation order: appending keeps the order without a sort.
    const last = conversation.slots[conversation.slots.length - 1]
    if (conversation.sorted && last !== undefined && this.compare(last, slot) > 0) conversation.sorted = false
    conversation.slots.push(slot)
    conversation.live++
    this.slotOf.set(numeric, slot)
  }

  /** Drops a turn; its conversation is re-sorted (without it) when next read. */
  remove(id: string): boolean {
    const numeric = Number(id)
    const slot = this.slotOf.get(numeric)
    if (slot === undefined) return false
    this.slotOf.delete(numeric)
    const conversation = this.owners[slot] as Conversation
    this.ids[slot] = Number.NaN
    this.owners[slot] = null
    conversation.sorted = false
    conversation.live--
    this.dead++
    if (conversation.live === 0) {
      // A conversation's last turn gone: the conversation goes, and every slot it listed is free.
      this.conversations.delete(conversation.sessionId)
      for (const listed of conversation.slots) if (this.owners[listed] === null) this.release(listed)
      conversation.slots = []
    } else if (this.dead >= CLEAN_MIN_DEAD && this.dead >= CLEAN_DEAD_SHARE * this.slots) {
      for (const each of this.conversations.values()) this.ordered(each)
    }
    return true
  }

  /** Every turn id held (to reconcile with the store). */
  turnIds(): string[] {
    return [...this.slotOf.keys()].map(String)
  }

  /** A held turn's conversation, time and set; null when the turn is not held. */
  facts(id: string): TimelineTurnFacts | null {
    const slot = this.slotOf.get(Number(id))
    if (slot === undefined) return null
    return {
      sessionId: (this.owners[slot] as Conversation).sessionId,
      time: this.times[slot] as number,
      summary: this.summaries[slot] === 1,
      speaker: this.speakerAt(slot),
    }
  }

  private speakerAt(slot: number): string | null | undefined {
    const number = this.speakers[slot] as number
    return number < 0 ? undefined : number === 0 ? null : this.speakerNames[number - 1]
  }

  private speakerNumber(speaker: string): number {
    let number = this.speakerNumbers.get(speaker)
    if (number === undefined) {
      number = this.speakerNames.length
      this.speakerNames.push(speaker)
      this.speakerNumbers.set(speaker, number)
    }
    return number
  }

  /**
   * Up to `reach` turns each side of a turn in its conversation, nearest first, in (time, id)
   * order; null when the turn is not held.
   */
  beside(id: string, reach: number): TimelineNeighbours | null {
    const slot = this.slotOf.get(Number(id))
    if (slot === undefined) return null
    const slots = this.ordered(this.owners[slot] as Conversation)
    const at = this.position(slots, this.times[slot] as number, this.ids[slot] as number)
    const before: TimelineTurn[] = []
    const after: TimelineTurn[] = []
    for (let i = at - 1; i >= 0 && before.length < reach; i--) before.push(this.turn(slots[i] as number))
    for (let i = at + 1; i < slots.length && after.length < reach; i++)
      after.push(this.turn(slots[i] as number))
    return { before, after }
  }

  /**
   * A conversation's turns from one of its turns' time to another's (both included), oldest
   * first, at most `limit`; null when either turn is not held in that conversation.
   */
  span(sessionId: string, fromId: string, toId: string, limit: number): TimelineTurn[] | null {
    const conversation = this.conversations.get(sessionId)
    const from = this.slotOf.get(Number(fromId))
    const to = this.slotOf.get(Number(toId))
    if (!conversation || from === undefined || to === undefined) return null
    if (this.owners[from] !== conversation || this.owners[to] !== conversation) return null
    const slots = this.ordered(conversation)
    const fromTime = this.times[from] as number
    const toTime = this.times[to] as number
    const out: TimelineTurn[] = []
    // The first turn at the start time (any id): the span is by time, as the store's read is.
    for (
      let i = this.position(slots, fromTime, Number.NEGATIVE_INFINITY);
      i < slots.length && out.length < limit;
      i++
    ) {
      const slot = slots[i] as number
      if ((this.times[slot] as number) > toTime) break
      out.push(this.turn(slot))
    }
    return out
  }

  /** Bytes held (an estimate: the per-slot arrays, the id map and the conversations' lists). */
  bytes(): number {
    let bytes =
      this.ids.byteLength +
      this.times.byteLength +
      this.summaries.byteLength +
      this.speakers.byteLength +
      this.owners.length * 8 +
      this.slotOf.size * 40
    for (const [sessionId, conversation] of this.conversations)
      bytes += sessionId.length * 2 + 64 + conversation.slots.length * 8
    for (const name of this.speakerNames) bytes += name.length * 2 + 64
    return bytes
  }

  private turn(slot: number): TimelineTurn {
    return { id: String(this.ids[slot]), time: this.times[slot] as number }
  }

  /** (time, id) order, as the store's index. */
  private compare(a: number, b: number): number {
    return (
      (this.times[a] as number) - (this.times[b] as number) ||
      (this.ids[a] as number) - (this.ids[b] as number)
    )
  }

  /** The conversation's live slots in order, sorted (and its removed turns dropped) when needed. */
  private ordered(conversation: Conversation): number[] {
    if (!conversation.sorted) {
      const live: number[] = []
      for (const slot of conversation.slots)
        if (this.owners[slot] === conversation) live.push(slot)
        else this.release(slot)
      conversation.slots = live.sort((a, b) => this.compare(a, b))
      conversation.sorted = true
    }
    return conversation.slots
  }

  /** The first position whose (time, id) is at or after the given one (binary search). */
  private position(slots: readonly number[], time: number, id: number): number {
    let low = 0
    let high = slots.length
    while (low < high) {
      const middle = (low + high) >>> 1
      const slot = slots[middle] as number
      const t = this.times[slot] as number
      if (t < time || (t === time && (this.ids[slot] as number) < id)) low = middle + 1
      else high = middle
    }
    return low
  }

  /** A removed turn's slot, once no conversation lists it, can hold another turn. */
  private release(slot: number): void {
    this.free.push(slot)
    this.dead--
  }

  private grow(count: number): void {
    const capacity = Math.max(count, this.ids.length * 2)
    const ids = new Float64Array(capacity)
    ids.set(this.ids)
    this.ids = ids
    const times = new Float64Array(capacity)
    times.set(this.times)
    this.times = times
    const summaries = new Uint8Array(capacity)
    summaries.set(this.summaries)
    this.summaries = summaries
    const speakers = new Int32Array(capacity)
    speakers.set(this.speakers)
    this.speakers = speakers
  }
}
