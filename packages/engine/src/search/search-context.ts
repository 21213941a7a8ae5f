import { episodeContext, neighbourContext } from '@engram/core'
import type { RecallSources } from '../ports/recall-sources.ts'
import type { Candidate, SearchCandidates } from './search-candidates.ts'
import {
  type BesideRead,
  type DialogueSources,
  episodesAround,
  episodesOf,
  turnsNear,
} from './search-dialogue.ts'
import type { SearchWeights } from './search-types.ts'

// A candidate's context in scoring: HYBRID's own score, the dialogue around a turn (the turns
// beside it and its episode), and a memory's source turn (split from search-service.ts).

/** The share of a candidate's score a turn beside it gains, over the distance. */
const NEIGHBOUR_SHARE = 0.5
/**
 * Share of its source turn's relative score a memory formed from chat gains (sourceTurnContext).
 * 1: the turn weighs as much as the memory's own words and vector (HYBRID's own score is at most
 * 1). Larger shares scored a little higher on the bench's tuning conversation, not on the other,
 * and would rank memories without a source turn (created through the API) below any chat memory
 * whose turn matches.
 */
const SOURCE_TURN_SHARE = 1

/**
 * How much of the conversations search reads for dialogue context, and from where. `index` (the
 * default): `fewer`'s reads, answered from the agent's timeline held beside its messages' lexical
 * index when it is held (timelineSources; the store's otherwise). `fewer`: the episodes from the
 * turns read beside the candidates and only the stretches between them those leave open
 * (episodesAround), and a turn brought in by context only is read when its score could still reach
 * the hits (SearchService), all from the store. `all`: every turn of each conversation's span and
 * every context turn's row, as before issue 18's hybrid18 slice. The three give the same hits; the
 * last two are kept to check and measure the default against.
 */
export type DialogueReads = 'index' | 'fewer' | 'all'

/**
 * HYBRID's own score of each candidate: its lexical score (BM25 and the expansions) as a share of
 * the best one's, and its vector similarity, at the request's weights.
 */
export function hybridScores(candidates: readonly Candidate[], weights: SearchWeights): Map<string, number> {
  const lexicalScore = (c: Candidate) =>
    c.bm25 + weights.feedback * c.feedback + weights.cooccurrence * c.cooccurrence
  const best = Math.max(0, ...candidates.map(lexicalScore))
  return new Map(
    candidates.map((c) => [
      c.id,
      weights.bm25 * (best > 0 ? lexicalScore(c) / best : 0) + weights.vector * c.vector,
    ]),
  )
}

/**
 * Dialogue context: the turn that answers is often beside the one that matches (a question and
 * its reply), and a short turn ("It's a mix of drama and romance!") means what its exchange
 * means. Each turn up to `contextTurns` away from a candidate, in the same episode (no pause
 * longer than EPISODE_GAP_MS in between), gains half the candidate's score over the distance; each
 * turn gains weights.episode of the best score in its episode.
 */
export async function dialogueContext(
  recall: DialogueSources,
  base: Map<string, number>,
  candidates: Candidate[],
  request: { contextTurns: number; weights: SearchWeights },
  reads: DialogueReads = 'index',
  ahead: BesideRead | null = null,
): Promise<{ context: Map<string, number>; episode: Map<string, number> }> {
  const context = new Map<string, number>()
  const episode = new Map<string, number>()
  const turns = candidates.filter((c) => c.sessionId && (base.get(c.id) ?? 0) > 0)
  if (turns.length === 0) return { context, episode }
  const { near, runs } = await turnsNear(recall, turns, request.contextTurns, ahead)
  if (request.weights.context > 0) {
    // Half the candidate's score over the distance: a turn between two matches gains their
    // mean at distance 1, as before reach grew past one turn, and never outranks them on it.
    for (const [id, score] of neighbourContext(base, near, { neighbourDistance: request.contextTurns }))
      context.set(id, score * NEIGHBOUR_SHARE)
  }
  if (request.weights.episode > 0) {
    // The span of each conversation's candidates and of the turns beside them.
    const points = turns.map((c) => ({
      sessionId: c.sessionId as string,
      id: c.id,
      time: c.timestamp.getTime(),
    }))
    for (const c of turns)
      for (const n of near.get(c.id) ?? [])
        points.push({ sessionId: c.sessionId as string, id: n.id, time: n.time })
    // The candidates that scored nothing get an episode too when inside a span (as the span's
    // read gave them one): episodeContext gives every turn of an episode that scored its share.
    const scoring = new Set(turns.map((c) => c.id))
    const others = candidates
      .filter((c) => c.sessionId && !scoring.has(c.id))
      .map((c) => ({ sessionId: c.sessionId as string, id: c.id, time: c.timestamp.getTime() }))
    const episodeOf =
      reads === 'all' ? await episodesOf(recall, points) : await episodesAround(recall, points, runs, others)
    for (const [id, share] of episodeContext(base, episodeOf, { episodeShare: request.weights.episode }))
      episode.set(id, share)
  }
  return { context, episode }
}

