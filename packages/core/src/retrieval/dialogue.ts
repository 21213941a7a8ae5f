import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'

/**
 * Dialogue-level context. A turn is often an answer only together with its neighbours: "When did
 * you go?" / "Yesterday!" — the second holds the date, the first the event the query names. So a
 * matching turn lends part of its score to the turns around it, and to the rest of its episode
 * (the stretch of conversation it belongs to).
 */

export const DialogueOptionsSchema = z.object({
  /** Turns this far from a candidate (same conversation and episode) gain from it; 0 turns it off. */
  neighbourDistance: z.number().int().min(0).max(50).default(2),
  /** Share of its episode's best score a turn gains. */
  episodeShare: z.number().min(0).max(1).default(0.2),
})
export type DialogueOptions = z.infer<typeof DialogueOptionsSchema>
export const DEFAULT_DIALOGUE_OPTIONS: Readonly<DialogueOptions> = Object.freeze(
  DialogueOptionsSchema.parse({}),
)

/**
 * A pause longer than this ends an episode: chat sessions are minutes apart within a sitting and
 * hours or days between sittings (LoCoMo's sessions are days apart, its turns seconds).
 */
export const EPISODE_GAP_MS = 3_600_000

const optionsOf = (options?: Partial<DialogueOptions>) =>
  options ? parseWith(DialogueOptionsSchema, options) : DEFAULT_DIALOGUE_OPTIONS

/** A score that can be spread: positive and finite (a candidate that scored nothing lends nothing). */
const spreadable = (score: number) => score > 0 && Number.isFinite(score)

/**
 * Each candidate's score spread to its neighbouring turns: a neighbour at distance d gains
 * score/d, summed over candidates. `neighbours` maps a candidate id to its turns (same
 * conversation, same episode) with their distance 1..neighbourDistance. The candidate does not
 * gain from its own score; a neighbour that is itself a candidate still gains. A neighbour listed
 * twice for one candidate counts once, at its smaller distance; distances outside
 * 1..neighbourDistance are ignored. Only turns that gained are in the result.
 */
export function neighbourContext(
  base: ReadonlyMap<string, number>,
  neighbours: ReadonlyMap<string, readonly { id: string; distance: number }[]>,
  options?: Partial<DialogueOptions>,
): Map<string, number> {
  const { neighbourDistance } = optionsOf(options)
  const gained = new Map<string, number>()
  if (neighbourDistance === 0) return gained
  for (const [candidate, score] of base) {
    if (!spreadable(score)) continue
    const around = neighbours.get(candidate)
    if (!around) continue
    const nearest = new Map<string, number>()
    for (const { id, distance } of around) {
      if (id === candidate || !Number.isInteger(distance) || distance < 1 || distance > neighbourDistance)
        continue
      const known = nearest.get(id)
      if (known === undefined || distance < known) nearest.set(id, distance)
    }
    for (const [id, distance] of nearest) gained.set(id, (gained.get(id) ?? 0) + score / distance)
  }
  return gained
}

/**
 * For each turn id, the best base score among the turns of its episode (a run of turns of one
 * conversation without a long pause), times episodeShare. `episodeOf` maps turn id → episode key.
 * The turn's own score counts among its episode's. Turns of episodes where nothing scored (and
 * all turns when episodeShare is 0) are left out.
 */
export function episodeContext(
  base: ReadonlyMap<string, number>,
  episodeOf: ReadonlyMap<string, string>,
  options?: Partial<DialogueOptions>,
): Map<string, number> {
  const { episodeShare } = optionsOf(options)
  const context = new Map<string, number>()
  if (episodeShare === 0) return context
  const best = new Map<string, number>()
  for (const [id, score] of base) {
    const episode = episodeOf.get(id)
    if (episode === undefined || !spreadable(score)) continue
    if (score > (best.get(episode) ?? 0)) best.set(episode, score)
  }
  for (const [id, episode] of episodeOf) {
    const score = best.get(episode)
    if (score !== undefined) context.set(id, score * episodeShare)
  }
  return context
}

/**
 * Splits a conversation's turns (ordered by time) into episodes: a new episode starts after a
 * pause longer than gapMs. Returns turn id → episode key, the id of the episode's first turn (so
 * keys of different conversations never collide). Turns out of order are put in order first; a
 * turn without a valid timestamp is an episode of its own (nothing says what it belongs to).
 */
export function episodes(
  turns: readonly { id: string; timestamp: Date }[],
  gapMs: number = EPISODE_GAP_MS,
): Map<string, string> {
  if (!(gapMs >= 0) || !Number.isFinite(gapMs)) {
    throw new ValidationError([{ field: 'gapMs', message: 'must be a finite number ≥ 0', limit: 0 }])
  }
  const episodeOf = new Map<string, string>()
  const timed: { id: string; time: number }[] = []
  for (const turn of turns) {
    const time = turn.timestamp instanceof Date ? turn.timestamp.getTime() : Number.NaN
    if (Number.isNaN(time)) episodeOf.set(turn.id, turn.id)
    else timed.push({ id: turn.id, time })
  }
  // Stable: turns at the same instant keep their given order.
  timed.sort((a, b) => a.time - b.time)
  let key: string | null = null
  let previous = Number.NEGATIVE_INFINITY
  for (const { id, time } of timed) {
    if (key === null || time - previous > gapMs) key = id
    episodeOf.set(id, key)
    previous = time
  }
  return episodeOf
}
