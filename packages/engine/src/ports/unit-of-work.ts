import type { Repositories } from './repositories.ts'

/**
 * Runs work that must land together (a message and its entry, an optimizer run and its totals, an
 * import): the repositories `fn` receives write in one transaction, committed when `fn` resolves
 * and rolled back when it throws (the error is rethrown).
 */
export interface UnitOfWork {
  transaction<T>(fn: (repositories: Repositories) => Promise<T>, options?: TransactionOptions): Promise<T>
}

/**
 * Bulk work (an import, clearing every agent) says how long it may hold the transaction: adapters
 * with interactive transactions (Prisma's) abandon one after a few seconds by default.
 */
export interface TransactionOptions {
  /** How long the work may run before the adapter rolls it back. */
  timeoutMs?: number
  /** How long to wait for the store's write lock before giving up. */
  maxWaitMs?: number
}
