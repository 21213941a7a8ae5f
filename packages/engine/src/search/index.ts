// Search's public surface: the service, what it takes and gives, and the collaborators it calls.
export type { EmbeddingKind, SearchableVectors, SearchEmbeddings, SearchMemories } from './collaborators.ts'
export {
  assertMemoryFilter,
  MAX_FILTER_SEARCH_CHARS,
  MAX_FILTER_TAG_CHARS,
  MAX_FILTER_TAGS,
  MAX_FILTER_USER_ID_CHARS,
  type MemoryFilter,
} from './memory-filter.ts'
export { type DialogueTurn, episodesOf, neighbours } from './search-dialogue.ts'
export { type LexicalRun, LexicalSearch } from './search-lexical.ts'
export * from './search-service.ts'
