// The conformance suite: one spec per port, each run against every adapter's initializer.
export { inMemoryInitializer } from './initializers/in-memory.ts'
export { sqliteInitializer } from './initializers/sqlite.ts'
export { describeFullText } from './spec/full-text.ts'
export { describeJobs } from './spec/jobs.ts'
export { describeRepositories } from './spec/repositories.ts'
export { describeTransactions } from './spec/transactions.ts'
export { describeVectors } from './spec/vectors.ts'
export { ManualClock, type StorageFixture, type StorageInitializer } from './types.ts'
