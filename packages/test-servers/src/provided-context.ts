// What the vitest globalSetup (vitest-global-setup.ts) hands to test files through inject().
declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's postgresql-15 server (maintenance database); test files create their own database. */
    postgresUrl: string
    /** The run's redis-server. */
    redisUrl: string
  }
}

export {}
