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

  it('strips trailing words that only say when the memory is for', () => {
    const content = (text: string) => interpretRememberThis(text).content
    expect(content('Remember that the ETL subnet is 10.20.14.0/24 for next time')).toBe(
      'The ETL subnet is 10.20.14.0/24',
    )
    expect(content('Remember that the ETL subnet is 10.20.14.0/24 for next time.')).toBe(
      'The ETL subnet is 10.20.14.0/24.',
    )
    expect(content('please remember the staging DB is read-only going forward')).toBe(
      'The staging DB is read-only',
    )
    expect(content('Note that the VPN needs MFA, just for the record')).toBe('The VPN needs MFA')
    expect(content('Remember I prefer tabs from now on, thanks!')).toBe('I prefer tabs!')
    expect(content('Remember for later: the invoice number is 4471')).toBe('The invoice number is 4471')
    expect(content('Keep in mind the on-call rota changes weekly for future reference please')).toBe(
      'The on-call rota changes weekly',
    )
  })

  it('keeps trailing words that are part of the statement', () => {
    const content = (text: string) => interpretRememberThis(text).content
    expect(content('Remember to call Ana next time')).toBe('To call Ana next time')
    expect(content('Remember that we move to Kubernetes in the future')).toBe(
      'We move to Kubernetes in the future',
    )
    expect(content('Remember that Dana says thanks')).toBe('Dana says thanks')
    expect(content('Remember that for later')).toBe('For later')
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
