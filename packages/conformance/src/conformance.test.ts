import { inMemoryInitializer } from './initializers/in-memory.ts'
import { sqliteInitializer } from './initializers/sqlite.ts'
import { describeAgentArchive } from './spec/agent-archive.ts'
import { describeBackups } from './spec/backups.ts'
import { describeFullText } from './spec/full-text.ts'
import { describeJobs } from './spec/jobs.ts'
import { describeRepositories } from './spec/repositories.ts'
import { describeTransactions } from './spec/transactions.ts'
import { describeVectors } from './spec/vectors.ts'

// The in-memory adapter runs the same specs as SQLite: that keeps the specs honest (they describe
// the port, not one adapter's quirks) and the test adapter faithful.
for (const initializer of [inMemoryInitializer, sqliteInitializer]) {
  describeRepositories(initializer)
  describeTransactions(initializer)
  describeFullText(initializer)
  describeVectors(initializer)
  describeJobs(initializer)
  describeAgentArchive(initializer)
  describeBackups(initializer)
}
