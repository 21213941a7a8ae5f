import * as chrono from 'chrono-node'
import { z } from 'zod'
import { parseWith } from '../errors.ts'

/**
 * Dates in text as time windows. A question like "What did Jon do the week before 1 August 2023?"
 * names a period, and the turns written in it are the likely answers; a turn like "yesterday I went
 * to a support group" names a period too, resolved against the turn's own time. chrono-node finds
 * the expressions; the rules here decide which of them are periods (not times of day, durations,
 * weekdays without context or numbers that look like dates) and how long each period is.
 *
 * Everything is UTC: chrono parses with `timezone: 'UTC'` and every boundary is built with
 * Date.UTC, so the machine's time zone never shifts a window.
 */

/** A period [start, end); `text` is the expression it came from. */
export interface TimeWindow {
  start: Date
  end: Date
  text: string
  /** 'before' and 'after' are open-ended windows ("before June 2023", "since May"); 'during' a named period. */
  relation?: 'during' | 'before' | 'after'
}

export const TimeWindowOptionsSchema = z.object({
  /**
   * Days a named period's window reaches past its end: people report events after they happen
   * ("I went camping last week" written a week later), so turns just after the period count.
   */
  extendDays: z.number().min(0).max(3_650).default(14),
})
export type TimeWindowOptions = z.infer<typeof TimeWindowOptionsSchema>
export const DEFAULT_TIME_WINDOW_OPTIONS: Readonly<TimeWindowOptions> = Object.freeze(
  TimeWindowOptionsSchema.parse({}),
)

/** Longer queries are cut here: chrono's work grows with the text, and no question needs more. */
export const MAX_TIME_QUERY_CHARS = 2_000
/**
 * Turns are read this far for mentioned times: chat turns are a few hundred characters, and
 * chrono's time grows faster than the text on repetitive input (~60 ms at this length, worst seen).
 */
export const MAX_MENTION_TEXT_CHARS = 4_000
/** At most this many windows come out of one text. */
export const MAX_TIME_WINDOWS = 16

/** The earliest and latest instants a Date holds: the open ends of "before X" and "after X". */
export const BEGINNING_OF_TIME = new Date(-8.64e15)
export const END_OF_TIME = new Date(8.64e15)

const DAY_MS = 86_400_000

/** How a month or day named without a year is placed. */
type YearChoice =
  /** Questions ask about what happened: the latest one starting at or before the reference. */
  | 'past'
  /** A turn speaks of plans as often as of memories: the one nearest its time (chrono's choice). */
  | 'nearest'

interface Period {
  start: number
  end: number
}

interface Found {
  index: number
  length: number
  period: Period
  /** 'since' is 'after' that includes the period itself ("since May" holds May). */
  relation: 'during' | 'before' | 'after' | 'since'
  /** A month named without a day or year: the next match may list another ("in May or June"). */
  bareMonth?: boolean
}

const utcDay = (year: number, month: number, day: number) => Date.UTC(year, month - 1, day)
const startOfUtcDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS
/** Monday 00:00 UTC of the ISO week holding `ms`. */
const mondayOf = (ms: number) => {
  const day = startOfUtcDay(ms)
  return day - ((new Date(day).getUTCDay() + 6) % 7) * DAY_MS
}
const monthPeriod = (year: number, month: number): Period => ({
  start: utcDay(year, month, 1),
  end: utcDay(year, month + 1, 1),
})
const dayPeriod = (ms: number): Period => ({ start: startOfUtcDay(ms), end: startOfUtcDay(ms) + DAY_MS })

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']

// Words before an expression that make a bare month, season or year a time ("in May", "during the
// summer", "since 2020"); without one, "May", "March", "June" or "Summer" are as likely a verb or a name.
const TEMPORAL_CONTEXT =
  /\b(?:in|during|over|through|throughout|since|before|after|until|till|by|of|from|around|between|early|late|mid)(?:\s+the)?[\s-]+(?:(?:early|late|mid)[\s-]+)?$/i
