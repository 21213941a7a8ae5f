// Every spec of the storage ports, for one adapter's initializer: each adapter runs all of them.

import type { StorageInitializer } from '../types.ts'
import { describeAgentArchive } from './agent-archive.ts'
import { describeAgentData } from './agent-data.ts'
import { describeAgentMemoryTransfer } from './agent-memory.ts'
import { describeAgentRecords } from './agent-records.ts'
import { describeConcurrentAppends } from './appends.ts'
import { describeBackups } from './backups.ts'
import { describeEmbeddings } from './embeddings.ts'
import { describeFormation } from './formation.ts'
import { describeFullText } from './full-text.ts'
import { describeGraph } from './graph.ts'
import { describeHistory } from './history.ts'
import { describeJobs, describeJobsAcrossWorkers } from './jobs.ts'
import { describeKnowledge } from './knowledge.ts'
import { describeMemoryItems } from './memory-items.ts'
import { describeOptimizer } from './optimizer.ts'
import { describePools } from './pools.ts'
import { describeRecallSources } from './recall-sources.ts'
import { describeRepositories } from './repositories.ts'
import { describeSummaryAndProfileStores } from './summaries-profiles.ts'
import { describeTextFilters } from './text-filters.ts'
import { describeTrajectories } from './trajectories.ts'
import { describeTransactions } from './transactions.ts'
import { describeVectors } from './vectors.ts'

export function describePortSpecs(initializer: StorageInitializer): void {
  describeRepositories(initializer)
  describeTransactions(initializer)
  describeFullText(initializer)
  describeVectors(initializer)
  describeJobs(initializer)
  describeJobsAcrossWorkers(initializer)
  describeFormation(initializer)
  describeHistory(initializer)
  describeConcurrentAppends(initializer)
  describeRecallSources(initializer)
  describeEmbeddings(initializer)
  describeMemoryItems(initializer)
  describeKnowledge(initializer)
  describeGraph(initializer)
  describeTrajectories(initializer)
  describePools(initializer)
  describeAgentRecords(initializer)
  describeOptimizer(initializer)
  describeAgentData(initializer)
  describeAgentArchive(initializer)
  describeBackups(initializer)
  describeSummaryAndProfileStores(initializer)
  describeTextFilters(initializer)
  describeAgentMemoryTransfer(initializer)
}
