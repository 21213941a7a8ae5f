import type { TrajectoryRules } from './rules.ts'

/**
 * The selector cache: an element identity (an accessibility role and name, `button "Search"`) maps
 * to the selectors that found it, each with its successes and failures. A selector starting with
 * "@" is a snapshot reference: volatile, it changes between page loads, so it ranks after stable
 * selectors with the same record.
 */
export const isVolatileRef = (selector: string) => selector.startsWith('@')

export interface SelectorState {
  element: string
  selector: string
  successCount: number
  failureCount: number
  /** Failures since the last success. */
  consecutiveFailures: number
  lastUsedAt: Date
}

/** Known-good: it has worked, and has not failed selectorFailureLimit times in a row since. */
export const selectorIsKnownGood = (s: SelectorState, rules: Pick<TrajectoryRules, 'selectorFailureLimit'>) =>
  s.successCount > 0 && s.consecutiveFailures < rules.selectorFailureLimit

/** Best first: most successes, then fewest failures, stable before volatile, most recently used. */
export function compareSelectors(a: SelectorState, b: SelectorState): number {
  return (
    b.successCount - a.successCount ||
    a.failureCount - b.failureCount ||
    Number(isVolatileRef(a.selector)) - Number(isVolatileRef(b.selector)) ||
    b.lastUsedAt.getTime() - a.lastUsedAt.getTime() ||
    (a.selector < b.selector ? -1 : a.selector > b.selector ? 1 : 0)
  )
}

/** One observation applied to a selector's counters. */
export function observeSelector<T extends SelectorState>(s: T, outcome: 'SUCCESS' | 'FAILURE', at: Date): T {
  return outcome === 'SUCCESS'
    ? { ...s, successCount: s.successCount + 1, consecutiveFailures: 0, lastUsedAt: at }
    : {
        ...s,
        failureCount: s.failureCount + 1,
        consecutiveFailures: s.consecutiveFailures + 1,
        lastUsedAt: at,
      }
}