const BEFORE_CONTEXT = /\b(?:before|prior\s+to|earlier\s+than)\s+(?:the\s+)?$/i
const AFTER_CONTEXT = /\b(?:after|later\s+than)\s+(?:the\s+)?$/i
const SINCE_CONTEXT = /\bsince\s+(?:the\s+)?$/i
// "the Friday before X", "the weekend after X": chrono reads only X, these words say which day.
const DAY_BEFORE_AFTER =
  /\b(?:the\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)\s+(before|after)\s+$/i
// Durations and times of day are not periods: "for 3 years", "in 3 hours", "5 minutes ago", "now".
// "in a few days" too: as often a span ("we haven't talked in a few days") as a day ahead.
const NOT_A_PERIOD =
  /^(?:for|within|over)\b|^in\s+(?:a|an|\d+|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|few|a\s+couple(?:\s+of)?|several)\s+(?:\w+\s+)?(?:days?|weeks?|months?|years?)\b|\b(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|now)\b/i
// "24/7", "3/4": a day and month in digits without a year are as likely a ratio or a score.
const BARE_NUMERIC_DATE = /^\d{1,2}[/.-]\d{1,2}$/
const RELATION_WORDS = /(?:before|prior\s+to|earlier\s+than|after|since|later\s+than)\s+(?:the\s+)?$/i
const WEEKDAY_CONTEXT = /\b(?:last|this|next|past|previous)\b/i
// A list of months continues a bare month's context: "in May or June".
const LIST_GAP = /^\s*(?:,|and|or|,\s*and|,\s*or)\s*$/i

/**
 * The periods a query names, resolved against `reference` (the agent's newest message time, not
 * the wall clock). Never throws on the query or the reference (odd input names no period); only
 * options out of range are a ValidationError.
 */
export function timeWindows(
  query: string,
  reference: Date,
  options?: Partial<TimeWindowOptions>,
): TimeWindow[] {
  const { extendDays } = options ? parseWith(TimeWindowOptionsSchema, options) : DEFAULT_TIME_WINDOW_OPTIONS
  const text = typeof query === 'string' ? query.slice(0, MAX_TIME_QUERY_CHARS) : ''
  return findPeriods(text, reference, 'past').map((found) => {
    // The relation is part of the expression: "before June 2023", not "June 2023".
    const lead =
      found.relation === 'during'
        ? ''
        : (RELATION_WORDS.exec(text.slice(Math.max(0, found.index - 40), found.index))?.[0] ?? '')
    const expression = text.slice(found.index - lead.length, found.index + found.length)
    if (found.relation === 'before')
      return window(BEGINNING_OF_TIME.getTime(), found.period.start, expression, 'before')
    if (found.relation === 'after')
      return window(found.period.end, END_OF_TIME.getTime(), expression, 'after')
    if (found.relation === 'since')
      return window(found.period.start, END_OF_TIME.getTime(), expression, 'after')
    return window(found.period.start, found.period.end + extendDays * DAY_MS, expression, 'during')
  })
}

/**
 * Relative or absolute periods named INSIDE a stored turn ("yesterday I…", "last week"), resolved
 * against the turn's own timestamp. No extension, and "before X" / "since X" give X itself: the turn
 * is about X. A month or day without a year is the one nearest the turn's time, since turns speak of
 * plans ("camping in June") as often as of the past.
 */
export function mentionedTimes(text: string, timestamp: Date): TimeWindow[] {
  const bounded = typeof text === 'string' ? text.slice(0, MAX_MENTION_TEXT_CHARS) : ''
  return findPeriods(bounded, timestamp, 'nearest').map((found) =>
    window(
      found.period.start,
      found.period.end,
      bounded.slice(found.index, found.index + found.length),
      'during',
    ),
  )
}

/** Whether `time` falls in any of the windows (each [start, end)). */
export function inTimeWindows(time: Date, windows: readonly TimeWindow[]): boolean {
  const ms = time.getTime()
  if (Number.isNaN(ms)) return false
  return windows.some((w) => ms >= w.start.getTime() && ms < w.end.getTime())
}

function window(start: number, end: number, text: string, relation: TimeWindow['relation']): TimeWindow {
  const clamp = (ms: number) => Math.min(Math.max(ms, BEGINNING_OF_TIME.getTime()), END_OF_TIME.getTime())
  return { start: new Date(clamp(start)), end: new Date(clamp(end)), text: text.trim(), relation }
}

