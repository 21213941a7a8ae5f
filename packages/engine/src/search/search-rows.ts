import type { ConversationTimeline, StoredMessage } from '@engram/core'
import type { RecallSources } from '../ports/recall-sources.ts'
import type { Candidate } from './search-candidates.ts'
import type { SearchScope } from './search-types.ts'

/**
 * When a hybrid MESSAGES search reads its candidates' rows (issue 18, hybridmsg18). `pool` (the
 * default): fusion, dialogue context and the cut to MMR's pool need only each candidate's
 * conversation, time and set, which the agent's turn timeline holds, so only the rows of the turns
 * that reach the pool are read (~20 at limit 10 of ~150 candidates). `all`: every candidate's row
 * before scoring, as before. Both give the same hits; `all` is kept to check and measure against.
 */
export type CandidateRows = 'pool' | 'all'

/**
 * Stands for a candidate's row until it is read: nothing ranked before the pool's cut reads a
 * MESSAGES candidate's text, speaker or row (a search that needs them reads every row first).
 */
const ROW_NOT_READ: StoredMessage = Object.freeze({
  id: '',
  sessionId: '',
  role: 'user',
  speaker: null,
  content: '',
  tokenCount: 0,
  isCompressed: false,
  timestamp: new Date(0),
  metadata: {},
}) as StoredMessage

/**
 * MESSAGES candidates built from the timeline instead of their rows: conversation, time and
 * speaker as the store holds them, summaries left out (the MESSAGES set), the row still to read.
 * Null when the timeline does not hold one of the ids (a turn written after its catch-up, found by
 * the vector side), or, when `speakers` are needed (the query names a participant), does not know
 * one's speaker: the caller then reads every row, so the answer is the same.
 */
export function timelineCandidates(
  timeline: ConversationTimeline,
  scope: SearchScope,
  ids: readonly string[],
  speakers: boolean,
): Map<string, Candidate> | null {
  const out = new Map<string, Candidate>()
  for (const id of ids) {
    const facts = timeline.facts(id)
    if (!facts || (speakers && facts.speaker === undefined)) return null
    if (facts.summary) continue
    out.set(id, {
      scope,
      id,
      bm25: 0,
      feedback: 0,
      cooccurrence: 0,
      vector: 0,
      text: '',
      timestamp: new Date(facts.time),
      importance: 0.5,
      confidence: 1,
      row: ROW_NOT_READ,
      sessionId: facts.sessionId,
      // Undefined when not known (then not needed: no participant named), checked on the row.
      speaker: facts.speaker,
      rowPending: true,
    })
  }
  return out
}

/**
 * Reads the rows of the candidates still without one (those timelineCandidates built) and fills
 * them in, as SearchCandidates' read would have. False when a row is missing or disagrees with the
 * timeline (deleted or moved since the index caught up): the caller then searches again reading
 * every row first, so no hit is ever built from what the timeline alone said.
 */
export async function readPendingRows(
  recall: Pick<RecallSources, 'messages'>,
  agentId: string,
  candidates: readonly Candidate[],
): Promise<boolean> {
  const pending = candidates.filter((c) => c.rowPending)
  if (pending.length === 0) return true
  const rows = await recall.messages(
    agentId,
    pending.map((c) => c.id),
    { set: 'messages', sessionId: null, since: null, until: null },
  )
  const byId = new Map(rows.map((row) => [row.message.id, row]))
  for (const c of pending) {
    const row = byId.get(c.id)
    if (
      !row ||
      row.message.sessionId !== c.sessionId ||
      row.message.timestamp.getTime() !== c.timestamp.getTime() ||
      (c.speaker !== undefined && row.message.speaker !== c.speaker)
    )
      return false
    c.text = row.message.content
    c.row = row.message
    c.conversationId = row.conversationId
    c.speaker = row.message.speaker
    c.timestamp = row.message.timestamp
    c.rowPending = false
  }
  return true
}
