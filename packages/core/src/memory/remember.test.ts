import { describe, expect, it } from 'vitest'
import { interpretRememberThis, REMEMBER_THIS_IMPORTANCE } from './remember.ts'

describe('interpretRememberThis', () => {
  it('strips the request words and keeps the statement', () => {
    expect(interpretRememberThis("Remember that I'm working on the Q4 marketing campaign").content).toBe(
      "I'm working on the Q4 marketing campaign",
    )
    expect(interpretRememberThis('please remember: my name is John').content).toBe('My name is John')
    expect(interpretRememberThis('Could you note that the API key rotates monthly').content).toBe(
      'The API key rotates monthly',
    )
  })

  it('keeps text that is not a request as it is', () => {
    expect(interpretRememberThis('The build server is ci-3').content).toBe('The build server is ci-3')
  })

  it('infers the category from the wording', () => {
    expect(interpretRememberThis('Remember that I prefer dark mode').category).toBe('preference')
    expect(interpretRememberThis('Remember we decided to use PostgreSQL').category).toBe('decision')
    expect(interpretRememberThis("Remember that I'll send the report by Friday").category).toBe('commitment')
    expect(interpretRememberThis('Actually I use Python 3.12, not 3.11').category).toBe('correction')
    expect(interpretRememberThis('Remember that my boss is Alice').category).toBe('relationship')
    expect(interpretRememberThis("Remember that I'm working on Project Nova").category).toBe('context')
    expect(interpretRememberThis('Remember that my name is John').category).toBe('fact')
  })

  it('marks explicit requests important', () => {
    expect(interpretRememberThis('remember this: x').importance).toBe(REMEMBER_THIS_IMPORTANCE)
    expect(REMEMBER_THIS_IMPORTANCE).toBeGreaterThan(0.5)
  })
})
