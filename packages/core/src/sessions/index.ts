export * from './in-memory-session-repository.ts'
export * from './session-manager.ts'
