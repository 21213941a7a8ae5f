// Reading the times SQLite holds as text, fast: Prisma and sqliteDate write DateTime columns as
// `YYYY-MM-DDTHH:MM:SS.mmm+00:00`, and a search reads hundreds of them per request.

/** Where the digits of `YYYY-MM-DDTHH:MM:SS.mmm+00:00` are. */
const DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22]

/** The digit at a position of a string, as a number (the caller checked the shape). */
const digit = (text: string, at: number) => text.charCodeAt(at) - 48

/**
 * Milliseconds of `YYYY-MM-DDTHH:MM:SS.mmm+00:00`, the shape Prisma and sqliteDate write
 * DateTime columns in, read by position; null for any other shape (Date's own parser reads those).
 * A search reads a few hundred turns' times: Date's parser was a tenth of its JavaScript.
 */
export function utcMilliseconds(text: string): number | null {
  if (
    text.length !== 29 ||
    text.charCodeAt(4) !== 45 || // -
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 || // T
    text.charCodeAt(13) !== 58 || // :
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46 || // .
    !text.endsWith('+00:00')
  )
    return null
  for (const at of DIGITS) if (digit(text, at) >>> 0 > 9) return null
  return Date.UTC(
    digit(text, 0) * 1000 + digit(text, 1) * 100 + digit(text, 2) * 10 + digit(text, 3),
    digit(text, 5) * 10 + digit(text, 6) - 1,
    digit(text, 8) * 10 + digit(text, 9),
    digit(text, 11) * 10 + digit(text, 12),
    digit(text, 14) * 10 + digit(text, 15),
    digit(text, 17) * 10 + digit(text, 18),
    digit(text, 20) * 100 + digit(text, 21) * 10 + digit(text, 22),
  )
}

/** A timestamp as SQLite holds it for Prisma (milliseconds, or ISO text), as a Date. */
export function storedTime(value: number | bigint | string): Date | null {
  const fast = typeof value === 'string' ? utcMilliseconds(value) : null
  if (fast !== null) return new Date(fast)
  const time = typeof value === 'string' && !/^\d+$/.test(value) ? new Date(value) : new Date(Number(value))
  return Number.isNaN(time.getTime()) ? null : time
}

/**
 * A DateTime column as a Date, exactly as `new Date(value)` reads it: the stored shape by position
 * (utcMilliseconds), anything else (another shape, a driver's Date) through Date itself. A
 * search's memory rows carry three or four times each; Date's parser was most of their mapping.
 */
export function storedDate(value: string | Date): Date {
  const fast = typeof value === 'string' ? utcMilliseconds(value) : null
  return fast === null ? new Date(value) : new Date(fast)
}
