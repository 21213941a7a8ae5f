import { inMemoryInitializer } from './initializers/in-memory.ts'
import { sqliteInitializer } from './initializers/sqlite.ts'
import { describeSqlitePurge } from './spec/agent-data.ts'
import { describePortSpecs } from './spec/all.ts'
import { describeContextSources } from './spec/context-sources.ts'
import { describeOptimizerKnowledge } from './spec/optimizer.ts'

// The in-memory adapter runs the same specs as SQLite: that keeps the specs honest (they describe
// the port, not one adapter's quirks) and the test adapter faithful. Postgres runs them in
// conformance-postgres.test.ts (its own worker and database).
for (const initializer of [inMemoryInitializer, sqliteInitializer]) describePortSpecs(initializer)

// Specs that write their rows through SQLite's client (knowledge, memory items, messages and the
// file itself), for which the in-memory adapter holds nothing.
describeOptimizerKnowledge(sqliteInitializer)
describeContextSources(sqliteInitializer)
describeSqlitePurge(sqliteInitializer)
