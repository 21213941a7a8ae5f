import { postgresInitializer } from './initializers/postgres.ts'
import { describePortSpecs } from './spec/all.ts'
import { describeContextSources } from './spec/context-sources.ts'
import { describeOptimizerKnowledge } from './spec/optimizer.ts'

// The same specs as SQLite's, on a real postgresql-15 (packages/test-servers).
describePortSpecs(postgresInitializer)
describeOptimizerKnowledge(postgresInitializer)
describeContextSources(postgresInitializer)