/**
 * Dialogue context of memories formed from chat: a memory restates one turn, and the words a
 * question shares are often in that turn or in the turn it answers, not in the restatement. Each
 * memory gains SOURCE_TURN_SHARE of its source turn's score as search over MESSAGES ranks it
 * (its words and dialogue context, as a share of the best turn's). The context is the
 * turn's own entry in the messages' index, nothing copied: a deleted turn takes it with it, and
 * the memory's content stays what it says.
 */
export async function sourceTurnContext(
  recall: RecallSources,
  dialogueSources: DialogueSources,
  sources: SearchCandidates,
  agentId: string,
  query: string,
  request: {
    candidateLimit: number
    sessionId: string | null
    contextTurns: number
    weights: SearchWeights
    reads?: DialogueReads
  },
): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  // No memory formed from a turn: no turn's score could reach one (the same empty context,
  // without a search over the agent's messages: for an agent with 100K turns, most of a
  // memory search).
  if (!(await recall.hasMemoryItemsFromTurns(agentId))) return out
  // Words and dialogue only: the turns' vectors scored the same on the bench (R@10 on covered
  // questions 78.9 / 92.7% with them, 78.7 / 93.7% without), and a memory search should not load
  // the agent's message vectors (nor embed its queued turns first) to find memories.
  const turns = await sources.candidates(agentId, 'MESSAGES', {
    query,
    queryVector: null,
    strategy: 'HYBRID',
    candidateLimit: request.candidateLimit,
    sessionId: request.sessionId,
    options: {},
    weights: request.weights,
  })
  if (turns.length === 0) return out
  const base = hybridScores(turns, request.weights)
  const dialogue = await dialogueContext(dialogueSources, base, turns, request, request.reads)
  const scores = new Map(base)
  for (const [id, score] of dialogue.context)
    scores.set(id, (scores.get(id) ?? 0) + request.weights.context * score)
  for (const [id, score] of dialogue.episode) scores.set(id, (scores.get(id) ?? 0) + score)
  const best = Math.max(0, ...scores.values())
  if (best <= 0) return out
  for (const { memoryId, turnId } of await recall.memoryItemIdsFromTurns(agentId, [...scores.keys()])) {
    const share = (SOURCE_TURN_SHARE * (scores.get(turnId) ?? 0)) / best
    if (share > (out.get(memoryId) ?? 0)) out.set(memoryId, share)
  }
  return out
}

/**
 * The turns brought in by dialogue context alone (no score of their own) whose rows are worth
 * reading: those whose score could reach the pool. Such a turn's score is its context and episode
 * shares times the time and speaker factors (each at most 1 + its weight, and only when the query
 * names a period or a participant; decay is not bounded here: the caller reads every turn when it
 * applies). When `pool` scores already passing the filters are above that bound, the turn would
 * rank below all of them, so the hits are the same without it (a tie with the pool's last keeps
 * it: the sort keeps the order in which scores were pushed, candidates first).
 */
export function contextTurnsWorthReading(
  ids: readonly string[],
  dialogue: { context: ReadonlyMap<string, number>; episode: ReadonlyMap<string, number> },
  cut: {
    /** Scores already known (candidates, earlier scopes). */
    scores: readonly number[]
    pool: number
    threshold: number | null
    weights: SearchWeights
    /** Whether the query names a period (the time factor may apply) or a participant (speaker). */
    windows: boolean
    participants: boolean
  },
): string[] {
  if (ids.length === 0) return []
  const passing = cut.scores
    .filter((s) => s > 0 && (cut.threshold == null || s >= cut.threshold))
    .sort((a, b) => b - a)
  const floor = passing.length >= cut.pool ? (passing[cut.pool - 1] as number) : Number.NEGATIVE_INFINITY
  const factor = (cut.windows ? 1 + cut.weights.time : 1) * (cut.participants ? 1 + cut.weights.speaker : 1)
  return ids.filter((id) => {
    const bound =
      (cut.weights.context * (dialogue.context.get(id) ?? 0) + (dialogue.episode.get(id) ?? 0)) * factor
    // A score of 0 or less is never a hit (HYBRID keeps positive scores only).
    return bound > 0 && bound >= floor
  })
}
