import { describe, expect, it } from 'vitest'
import { DEFAULT_DATABASE_URL, EnvError, loadEnv } from './env.ts'

describe('loadEnv', () => {
  it('applies the documented defaults', () => {
    const env = loadEnv({})
    expect(env.ENGRAM_ADMIN_KEY).toBeUndefined()
    expect(env).toMatchObject({
      DATABASE_URL: DEFAULT_DATABASE_URL,
      API_PORT: 4000,
      DASHBOARD_PORT: 3000,
      OPTIMIZER_INTERVAL_MS: 120_000,
      ENGRAM_TOKENIZER: 'o200k_base',
    })
  })

  it('treats empty variables as unset', () => {
    expect(loadEnv({ API_PORT: '', ENGRAM_ADMIN_KEY: '' }).API_PORT).toBe(4000)
  })

  it('names every invalid variable in one message', () => {
    const error = (() => {
      try {
        loadEnv({
          API_PORT: '70000',
          OPTIMIZER_INTERVAL_MS: '-1',
          ENGRAM_TOKENIZER: 'gpt2',
          ENGRAM_ADMIN_KEY: 'short',
          DATABASE_URL: 'postgres://x',
        })
      } catch (e) {
        return e as Error
      }
    })()
    expect(error).toBeInstanceOf(EnvError)
    for (const name of [
      'API_PORT',
      'OPTIMIZER_INTERVAL_MS',
      'ENGRAM_TOKENIZER',
      'ENGRAM_ADMIN_KEY',
      'DATABASE_URL',
    ]) {
      expect(error?.message).toContain(name)
    }
  })

  it('accepts the boundary values', () => {
    expect(
      loadEnv({
        API_PORT: '65535',
        OPTIMIZER_INTERVAL_MS: '0',
        ENGRAM_TOKENIZER: 'heuristic',
        ENGRAM_ADMIN_KEY: 'x'.repeat(16),
      }),
    ).toMatchObject({
      API_PORT: 65_535,
      OPTIMIZER_INTERVAL_MS: 0,
      ENGRAM_TOKENIZER: 'heuristic',
    })
  })
})