function findPeriods(text: string, reference: Date, yearChoice: YearChoice): Found[] {
  const referenceMs = reference instanceof Date ? reference.getTime() : Number.NaN
  if (text.length === 0 || Number.isNaN(referenceMs)) return []
  let results: chrono.ParsedResult[]
  try {
    results = chrono.parse(text, { instant: reference, timezone: 'UTC' })
  } catch {
    // A parser bug on odd input must not fail a search: the query just names no period.
    results = []
  }

  const found: Found[] = []
  for (const result of results) {
    const previous = found.at(-1)
    const before = text.slice(Math.max(0, result.index - 40), result.index)
    const named = chronoPeriod(result, before, referenceMs, yearChoice, previous, text)
    if (!named) continue
    found.push({
      index: named.index ?? result.index,
      length: named.length ?? result.text.length,
      period: named.period,
      relation: named.relation ?? relationOf(before),
      bareMonth: named.bareMonth,
    })
  }
  const taken = (index: number, length: number) =>
    found.some((f) => index < f.index + f.length && f.index < index + length)
  for (const season of seasons(text, referenceMs, yearChoice)) {
    if (!taken(season.index, season.length)) found.push(season)
  }
  for (const year of years(text)) if (!taken(year.index, year.length)) found.push(year)

  found.sort((a, b) => a.index - b.index)
  const seen = new Set<string>()
  const unique: Found[] = []
  for (const f of found) {
    const key = `${f.relation}:${f.period.start}:${f.period.end}`
    if (seen.has(key)) continue
    seen.add(key)
    unique.push(f)
    if (unique.length === MAX_TIME_WINDOWS) break
  }
  return unique
}

function relationOf(before: string): Found['relation'] {
  if (BEFORE_CONTEXT.test(before)) return 'before'
  if (SINCE_CONTEXT.test(before)) return 'since'
  if (AFTER_CONTEXT.test(before)) return 'after'
  return 'during'
}

interface Named {
  period: Period
  relation?: Found['relation']
  index?: number
  length?: number
  bareMonth?: boolean
}

/** The period a chrono result names, or null when it is not one (a time of day, a duration, a name). */
function chronoPeriod(
  result: chrono.ParsedResult,
  before: string,
  referenceMs: number,
  yearChoice: YearChoice,
  previous: Found | undefined,
  text: string,
): Named | null {
  const words = result.text
  if (NOT_A_PERIOD.test(words) || BARE_NUMERIC_DATE.test(words.trim())) return null
  const start = result.start

  const weekly = weekPeriod(words, start, referenceMs)
  if (weekly) return { period: weekly }

  // "the Friday before 9 June 2023": chrono found the date; the day is counted from it.
  const dayWord = DAY_BEFORE_AFTER.exec(before)
  if (dayWord && start.isCertain('day')) {
    const anchor = startOfUtcDay(resultMs(start))
    const period = dayBeforeAfter(
      anchor,
      (dayWord[1] as string).toLowerCase(),
      (dayWord[2] as string).toLowerCase() as 'before' | 'after',
    )
    const index = result.index - dayWord[0].length
    return { period, relation: 'during', index, length: words.length + dayWord[0].length }
  }

  const end = result.end
  if (start.isCertain('day')) {
    const first = placeDay(start, referenceMs, yearChoice)
    if (!end) return { period: first }
    if (!end.isCertain('day') && !end.isCertain('month')) return null
    const last = end.isCertain('day')
      ? placeDay(end, referenceMs, yearChoice)
      : placeMonth(end, referenceMs, yearChoice)
    return last.end > first.start ? { period: { start: first.start, end: last.end } } : { period: first }
  }
  if (start.isCertain('month')) {
    const bare = !start.isCertain('year')
    if (bare && !end) {
      // A month alone needs a word that makes it a time ("in May"), or a list started by one.
      const listed =
        previous?.bareMonth === true &&
        LIST_GAP.test(text.slice(previous.index + previous.length, result.index))
      if (!TEMPORAL_CONTEXT.test(before) && !listed) return null
    }
    const first = placeMonth(start, referenceMs, yearChoice)
    if (end?.isCertain('month')) {
      // "March to May 2023": the year written once belongs to both ends.
      const last = end.isCertain('day')
        ? placeDay(end, referenceMs, yearChoice)
        : placeMonth(end, referenceMs, yearChoice)
      let from = first
      if (!start.isCertain('year') && end.isCertain('year')) {
        const year = new Date(last.start).getUTCFullYear()
        const month = start.get('month') as number
        from = monthPeriod(utcDay(year, month, 1) < last.start ? year : year - 1, month)
      }
      return last.end > from.start ? { period: { start: from.start, end: last.end } } : { period: from }
    }
    return { period: first, bareMonth: bare && !end }
  }
  if (start.isCertain('weekday')) {
    // "on Monday" could be any Monday; "last Friday" is one.
    if (!WEEKDAY_CONTEXT.test(words)) return null
    return { period: dayPeriod(resultMs(start)) }
  }
  if (start.isCertain('year')) {
    const year = start.get('year') as number
    return { period: { start: utcDay(year, 1, 1), end: utcDay(year + 1, 1, 1) } }
  }
  return null
}

