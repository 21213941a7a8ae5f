import { inMemoryInitializer } from './initializers/in-memory.ts'
import { sqliteInitializer } from './initializers/sqlite.ts'
import { describeAgentArchive } from './spec/agent-archive.ts'
import { describeAgentData, describeSqlitePurge } from './spec/agent-data.ts'
import { describeAgentRecords } from './spec/agent-records.ts'
import { describeBackups } from './spec/backups.ts'
import { describeContextSources } from './spec/context-sources.ts'
import { describeEmbeddings } from './spec/embeddings.ts'
import { describeFormation } from './spec/formation.ts'
import { describeFullText } from './spec/full-text.ts'
import { describeHistory } from './spec/history.ts'
import { describeJobs, describeJobsAcrossWorkers } from './spec/jobs.ts'
import { describeKnowledge } from './spec/knowledge.ts'
import { describeMemoryItems } from './spec/memory-items.ts'
import { describeOptimizer, describeOptimizerKnowledge } from './spec/optimizer.ts'
import { describeRecallSources } from './spec/recall-sources.ts'
import { describeRepositories } from './spec/repositories.ts'
import { describeSummaryAndProfileStores } from './spec/summaries-profiles.ts'
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
  describeJobsAcrossWorkers(initializer)
  describeFormation(initializer)
  describeHistory(initializer)
  describeRecallSources(initializer)
  describeEmbeddings(initializer)
  describeMemoryItems(initializer)
  describeKnowledge(initializer)
  describeAgentRecords(initializer)
  describeOptimizer(initializer)
  describeAgentData(initializer)
  describeAgentArchive(initializer)
  describeBackups(initializer)
  describeSummaryAndProfileStores(initializer)
}

// Specs that write their rows through SQLite's client (knowledge, memory items, messages and the
// file itself), for which the in-memory adapter holds nothing.
describeOptimizerKnowledge(sqliteInitializer)
describeContextSources(sqliteInitializer)
describeSqlitePurge(sqliteInitializer)
