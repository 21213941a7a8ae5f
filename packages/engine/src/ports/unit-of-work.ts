import type { Repositories } from './repositories.ts'

/**
 * Runs work that must land together (a message and its entry, an optimizer run and its totals, an
 * import): the repositories `fn` receives write in one transaction, committed when `fn` resolves
 * and rolled back when it throws (the error is rethrown).
 */
export interface UnitOfWork {
  transaction<T>(fn: (repositories: Repositories) => Promise<T>): Promise<T>
}