/** The instant of a chrono component, read in UTC (the parse ran with timezone UTC). */
function resultMs(component: chrono.ParsedComponents): number {
  return utcDay(
    component.get('year') as number,
    component.get('month') as number,
    component.get('day') as number,
  )
}

function placeDay(component: chrono.ParsedComponents, referenceMs: number, yearChoice: YearChoice): Period {
  const month = component.get('month') as number
  const day = component.get('day') as number
  let year = component.get('year') as number
  if (!component.isCertain('year') && yearChoice === 'past') {
    year = new Date(referenceMs).getUTCFullYear()
    if (utcDay(year, month, day) > referenceMs) year -= 1
  }
  return dayPeriod(utcDay(year, month, day))
}

function placeMonth(component: chrono.ParsedComponents, referenceMs: number, yearChoice: YearChoice): Period {
  const month = component.get('month') as number
  let year = component.get('year') as number
  if (!component.isCertain('year') && yearChoice === 'past') {
    year = new Date(referenceMs).getUTCFullYear()
    if (utcDay(year, month, 1) > referenceMs) year -= 1
  }
  return monthPeriod(year, month)
}

/**
 * Weeks are read from the words, not chrono's single day: "last week" is the ISO week (Monday to
 * Sunday) before the reference's, "this/next week" the reference's own or the next, "two weeks
 * ago" the week holding that day, "the past week" the seven days up to the reference, "the week
 * before X" the seven days before X and "the week after X" the seven days after it.
 */
function weekPeriod(words: string, start: chrono.ParsedComponents, referenceMs: number): Period | null {
  const weekend = /\b(last|this|next|previous|past)\s+weekend\b/i.exec(words)
  if (weekend) {
    const shift = { last: -1, previous: -1, past: -1, this: 0, next: 1 }[
      (weekend[1] as string).toLowerCase() as 'last'
    ]
    const saturday = mondayOf(referenceMs) + (5 + 7 * shift) * DAY_MS
    return { start: saturday, end: saturday + 2 * DAY_MS }
  }
  if (/\bweekend\b/i.test(words)) return null
  if (!/\bweeks?\b/i.test(words)) return null
  const past = /\b(?:the\s+)?past\s+week\b/i.test(words)
  if (past) {
    const end = startOfUtcDay(referenceMs) + DAY_MS
    return { start: end - 7 * DAY_MS, end }
  }
  const named = /\b(last|this|next|previous)\s+week\b/i.exec(words)
  if (named) {
    const shift = { last: -1, previous: -1, this: 0, next: 1 }[(named[1] as string).toLowerCase() as 'last']
    const monday = mondayOf(referenceMs) + shift * 7 * DAY_MS
    return { start: monday, end: monday + 7 * DAY_MS }
  }
  if (!start.isCertain('day')) return null
  const day = resultMs(start)
  if (/\bweeks?\s+before\b/i.test(words)) return { start: day, end: day + 7 * DAY_MS }
  if (/\bweeks?\s+after\b/i.test(words)) return { start: day - 6 * DAY_MS, end: day + DAY_MS }
  if (/\bweeks?\s+ago\b/i.test(words)) return { start: mondayOf(day), end: mondayOf(day) + 7 * DAY_MS }
  // "in a week", "within 2 weeks": a day chrono computed, kept as that day.
  return dayPeriod(day)
}

