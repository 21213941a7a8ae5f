/**
 * Text filters as the SQL adapters match them: SQLite's LIKE (what Prisma's `contains` and
 * `startsWith` become there) ignores the case of ASCII letters only, and Postgres's filters ask for
 * the same (ILIKE), so the in-memory adapter folds ASCII too, and nothing else.
 */
function foldAscii(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
}

/** Whether `text` holds `part`, ignoring ASCII case. */
export function containsIgnoringCase(text: string, part: string): boolean {
  return foldAscii(text).includes(foldAscii(part))
}

/** Whether `text` begins with `prefix`, ignoring ASCII case. */
export function startsWithIgnoringCase(text: string, prefix: string): boolean {
  return foldAscii(text).startsWith(foldAscii(prefix))
}

/** Whether a tag list holds `tag`, ignoring ASCII case (the SQL adapters look for its quoted form in the JSON). */
export function hasTagIgnoringCase(tags: readonly string[], tag: string): boolean {
  const wanted = foldAscii(tag)
  return tags.some((held) => foldAscii(held) === wanted)
}
