import type { MemoryCategory } from './memory-item.ts'

/** Categories that describe the user by what they are: a preference or a skill is always the user's. */
export const PROFILE_CATEGORIES = ['preference', 'skill'] as const satisfies readonly MemoryCategory[]

// "The user is called Priya", "User's name is John" (spec 001's examples of profile facts). The
// plural ("Users must log in via SSO") is about users in general, not this one.
const THE_USER = /\buser(?:'s)?\b(?!s)/i
// Facts stored in the user's own words: "My name is Dana", "I live in Lisbon". "I" only as a
// capital: a lower-case "i" is more often "i.e." or a variable than the pronoun.
const FIRST_PERSON_I = /\bI(?:'m|'ve|'d|'ll)?\b/
const FIRST_PERSON = /\b(?:me|my|mine|myself)\b/i

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * Whether a memory belongs in the user profile section of the assembled context (spec 003 layer 1:
 * who the user is). Preferences and skills always do. A fact does only when it is about the user:
 * it names the user, speaks in the first person, or names the user by id. A fact about the world
 * ("Marco Ruiz is the on-call SRE", "The ETL subnet is 10.20.14.0/24") is not profile: it reaches
 * the context as a relevant memory when the query asks for it. Other categories have sections of
 * their own (working memory, relationships).
 */
export function isUserProfileMemory(
  memory: { category: MemoryCategory; content: string; userId?: string | null },
  userId?: string | null,
): boolean {
  if ((PROFILE_CATEGORIES as readonly MemoryCategory[]).includes(memory.category)) return true
  if (memory.category !== 'fact') return false
  const { content } = memory
  if (THE_USER.test(content) || FIRST_PERSON_I.test(content) || FIRST_PERSON.test(content)) return true
  for (const id of [userId, memory.userId]) {
    if (id && id.trim().length > 0 && new RegExp(`\\b${escapeRegExp(id.trim())}\\b`, 'i').test(content))
      return true
  }
  return false
}
