import { MemoryItemService as EngineMemoryItemService, type MemoryFilter } from '@engram/engine'
import { memoryItemWhere, type Prisma } from '@engram/store-sqlite'

// The memory-item use cases live in @engram/engine (memory-items/). What remains here is the one
// thing the services still in apps/api need of them in Prisma's terms: the search and context
// services narrow their own Prisma reads of MemoryItem with `where`. It goes when they move.

export type { MemoryFilter, MemoryItemInput, MemoryItemView } from '@engram/engine'
export { safeJson } from '@engram/engine'
export { toMemoryItem } from '@engram/store-sqlite'

export class MemoryItemService extends EngineMemoryItemService {
  /** The filter (validated, valid now unless it says otherwise) as Prisma's where. */
  where(scope: string | null, filter: MemoryFilter): Prisma.MemoryItemWhereInput {
    return memoryItemWhere(scope, this.query(filter))
  }
}
