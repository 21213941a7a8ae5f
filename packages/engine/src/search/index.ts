// Search's public surface: the service, what it takes and gives, and the collaborators it calls.

// The memory filter search accepts is the memory items' own (same limits and messages).
export { assertMemoryFilter, type MemoryFilter } from '../memory-items/memory-item-rules.ts'
export type { EmbeddingKind, SearchableVectors, SearchEmbeddings, SearchMemories } from './collaborators.ts'
export {
  AccessBuffer,
  type AccessFlushConfig,
  AccessFlushConfigSchema,
  DEFAULT_ACCESS_FLUSH,
} from './search-access.ts'
export type { DialogueReads } from './search-context.ts'
export { type DialogueTurn, episodesAround, episodesOf, neighbours } from './search-dialogue.ts'
export { type LexicalRun, LexicalSearch } from './search-lexical.ts'
export type { CandidateRows } from './search-rows.ts'
export * from './search-service.ts'
