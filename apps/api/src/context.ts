import type { Viewer } from './auth.ts'
import type { Services } from './services/services.ts'

/** Per-operation context: the shared services plus the caller resolved from its key. */
export interface Context {
  services: Services
  viewer: Viewer
}
