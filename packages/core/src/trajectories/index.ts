export { type AgentMemoryRecords, agentMemoryFiles } from './agent-memory-export.ts'
export {
  type AgentMemoryExtra,
  type AgentMemoryFile,
  type AgentMemoryImportPlan,
  type AgentMemoryPlace,
  agentMemoryPlace,
  BOOKKEEPING_KEY,
  type Bookkeeping,
  bookkeepingOf,
  type PlannedFact,
  type PlannedHint,
  type PlannedRun,
  type PlannedRunSession,
  type PlannedSelector,
  type PlannedStep,
  type PlannedTrajectory,
  type SkippedAgentMemoryFile,
  unknownFieldsOf,
} from './agent-memory-format.ts'
export {
  ACTION_VALUE_FIELDS,
  type AgentMemoryImportOptions,
  actionValueField,
  planAgentMemoryImport,
} from './agent-memory-import.ts'
export * from './app-facts.ts'
export * from './domains.ts'
export * from './records.ts'
export * from './rules.ts'
export * from './run-context.ts'
export * from './selectors.ts'
export * from './similarity.ts'
