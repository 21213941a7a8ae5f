import * as chrono from 'chrono-node'

/**
 * Temporal validity when the text says so (spec 003's validFrom / validUntil): "until Friday",
 * "since 2019", "from March to June". Dates are read relative to the message's own timestamp,
 * never the time of extraction, so re-extracting an old conversation gives the same answer. A
 * date without a bounding word ("I went camping last week") says when something happened, not how
 * long it holds, and gives no validity.
 */
export interface Validity {
  validFrom: Date | null
  validUntil: Date | null
}

const UNTIL = /\b(?:until|till|til|through|thru|by|before|up to|no later than|ends?|ending)\s*$/i
const FROM = /\b(?:since|from|starting|starts?|as of|beginning|effective|after)\s*$/i
/** chrono is given at most this much text: its time grows faster than the text on odd input. */
const MAX_CHARS = 400

export function extractValidity(sentence: string, reference: Date): Validity {
  const text = sentence.slice(0, MAX_CHARS)
  const results = chrono.parse(text, { instant: reference, timezone: 'UTC' }, { forwardDate: false })
  let validFrom: Date | null = null
  let validUntil: Date | null = null
  for (const result of results) {
    const before = text.slice(Math.max(0, result.index - 16), result.index)
    const start = result.start.date()
    if (result.end && FROM.test(before)) {
      validFrom ??= start
      validUntil ??= result.end.date()
    } else if (UNTIL.test(before)) {
      // "until Friday" holds through Friday: the end of the day the phrase names.
      validUntil ??= result.start.isCertain('hour') ? start : endOfUtcDay(start)
    } else if (FROM.test(before)) {
      validFrom ??= start
    }
  }
  // chrono reads no bare year ("since 2019"): a year after a bounding word is the whole year.
  const yearFrom = YEAR_FROM.exec(text)
  if (yearFrom && !validFrom) validFrom = new Date(Date.UTC(Number(yearFrom[1]), 0, 1))
  const yearUntil = YEAR_UNTIL.exec(text)
  if (yearUntil && !validUntil) validUntil = new Date(Date.UTC(Number(yearUntil[1]), 11, 31, 23, 59, 59, 999))
  return { validFrom, validUntil }
}

const YEAR_FROM =
  /\b(?:since|from|as of|starting(?: in)?|beginning(?: in)?)\s+((?:19|20)\d{2})\b(?!\s*(?:-|to|until|through)\s*\d)/i
const YEAR_UNTIL = /\b(?:until|till|through|by)\s+(?:the end of\s+)?((?:19|20)\d{2})\b/i

function endOfUtcDay(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), 23, 59, 59, 999))
}
