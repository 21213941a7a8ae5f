export * from './pool-rules.ts'
