import {
  mentionedTimes,
  namedParticipants,
  type TimeWindow,
  timeWindows,
  withoutParticipants,
} from '@engram/core'
import type { RecalledMemoryItem } from '../ports/recall-sources.ts'
import type { AgentFacts } from './agent-facts.ts'
import type { Candidate } from './search-candidates.ts'
import type { SearchStrategy, SearchWeights } from './search-types.ts'

// What a query says besides its words, and whether a candidate falls in a period it names (split
// from search-service.ts, which was near 700 lines).

/** What the query says besides its words: the periods and participants it names. */
export interface QuerySignals {
  /** The query's words for lexical matching (named participants left out). */
  lexicalQuery: string
  windows: TimeWindow[]
  participants: Set<string>
}

/**
 * The periods and participants a HYBRID query names (nothing for the other strategies). `now` is
 * the clock's time, the reference when the agent has no message yet.
 */
export function querySignals(
  query: string,
  request: { strategy: SearchStrategy; weights: SearchWeights },
  facts: AgentFacts,
  now: Date,
): QuerySignals {
  const none: QuerySignals = { lexicalQuery: query, windows: [], participants: new Set() }
  if (request.strategy !== 'HYBRID') return none
  // Relative periods ("last week") are resolved against the agent's newest message, like the
  // conversation window: an imported history behaves as it did when it was live.
  const reference = facts.newest ?? now
  const windows = request.weights.time > 0 ? timeWindows(query, reference) : []
  const named = request.weights.speaker > 0 ? namedParticipants(query, facts.participants) : []
  // A named participant is a structured match (the speaker factor), not a word to find in text:
  // names in the lexical query pulled in every turn that mentions the person.
  const stripped = named.length ? withoutParticipants(query, named) : query
  return {
    lexicalQuery: stripped.trim().length > 0 ? stripped : query,
    windows,
    participants: new Set(named),
  }
}

/**
 * Whether a hit falls in a period the query names: a turn by its time, a memory by when it
 * became true (validFrom: a memory stored today about May is about May), or (optionally) by a
 * period its text names.
 */
export function inNamedPeriod(c: Candidate, windows: readonly TimeWindow[], mentioned: boolean): boolean {
  if (windows.length === 0) return false
  const time = c.scope === 'MEMORIES' ? (c.row as RecalledMemoryItem).validFrom : c.timestamp
  if (windows.some((w) => time >= w.start && time < w.end)) return true
  if (!mentioned) return false
  return mentionedTimes(c.text, c.timestamp).some((m) =>
    windows.some((w) => m.start < w.end && w.start < m.end),
  )
}