/** The named weekday (or Saturday-Sunday weekend) nearest before or after `anchor`'s day, never on it. */
function dayBeforeAfter(anchor: number, which: string, direction: 'before' | 'after'): Period {
  const anchorWeekday = new Date(anchor).getUTCDay()
  const target = which === 'weekend' ? (direction === 'before' ? 0 : 6) : WEEKDAYS.indexOf(which)
  const offset =
    direction === 'before' ? -((anchorWeekday - target + 7) % 7 || 7) : (target - anchorWeekday + 7) % 7 || 7
  const day = anchor + offset * DAY_MS
  if (which !== 'weekend') return dayPeriod(day)
  // The weekend before X ends on the Sunday before X; the one after starts on the Saturday after.
  return direction === 'before'
    ? { start: day - DAY_MS, end: day + DAY_MS }
    : { start: day, end: day + 2 * DAY_MS }
}

// Meteorological seasons of the northern hemisphere (the months given, winter running into the next year).
const SEASON_START: Record<string, number> = { spring: 3, summer: 6, autumn: 9, fall: 9, winter: 12 }
const SEASON =
  /\b(?:(last|this|next|past|previous)\s+)?(spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?((?:19|20)\d{2})\b)?/gi

/**
 * Seasons, which chrono does not read: "during the summer", "summer 2022", "last winter". A season
 * word needs a year, a modifier or a temporal preposition ("Gina's fall collection" is no time).
 */
function seasons(text: string, referenceMs: number, yearChoice: YearChoice): Found[] {
  const found: Found[] = []
  for (const match of text.matchAll(SEASON)) {
    const [whole, modifier, name, yearText] = match as unknown as [string, string?, string?, string?]
    const before = text.slice(Math.max(0, match.index - 40), match.index)
    if (!modifier && !yearText && !TEMPORAL_CONTEXT.test(before)) continue
    const month = SEASON_START[(name as string).toLowerCase()] as number
    const season = (year: number): Period => ({
      start: utcDay(year, month, 1),
      end: utcDay(year, month + 3, 1),
    })
    const referenceYear = new Date(referenceMs).getUTCFullYear()
    let year: number
    if (yearText) year = Number(yearText)
    else if (modifier) {
      const kind = modifier.toLowerCase()
      // The one under way or just begun is "this"; "last" is the latest that has ended.
      const current = season(referenceYear).start <= referenceMs ? referenceYear : referenceYear - 1
      if (kind === 'this') year = current
      else if (kind === 'next') year = current + 1
      else year = season(current).end <= referenceMs ? current : current - 1
    } else if (yearChoice === 'past') {
      year = season(referenceYear).start <= referenceMs ? referenceYear : referenceYear - 1
    } else {
      const candidates = [referenceYear - 1, referenceYear, referenceYear + 1]
      const distance = (y: number) => {
        const p = season(y)
        return referenceMs < p.start ? p.start - referenceMs : referenceMs >= p.end ? referenceMs - p.end : 0
      }
      year = candidates.reduce((best, y) => (distance(y) < distance(best) ? y : best))
    }
    found.push({
      index: match.index,
      length: whole.length,
      period: season(year),
      relation: modifier ? 'during' : relationOf(before),
    })
  }
  return found
}

// A year alone needs a preposition ("in 2022", "since 2020"): a bare 2022 may be a count or a model.
const YEAR =
  /\b(?:in|during|since|before|after|until|by|throughout|from|of|the\s+year)\s+((?:19|20)\d{2})\b(?![/.:-]\d)/gi

/** Years named alone, which chrono does not read. */
function years(text: string): Found[] {
  const found: Found[] = []
  for (const match of text.matchAll(YEAR)) {
    const yearText = match[1] as string
    const index = match.index + match[0].length - yearText.length
    const year = Number(yearText)
    found.push({
      index,
      length: yearText.length,
      period: { start: utcDay(year, 1, 1), end: utcDay(year + 1, 1, 1) },
      relation: relationOf(text.slice(Math.max(0, index - 40), index)),
    })
  }
  return found
}
