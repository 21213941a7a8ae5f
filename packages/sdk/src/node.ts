/**
 * `@engram/sdk/node`: helpers that need Node's file system, apart from the remote client (which
 * touches no files) and the embedded engine (which loads native modules).
 */
export {
  type AgentMemoryFile,
  readAgentMemoryDirectory,
  writeAgentMemoryDirectory,
} from './agent-memory-directory.ts'
