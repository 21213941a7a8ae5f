import { describe, expect, it } from 'vitest'
import { isUserProfileMemory } from './profile.ts'

const fact = (content: string, userId: string | null = null) => ({
  category: 'fact' as const,
  content,
  userId,
})

describe('isUserProfileMemory', () => {
  it('keeps a fact about the world out of the user profile (issue 10)', () => {
    expect(isUserProfileMemory(fact('Marco Ruiz is the on-call SRE', 'dana'), 'dana')).toBe(false)
    expect(isUserProfileMemory(fact('The ETL subnet is 10.20.14.0/24'))).toBe(false)
    expect(isUserProfileMemory(fact('Users must log in via SSO'))).toBe(false)
    expect(isUserProfileMemory(fact('Use i.e. sparingly in the style guide'))).toBe(false)
  })

  it('puts facts about the user in it', () => {
    expect(isUserProfileMemory(fact('The user is called Priya'))).toBe(true)
    expect(isUserProfileMemory(fact("User's name is John"))).toBe(true)
    expect(isUserProfileMemory(fact('My name is Dana'))).toBe(true)
    expect(isUserProfileMemory(fact("I'm based in Lisbon"))).toBe(true)
    // Named by the user id the context is built for, or the memory's own.
    expect(isUserProfileMemory(fact('Dana works the night shift'), 'dana')).toBe(true)
    expect(isUserProfileMemory(fact('Dana works the night shift', 'dana'))).toBe(true)
    expect(isUserProfileMemory(fact('Dana works the night shift'), 'marco')).toBe(false)
    // An id is matched as text, not as a pattern.
    expect(isUserProfileMemory(fact('a+b is the build tag'), 'a+b')).toBe(true)
    expect(isUserProfileMemory(fact('aab is the build tag'), 'a+b')).toBe(false)
  })

  it('always holds preferences and skills, never what has a section of its own', () => {
    expect(isUserProfileMemory({ category: 'preference', content: 'Prefers short answers' })).toBe(true)
    expect(isUserProfileMemory({ category: 'skill', content: 'Knows Terraform well' })).toBe(true)
    expect(isUserProfileMemory({ category: 'decision', content: 'I decided to use Postgres' })).toBe(false)
    expect(isUserProfileMemory({ category: 'relationship', content: 'My manager is Alice' })).toBe(false)
  })
})
