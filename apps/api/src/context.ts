import type { Viewer } from './auth.ts'
import type { Services } from './services/services.ts'

/** Per-operation context: the shared services plus the caller resolved from its key. */
export interface Context {
  services: Services
  viewer: Viewer
  /** Agents this operation may write to (a mutation's scopes): their caches are invalidated when it ends. */
  writes: Set<string>
  isMutation: boolean
}
