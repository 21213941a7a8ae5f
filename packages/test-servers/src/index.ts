// inject('postgresUrl') / inject('redisUrl') are typed wherever the harness is imported.
import './provided-context.ts'

export * from './servers.ts'
