export * from './session-manager.ts'
export * from './in-memory-session-repository.ts'
