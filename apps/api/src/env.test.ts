import path from 'node:path'
import { DEFAULT_EPISODIC_MAX_MESSAGES, DEFAULT_EPISODIC_TTL_MS } from '@engram/bus-redis'
import { DEFAULT_KERNEL_ABOVE } from '@engram/core'
import { describe, expect, it } from 'vitest'
import {
  DEFAULT_DATABASE_URL,
  DEFAULT_EMBEDDING_MODEL_PATH,
  EnvError,
  loadEnv,
  REPO_ROOT,
  workingContextRulesOf,
} from './env.ts'

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

  it('reads trajectory memory’s rules: the two named variables and a checked JSON object for the rest', () => {
    const env = loadEnv({
      ENGRAM_TRACE_SCORING: 'true',
      ENGRAM_TRACE_TTL_DAYS: '14',
      ENGRAM_TRAJECTORY_RULES: '{"similarityThreshold":0.6,"sessionHistoryLimit":8}',
    })
    expect(env.ENGRAM_TRACE_SCORING).toBe(true)
    expect(env.ENGRAM_TRACE_TTL_DAYS).toBe(14)
    expect(env.ENGRAM_TRAJECTORY_RULES).toEqual({ similarityThreshold: 0.6, sessionHistoryLimit: 8 })
    expect(loadEnv({}).ENGRAM_TRAJECTORY_RULES).toBeUndefined()
    for (const bad of ['{"similarityThreshold":2}', '{"noSuchRule":1}', 'not json'])
      expect(() => loadEnv({ ENGRAM_TRAJECTORY_RULES: bad })).toThrow(/ENGRAM_TRAJECTORY_RULES/)
    expect(() => loadEnv({ ENGRAM_TRACE_TTL_DAYS: '0' })).toThrow(/ENGRAM_TRACE_TTL_DAYS/)
  })

  it('reads maintenance’s rules, refusing a bad cron expression or retention by name', () => {
    expect(loadEnv({})).toMatchObject({
      ENGRAM_MAINTENANCE: 'auto',
      ENGRAM_RETENTION_DAYS: 90,
      ENGRAM_CLEANUP_INTERVAL: '0 3 * * *',
      ENGRAM_COMPACTION: true,
    })
    const env = loadEnv({
      ENGRAM_MAINTENANCE: 'off',
      ENGRAM_RETENTION_DAYS: '30',
      ENGRAM_CLEANUP_INTERVAL: '*/15 * * * *',
      ENGRAM_COMPACTION: 'false',
    })
    expect(env).toMatchObject({
      ENGRAM_MAINTENANCE: 'off',
      ENGRAM_RETENTION_DAYS: 30,
      ENGRAM_CLEANUP_INTERVAL: '*/15 * * * *',
      ENGRAM_COMPACTION: false,
    })
    expect(() => loadEnv({ ENGRAM_CLEANUP_INTERVAL: 'every night' })).toThrow(/ENGRAM_CLEANUP_INTERVAL/)
    expect(() => loadEnv({ ENGRAM_RETENTION_DAYS: '0' })).toThrow(/ENGRAM_RETENTION_DAYS/)
    expect(() => loadEnv({ ENGRAM_MAINTENANCE: 'sometimes' })).toThrow(/ENGRAM_MAINTENANCE/)
  })

  it('reads the context builder’s window and a checked JSON object of its other rules (issue 17)', () => {
    const env = loadEnv({
      ENGRAM_CONTEXT_WINDOW: '200000',
      ENGRAM_CONTEXT_BUILDER_RULES: '{"memoryShare":0.6,"weights":{"similarity":0.8}}',
    })
    expect(env.ENGRAM_CONTEXT_WINDOW).toBe(200_000)
    expect(env.ENGRAM_CONTEXT_BUILDER_RULES).toEqual({
      memoryShare: 0.6,
      weights: { recency: 0.3, similarity: 0.8, importance: 0.2 },
    })
    expect(loadEnv({}).ENGRAM_CONTEXT_BUILDER_RULES).toBeUndefined()
    expect(() => loadEnv({ ENGRAM_CONTEXT_WINDOW: '999' })).toThrow(/ENGRAM_CONTEXT_WINDOW/)
    for (const bad of ['{"memoryShare":1.5}', '{"weights":{"recency":-1}}', '{"window":1}', '[1'])
      expect(() => loadEnv({ ENGRAM_CONTEXT_BUILDER_RULES: bad })).toThrow(/ENGRAM_CONTEXT_BUILDER_RULES/)
  })

  it('reads the members a shared memory pool may hold, within its bounds', () => {
    expect(loadEnv({ ENGRAM_POOL_MAX_MEMBERS: '50' }).ENGRAM_POOL_MAX_MEMBERS).toBe(50)
    expect(loadEnv({}).ENGRAM_POOL_MAX_MEMBERS).toBeUndefined()
    for (const bad of ['0', '100001', 'many'])
      expect(() => loadEnv({ ENGRAM_POOL_MAX_MEMBERS: bad })).toThrow(/ENGRAM_POOL_MAX_MEMBERS/)
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
          DATABASE_URL: 'mysql://host/engram',
          ENGRAM_DB_POOL_SIZE: '0',
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
      'ENGRAM_DB_POOL_SIZE',
    ]) {
      expect(error?.message).toContain(name)
    }
  })

  it('selects Postgres by a postgres:// URL, with a pool of 10 unless configured', () => {
    const env = loadEnv({ DATABASE_URL: 'postgres://engram:secret@db:5432/engram' })
    expect(env).toMatchObject({
      DATABASE_URL: 'postgres://engram:secret@db:5432/engram',
      ENGRAM_DB_POOL_SIZE: 10,
    })
    expect(
      loadEnv({ DATABASE_URL: 'postgresql://db/engram', ENGRAM_DB_POOL_SIZE: '200' }).ENGRAM_DB_POOL_SIZE,
    ).toBe(200)
    expect(() => loadEnv({ ENGRAM_DB_POOL_SIZE: '201' })).toThrow(/ENGRAM_DB_POOL_SIZE: must be at most 200/)
  })

  it('bounds the batch of concurrent appends (Postgres bind parameters), unset leaving the adapter its default', () => {
    expect(loadEnv({}).ENGRAM_DB_APPEND_BATCH).toBeUndefined()
    expect(loadEnv({ ENGRAM_DB_APPEND_BATCH: '1' }).ENGRAM_DB_APPEND_BATCH).toBe(1)
    expect(loadEnv({ ENGRAM_DB_APPEND_BATCH: '4000' }).ENGRAM_DB_APPEND_BATCH).toBe(4000)
    expect(() => loadEnv({ ENGRAM_DB_APPEND_BATCH: '0' })).toThrow(
      /ENGRAM_DB_APPEND_BATCH: must be at least 1/,
    )
    expect(() => loadEnv({ ENGRAM_DB_APPEND_BATCH: '4001' })).toThrow(
      /ENGRAM_DB_APPEND_BATCH: must be at most 4000/,
    )
    expect(() => loadEnv({ ENGRAM_DB_APPEND_BATCH: '2.5' })).toThrow(/ENGRAM_DB_APPEND_BATCH/)
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

function configError(source: Record<string, string>): Error | undefined {
  try {
    loadEnv(source)
  } catch (e) {
    return e as Error
  }
  return undefined
}

describe('loadEnv: embedding providers', () => {
  const OPENAI = {
    ENGRAM_EMBEDDER: 'openai',
    ENGRAM_EMBEDDING_URL: 'http://127.0.0.1:11434/v1',
    ENGRAM_EMBEDDING_MODEL: 'm',
  }

  it('defaults to the offline hashing embedder', () => {
    const env = loadEnv({})
    expect(env).toMatchObject({
      ENGRAM_EMBEDDER: 'hashing',
      ENGRAM_EMBEDDING_BATCH_SIZE: 100,
      ENGRAM_EMBEDDING_TIMEOUT_MS: 60_000,
      ENGRAM_EMBEDDING_MODEL_PATH: DEFAULT_EMBEDDING_MODEL_PATH,
      ENGRAM_EMBEDDING_ALLOW_REMOTE: false,
    })
    expect(DEFAULT_EMBEDDING_MODEL_PATH).toBe(path.join(REPO_ROOT, 'data', 'models'))
    expect(env.ENGRAM_EMBEDDING_URL).toBeUndefined()
    expect(env.ENGRAM_EMBEDDING_DIMENSIONS).toBeUndefined()
  })

  it('reads an OpenAI-compatible configuration, empty variables unset', () => {
    expect(
      loadEnv({
        ...OPENAI,
        ENGRAM_EMBEDDING_API_KEY: 'sk-1',
        ENGRAM_EMBEDDING_DIMENSIONS: '',
        ENGRAM_EMBEDDING_BATCH_SIZE: '',
      }),
    ).toMatchObject({ ...OPENAI, ENGRAM_EMBEDDING_API_KEY: 'sk-1', ENGRAM_EMBEDDING_BATCH_SIZE: 100 })
  })

  it.each([
    ['ENGRAM_EMBEDDING_URL', { ENGRAM_EMBEDDER: 'openai', ENGRAM_EMBEDDING_MODEL: 'm' }],
    [
      'ENGRAM_EMBEDDING_URL',
      { ENGRAM_EMBEDDER: 'openai', ENGRAM_EMBEDDING_MODEL: 'm', ENGRAM_EMBEDDING_URL: '' },
    ],
    ['ENGRAM_EMBEDDING_MODEL', { ENGRAM_EMBEDDER: 'openai', ENGRAM_EMBEDDING_URL: 'http://x/v1' }],
    ['ENGRAM_EMBEDDING_MODEL', { ENGRAM_EMBEDDER: 'transformers' }],
  ])('requires %s for the chosen embedder', (variable, source) => {
    const error = configError(source)
    expect(error).toBeInstanceOf(EnvError)
    expect(error?.message).toContain(
      `${variable}: is required when ENGRAM_EMBEDDER=${source.ENGRAM_EMBEDDER}`,
    )
  })

  it('needs no URL or model for the default embedder', () => {
    expect(configError({ ENGRAM_EMBEDDER: 'hashing' })).toBeUndefined()
  })

  it.each([
    ['ENGRAM_EMBEDDER', 'word2vec'],
    ['ENGRAM_EMBEDDING_URL', 'not a url'],
    ['ENGRAM_EMBEDDING_URL', 'ftp://127.0.0.1/v1'],
    ['ENGRAM_EMBEDDING_DIMENSIONS', '0'],
    ['ENGRAM_EMBEDDING_DIMENSIONS', '16385'],
    ['ENGRAM_EMBEDDING_DIMENSIONS', '1.5'],
    ['ENGRAM_EMBEDDING_BATCH_SIZE', '0'],
    ['ENGRAM_EMBEDDING_BATCH_SIZE', '2049'],
    ['ENGRAM_EMBEDDING_TIMEOUT_MS', '99'],
    ['ENGRAM_EMBEDDING_TIMEOUT_MS', '600001'],
    ['ENGRAM_EMBEDDING_ALLOW_REMOTE', 'maybe'],
  ])('rejects %s=%s, naming the variable', (variable, value) => {
    const error = configError({ [variable]: value })
    expect(error).toBeInstanceOf(EnvError)
    expect(error?.message).toContain(`${variable}:`)
  })

  it('accepts the boundary values', () => {
    expect(
      loadEnv({
        ENGRAM_EMBEDDING_DIMENSIONS: '1',
        ENGRAM_EMBEDDING_BATCH_SIZE: '1',
        ENGRAM_EMBEDDING_TIMEOUT_MS: '100',
      }),
    ).toMatchObject({
      ENGRAM_EMBEDDING_DIMENSIONS: 1,
      ENGRAM_EMBEDDING_BATCH_SIZE: 1,
      ENGRAM_EMBEDDING_TIMEOUT_MS: 100,
    })
    expect(
      loadEnv({
        ENGRAM_EMBEDDING_DIMENSIONS: '16384',
        ENGRAM_EMBEDDING_BATCH_SIZE: '2048',
        ENGRAM_EMBEDDING_TIMEOUT_MS: '600000',
      }),
    ).toMatchObject({
      ENGRAM_EMBEDDING_DIMENSIONS: 16_384,
      ENGRAM_EMBEDDING_BATCH_SIZE: 2_048,
      ENGRAM_EMBEDDING_TIMEOUT_MS: 600_000,
    })
  })

  it('reads ALLOW_REMOTE as a boolean word, not as any non-empty string', () => {
    expect(loadEnv({ ENGRAM_EMBEDDING_ALLOW_REMOTE: 'false' }).ENGRAM_EMBEDDING_ALLOW_REMOTE).toBe(false)
    expect(loadEnv({ ENGRAM_EMBEDDING_ALLOW_REMOTE: '0' }).ENGRAM_EMBEDDING_ALLOW_REMOTE).toBe(false)
    expect(loadEnv({ ENGRAM_EMBEDDING_ALLOW_REMOTE: 'true' }).ENGRAM_EMBEDDING_ALLOW_REMOTE).toBe(true)
    expect(loadEnv({ ENGRAM_EMBEDDING_ALLOW_REMOTE: '1' }).ENGRAM_EMBEDDING_ALLOW_REMOTE).toBe(true)
  })

  it('resolves a relative model folder against the repository root', () => {
    expect(loadEnv({ ENGRAM_EMBEDDING_MODEL_PATH: 'models' }).ENGRAM_EMBEDDING_MODEL_PATH).toBe(
      path.join(REPO_ROOT, 'models'),
    )
    expect(loadEnv({ ENGRAM_EMBEDDING_MODEL_PATH: '/opt/models' }).ENGRAM_EMBEDDING_MODEL_PATH).toBe(
      '/opt/models',
    )
  })
})

describe('loadEnv: language model', () => {
  it('defaults to no model (offline formation) with the documented limits', () => {
    const env = loadEnv({})
    expect(env.ENGRAM_LLM_URL).toBeUndefined()
    expect(env.ENGRAM_LLM_MODEL).toBeUndefined()
    expect(env.ENGRAM_LLM_API_KEY).toBeUndefined()
    expect(env).toMatchObject({ ENGRAM_LLM_TIMEOUT_MS: 60_000, ENGRAM_LLM_MAX_CONCURRENCY: 4 })
  })

  it('reads an OpenAI-compatible configuration, empty variables unset', () => {
    expect(
      loadEnv({
        ENGRAM_LLM_URL: 'http://127.0.0.1:11434/v1',
        ENGRAM_LLM_MODEL: 'llama3.2',
        ENGRAM_LLM_API_KEY: 'sk-1',
        ENGRAM_LLM_TIMEOUT_MS: '',
        ENGRAM_LLM_MAX_CONCURRENCY: '8',
      }),
    ).toMatchObject({
      ENGRAM_LLM_URL: 'http://127.0.0.1:11434/v1',
      ENGRAM_LLM_MODEL: 'llama3.2',
      ENGRAM_LLM_API_KEY: 'sk-1',
      ENGRAM_LLM_TIMEOUT_MS: 60_000,
      ENGRAM_LLM_MAX_CONCURRENCY: 8,
    })
  })

  it.each([
    ['ENGRAM_LLM_MODEL', 'ENGRAM_LLM_URL', { ENGRAM_LLM_URL: 'https://api.example.com/v1' }],
    [
      'ENGRAM_LLM_MODEL',
      'ENGRAM_LLM_URL',
      { ENGRAM_LLM_URL: 'https://api.example.com/v1', ENGRAM_LLM_MODEL: '' },
    ],
    ['ENGRAM_LLM_URL', 'ENGRAM_LLM_MODEL', { ENGRAM_LLM_MODEL: 'gpt-4o-mini' }],
  ])('requires %s when %s is set', (missing, given, source) => {
    const error = configError(source)
    expect(error).toBeInstanceOf(EnvError)
    expect(error?.message).toContain(`${missing}: is required when ${given} is set`)
  })

  it.each([
    ['ENGRAM_LLM_URL', 'not a url'],
    ['ENGRAM_LLM_URL', 'ftp://127.0.0.1/v1'],
    ['ENGRAM_LLM_TIMEOUT_MS', '99'],
    ['ENGRAM_LLM_TIMEOUT_MS', '600001'],
    ['ENGRAM_LLM_TIMEOUT_MS', '1.5'],
    ['ENGRAM_LLM_MAX_CONCURRENCY', '0'],
    ['ENGRAM_LLM_MAX_CONCURRENCY', '65'],
    ['ENGRAM_LLM_MAX_CONCURRENCY', 'many'],
  ])('rejects %s=%s, naming the variable', (variable, value) => {
    const error = configError({
      ENGRAM_LLM_URL: 'http://127.0.0.1:8080/v1',
      ENGRAM_LLM_MODEL: 'm',
      [variable]: value,
    })
    expect(error).toBeInstanceOf(EnvError)
    expect(error?.message).toContain(`${variable}:`)
  })

  it('accepts the boundary values', () => {
    const llm = { ENGRAM_LLM_URL: 'http://127.0.0.1:8080', ENGRAM_LLM_MODEL: 'm' }
    expect(loadEnv({ ...llm, ENGRAM_LLM_TIMEOUT_MS: '100', ENGRAM_LLM_MAX_CONCURRENCY: '1' })).toMatchObject({
      ENGRAM_LLM_TIMEOUT_MS: 100,
      ENGRAM_LLM_MAX_CONCURRENCY: 1,
    })
    expect(
      loadEnv({ ...llm, ENGRAM_LLM_TIMEOUT_MS: '600000', ENGRAM_LLM_MAX_CONCURRENCY: '64' }),
    ).toMatchObject({
      ENGRAM_LLM_TIMEOUT_MS: 600_000,
      ENGRAM_LLM_MAX_CONCURRENCY: 64,
    })
  })
})

describe('loadEnv: search access tracking (issue 18)', () => {
  it('writes accesses every second, 10,000 pending at most, by default; 0 writes them in the search', () => {
    expect(loadEnv({})).toMatchObject({
      ENGRAM_SEARCH_ACCESS_FLUSH_MS: 1_000,
      ENGRAM_SEARCH_ACCESS_MAX_PENDING: 10_000,
    })
    expect(
      loadEnv({ ENGRAM_SEARCH_ACCESS_FLUSH_MS: '0', ENGRAM_SEARCH_ACCESS_MAX_PENDING: '1' }),
    ).toMatchObject({ ENGRAM_SEARCH_ACCESS_FLUSH_MS: 0, ENGRAM_SEARCH_ACCESS_MAX_PENDING: 1 })
  })

  it('names an interval or a cap out of bounds', () => {
    for (const ms of ['-1', '60001', '0.5', 'soon'])
      expect(configError({ ENGRAM_SEARCH_ACCESS_FLUSH_MS: ms })?.message).toContain(
        'ENGRAM_SEARCH_ACCESS_FLUSH_MS',
      )
    for (const cap of ['0', '1000001'])
      expect(configError({ ENGRAM_SEARCH_ACCESS_MAX_PENDING: cap })?.message).toContain(
        'ENGRAM_SEARCH_ACCESS_MAX_PENDING',
      )
  })
})

describe('loadEnv: the settings of issue 18 that take a switch or a small range', () => {
  it('defaults to one process, a 2 ms lock wait, the lexical index on, a 100 ms catch-up and the SIMD kernel from 1,024 vectors', () => {
    expect(loadEnv({})).toMatchObject({
      ENGRAM_WORKERS: 1,
      ENGRAM_SQLITE_LOCK_WAIT_MS: 2,
      ENGRAM_SQLITE_SAVEPOINTS: 'on-failure',
      ENGRAM_SQLITE_APPEND_INSERTS: 'per-commit',
      ENGRAM_SQLITE_APPENDS_PER_GROUP: 256,
      ENGRAM_SQLITE_NEW_ROW_JOBS: 'plain',
      ENGRAM_LEXICAL_INDEX: 'on',
      ENGRAM_LEXICAL_INDEX_REFRESH_MS: 100,
      ENGRAM_DEBOUNCE_GRANULARITY_MS: 500,
      ENGRAM_SEARCH_DIALOGUE_READS: 'index',
      ENGRAM_SEARCH_CANDIDATE_ROWS: 'pool',
      ENGRAM_VECTOR_KERNEL_ABOVE: DEFAULT_KERNEL_ABOVE,
      ENGRAM_VECTOR_KERNEL: 'auto',
    })
    expect(DEFAULT_KERNEL_ABOVE).toBe(1_024)
    expect(
      loadEnv({
        ENGRAM_DEBOUNCE_GRANULARITY_MS: '0',
        ENGRAM_WORKERS: '64',
        ENGRAM_SQLITE_LOCK_WAIT_MS: '0',
        ENGRAM_SQLITE_SAVEPOINTS: 'each',
        ENGRAM_SQLITE_APPEND_INSERTS: 'per-append',
        ENGRAM_SQLITE_APPENDS_PER_GROUP: '1',
        ENGRAM_SQLITE_NEW_ROW_JOBS: 'checked',
        ENGRAM_LEXICAL_INDEX: 'off',
        ENGRAM_LEXICAL_INDEX_REFRESH_MS: '60000',
        ENGRAM_SEARCH_DIALOGUE_READS: 'all',
        ENGRAM_SEARCH_CANDIDATE_ROWS: 'all',
        ENGRAM_VECTOR_KERNEL_ABOVE: '0',
        ENGRAM_VECTOR_KERNEL: 'javascript',
      }),
    ).toMatchObject({
      ENGRAM_DEBOUNCE_GRANULARITY_MS: 0,
      ENGRAM_WORKERS: 64,
      ENGRAM_SQLITE_LOCK_WAIT_MS: 0,
      ENGRAM_SQLITE_SAVEPOINTS: 'each',
      ENGRAM_SQLITE_APPEND_INSERTS: 'per-append',
      ENGRAM_SQLITE_APPENDS_PER_GROUP: 1,
      ENGRAM_SQLITE_NEW_ROW_JOBS: 'checked',
      ENGRAM_LEXICAL_INDEX: 'off',
      ENGRAM_LEXICAL_INDEX_REFRESH_MS: 60_000,
      ENGRAM_SEARCH_DIALOGUE_READS: 'all',
      ENGRAM_SEARCH_CANDIDATE_ROWS: 'all',
      ENGRAM_VECTOR_KERNEL_ABOVE: 0,
      ENGRAM_VECTOR_KERNEL: 'javascript',
    })
  })

  it('names each one past its limit', () => {
    const bad: [string, string[]][] = [
      ['ENGRAM_WORKERS', ['0', '65', '1.5', 'many']],
      ['ENGRAM_SQLITE_LOCK_WAIT_MS', ['-1', '1001', 'soon']],
      ['ENGRAM_SQLITE_SAVEPOINTS', ['none', 'EACH']],
      ['ENGRAM_SQLITE_APPEND_INSERTS', ['per-batch', 'PER-COMMIT']],
      ['ENGRAM_SQLITE_APPENDS_PER_GROUP', ['0', '4097', '1.5', 'many']],
      ['ENGRAM_SQLITE_NEW_ROW_JOBS', ['unchecked', 'PLAIN']],
      ['ENGRAM_LEXICAL_INDEX', ['yes', 'ON']],
      ['ENGRAM_SEARCH_DIALOGUE_READS', ['some', 'ALL']],
      ['ENGRAM_SEARCH_CANDIDATE_ROWS', ['few', 'POOL']],
      ['ENGRAM_LEXICAL_INDEX_REFRESH_MS', ['-1', '60001', '0.5']],
      ['ENGRAM_LEXICAL_INDEX_MAX_INDEXES', ['0', '1000001']],
      ['ENGRAM_VECTOR_KERNEL_ABOVE', ['-1', '1000000001', '1.5', 'big']],
      ['ENGRAM_VECTOR_KERNEL', ['simd', 'off']],
      ['ENGRAM_OPTIMIZER_CACHED_ENTRIES', ['10000001']],
      ['ENGRAM_MESSAGE_TOKEN_COUNTS', ['-1', '10000001', '1.5']],
      ['ENGRAM_DEBOUNCE_GRANULARITY_MS', ['-1', '60001', '0.5']],
    ]
    for (const [name, values] of bad)
      for (const value of values)
        expect(configError({ [name]: value })?.message, `${name}=${value}`).toContain(name)
  })
})

describe('loadEnv: the in-process lexical indexes (issue 18)', () => {
  it('bounds them by count and megabytes, with defaults, and names a bad bound', () => {
    expect(loadEnv({})).toMatchObject({
      ENGRAM_LEXICAL_INDEX_MAX_INDEXES: 256,
      ENGRAM_LEXICAL_INDEX_MAX_MB: 1_024,
    })
    expect(
      loadEnv({ ENGRAM_LEXICAL_INDEX_MAX_INDEXES: '8', ENGRAM_LEXICAL_INDEX_MAX_MB: '64' }),
    ).toMatchObject({ ENGRAM_LEXICAL_INDEX_MAX_INDEXES: 8, ENGRAM_LEXICAL_INDEX_MAX_MB: 64 })
    for (const bad of ['0', '-3', 'lots'])
      expect(configError({ ENGRAM_LEXICAL_INDEX_MAX_MB: bad })?.message).toContain(
        'ENGRAM_LEXICAL_INDEX_MAX_MB',
      )
  })
})

describe('loadEnv: lexical search planning', () => {
  it('defaults to the core plan and accepts the bounds', () => {
    expect(loadEnv({})).toMatchObject({
      ENGRAM_SEARCH_COMMON_TERM_SHARE: 0.1,
      ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS: 20_000,
    })
    expect(
      loadEnv({ ENGRAM_SEARCH_COMMON_TERM_SHARE: '1', ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS: '0' }),
    ).toMatchObject({ ENGRAM_SEARCH_COMMON_TERM_SHARE: 1, ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS: 0 })
  })

  it('names a share outside (0, 1] and a count that is not a whole number', () => {
    for (const share of ['0', '1.5', 'often']) {
      expect(configError({ ENGRAM_SEARCH_COMMON_TERM_SHARE: share })?.message).toContain(
        'ENGRAM_SEARCH_COMMON_TERM_SHARE',
      )
    }
    for (const count of ['-1', '2.5', '1000000001']) {
      expect(configError({ ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS: count })?.message).toContain(
        'ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS',
      )
    }
  })
})

describe('loadEnv: Redis', () => {
  it('is off by default, with the engram prefix', () => {
    const env = loadEnv({})
    expect(env.REDIS_URL).toBeUndefined()
    expect(env.ENGRAM_REDIS_PREFIX).toBe('engram')
  })

  it('accepts redis:// and rediss:// URLs and a prefix', () => {
    expect(
      loadEnv({ REDIS_URL: 'redis://127.0.0.1:6379', ENGRAM_REDIS_PREFIX: 'team-a:engram' }),
    ).toMatchObject({
      REDIS_URL: 'redis://127.0.0.1:6379',
      ENGRAM_REDIS_PREFIX: 'team-a:engram',
    })
    expect(loadEnv({ REDIS_URL: 'rediss://user:secret@cache.internal:6380/2' }).REDIS_URL).toBe(
      'rediss://user:secret@cache.internal:6380/2',
    )
  })

  it('names a URL that is not Redis and a prefix with characters Redis patterns treat specially', () => {
    for (const url of ['http://127.0.0.1:6379', 'postgres://localhost/x', '127.0.0.1:6379', 'redis']) {
      expect(configError({ REDIS_URL: url })?.message).toMatch(/REDIS_URL: must be a Redis URL/)
    }
    for (const prefix of ['eng*ram', 'a b', 'x'.repeat(65)]) {
      expect(configError({ ENGRAM_REDIS_PREFIX: prefix })?.message).toContain('ENGRAM_REDIS_PREFIX')
    }
  })
})

describe('loadEnv: the L2 episodic layer', () => {
  it('keeps spec 002’s 24 hours and bus-redis’s bound by default', () => {
    const env = loadEnv({})
    expect(env.ENGRAM_L2_TTL_SECONDS * 1000).toBe(DEFAULT_EPISODIC_TTL_MS)
    expect(env.ENGRAM_L2_TTL_SECONDS).toBe(24 * 60 * 60)
    expect(env.ENGRAM_L2_MAX_MESSAGES).toBe(DEFAULT_EPISODIC_MAX_MESSAGES)
    expect(loadEnv({ ENGRAM_L2_TTL_SECONDS: '3600', ENGRAM_L2_MAX_MESSAGES: '50' })).toMatchObject({
      ENGRAM_L2_TTL_SECONDS: 3600,
      ENGRAM_L2_MAX_MESSAGES: 50,
    })
  })

  it('names the variable and its limit when out of range', () => {
    for (const value of ['0', '-1', '2592001', 'a day']) {
      expect(configError({ ENGRAM_L2_TTL_SECONDS: value })?.message).toContain('ENGRAM_L2_TTL_SECONDS')
    }
    for (const value of ['0', '10001', '1.5']) {
      expect(configError({ ENGRAM_L2_MAX_MESSAGES: value })?.message).toContain('ENGRAM_L2_MAX_MESSAGES')
    }
    expect(configError({ ENGRAM_L2_MAX_MESSAGES: '10001' })?.message).toContain('10000')
  })
})

describe('loadEnv: optimizer leases', () => {
  it('defaults to a 30 s lease renewed every 10 s', () => {
    expect(loadEnv({})).toMatchObject({
      ENGRAM_OPTIMIZER_LEASE_TTL_MS: 30_000,
      ENGRAM_OPTIMIZER_LEASE_RENEW_MS: 10_000,
    })
    expect(
      loadEnv({ ENGRAM_OPTIMIZER_LEASE_TTL_MS: '1500', ENGRAM_OPTIMIZER_LEASE_RENEW_MS: '300' }),
    ).toMatchObject({ ENGRAM_OPTIMIZER_LEASE_TTL_MS: 1_500, ENGRAM_OPTIMIZER_LEASE_RENEW_MS: 300 })
  })

  it('names a renewal interval not below the TTL, and values out of range', () => {
    expect(
      configError({ ENGRAM_OPTIMIZER_LEASE_TTL_MS: '1000', ENGRAM_OPTIMIZER_LEASE_RENEW_MS: '1000' })
        ?.message,
    ).toContain('ENGRAM_OPTIMIZER_LEASE_RENEW_MS: must be below ENGRAM_OPTIMIZER_LEASE_TTL_MS (1000)')
    expect(configError({ ENGRAM_OPTIMIZER_LEASE_TTL_MS: '50' })?.message).toContain(
      'ENGRAM_OPTIMIZER_LEASE_TTL_MS',
    )
  })
})

describe('loadEnv: the optimizer kept entries (issue 18)', () => {
  it('keeps 250,000 entries by default, 0 turns keeping off, and a negative count is refused', () => {
    expect(loadEnv({}).ENGRAM_OPTIMIZER_CACHED_ENTRIES).toBe(250_000)
    expect(loadEnv({ ENGRAM_OPTIMIZER_CACHED_ENTRIES: '0' }).ENGRAM_OPTIMIZER_CACHED_ENTRIES).toBe(0)
    expect(configError({ ENGRAM_OPTIMIZER_CACHED_ENTRIES: '-1' })?.message).toContain(
      'ENGRAM_OPTIMIZER_CACHED_ENTRIES',
    )
  })
})

describe('loadEnv: the kept token counts of messages (issue 18)', () => {
  it('keeps 100,000 by default and 0 counts every message afresh', () => {
    expect(loadEnv({}).ENGRAM_MESSAGE_TOKEN_COUNTS).toBe(100_000)
    expect(loadEnv({ ENGRAM_MESSAGE_TOKEN_COUNTS: '0' }).ENGRAM_MESSAGE_TOKEN_COUNTS).toBe(0)
  })
})

describe('loadEnv: metrics', () => {
  it('samples every 10 s over the last hour, /metrics for the admin key alone, by default', () => {
    const env = loadEnv({})
    expect(env).toMatchObject({ ENGRAM_METRICS_SAMPLE_MS: 10_000, ENGRAM_METRICS_WINDOW_MS: 3_600_000 })
    expect(env.ENGRAM_METRICS_TOKEN).toBeUndefined()
    expect(env.ENGRAM_METRICS_BIND).toBeUndefined()
    expect(
      loadEnv({
        ENGRAM_METRICS_TOKEN: 'a-scrape-token-0123',
        ENGRAM_METRICS_BIND: '127.0.0.1:9464',
        ENGRAM_METRICS_SAMPLE_MS: '1000',
        ENGRAM_METRICS_WINDOW_MS: '600000',
      }),
    ).toMatchObject({
      ENGRAM_METRICS_TOKEN: 'a-scrape-token-0123',
      ENGRAM_METRICS_BIND: '127.0.0.1:9464',
      ENGRAM_METRICS_SAMPLE_MS: 1_000,
      ENGRAM_METRICS_WINDOW_MS: 600_000,
    })
    expect(loadEnv({ ENGRAM_METRICS_BIND: '[::1]:9464' }).ENGRAM_METRICS_BIND).toBe('[::1]:9464')
  })

  it('names a short token, a bind that is not host:port, an interval out of range and a ring too long', () => {
    expect(configError({ ENGRAM_METRICS_TOKEN: 'short' })?.message).toContain('ENGRAM_METRICS_TOKEN')
    for (const bind of ['9464', 'localhost', 'host:99999', 'http://host:9464'])
      expect(configError({ ENGRAM_METRICS_BIND: bind })?.message, bind).toContain('ENGRAM_METRICS_BIND')
    for (const value of ['999', '600001', 'fast'])
      expect(configError({ ENGRAM_METRICS_SAMPLE_MS: value })?.message).toContain('ENGRAM_METRICS_SAMPLE_MS')
    expect(configError({ ENGRAM_METRICS_WINDOW_MS: '59999' })?.message).toContain('ENGRAM_METRICS_WINDOW_MS')
    // A sample a second over a day is 86,400 samples: past the ring's 10,000.
    expect(
      configError({ ENGRAM_METRICS_SAMPLE_MS: '1000', ENGRAM_METRICS_WINDOW_MS: '86400000' })?.message,
    ).toContain('10000')
  })
})

describe('loadEnv: the working context (spec 002’s L1, issue 17)', () => {
  it('keeps core’s defaults when unset and takes good values', () => {
    expect(workingContextRulesOf(loadEnv({}))).toEqual({})
    const env = loadEnv({
      ENGRAM_WORKING_CONTEXT_MAX_AGENTS: '50',
      ENGRAM_WORKING_CONTEXT_MAX_BYTES: '100000000',
      ENGRAM_WORKING_CONTEXT_TTL_SECONDS: '600',
      ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS: '8000',
      ENGRAM_WORKING_CONTEXT_CONVERSATION: 'agent-scratch',
    })
    expect(workingContextRulesOf(env)).toEqual({
      maxAgents: 50,
      maxBytes: 100_000_000,
      ttlMs: 600_000,
      flushThresholdTokens: 8_000,
      defaultConversationId: 'agent-scratch',
    })
  })

  it('names the variable of a value core’s rules refuse', () => {
    expect(configError({ ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS: '0' })?.message).toContain(
      'ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS',
    )
    expect(configError({ ENGRAM_WORKING_CONTEXT_MAX_AGENTS: '2.5' })?.message).toContain(
      'ENGRAM_WORKING_CONTEXT_MAX_AGENTS',
    )
    expect(configError({ ENGRAM_WORKING_CONTEXT_TTL_SECONDS: '0' })?.message).toContain(
      'ENGRAM_WORKING_CONTEXT_TTL_SECONDS',
    )
    expect(configError({ ENGRAM_WORKING_CONTEXT_CONVERSATION: 'has spaces' })?.message).toContain(
      'ENGRAM_WORKING_CONTEXT_CONVERSATION',
    )
    // A whole LRU smaller than one context's limit (10 MB by default) is refused too.
    expect(configError({ ENGRAM_WORKING_CONTEXT_MAX_BYTES: '2048' })?.message).toMatch(
      /ENGRAM_WORKING_CONTEXT_MAX_BYTES|maxContextBytes/,
    )
  })
})
