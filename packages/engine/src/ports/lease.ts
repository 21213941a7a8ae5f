/**
 * Leases on named keys, so several replicas of the engine agree on who does a piece of background
 * work (issue 14: one replica runs a given agent's optimizer). A lease has one holder at a time
 * and lapses after its TTL unless the holder renews it, so the work of a replica that dies is
 * taken over once its leases expire. Only the holder renews or releases: a replica that lost its
 * lease (it stalled past the TTL, another took it) cannot extend or drop the new holder's.
 *
 * Keys are the engine's (`optimizer:<agent>`); an adapter names them in its own space (Redis:
 * `<prefix>:lease:<key>`). A failure to reach the lease store is thrown, never read as granted.
 */
export interface Lease {
  /**
   * Takes the key for `holder` for `ttlMs` when nobody holds it; a holder that asks again keeps
   * it with a fresh TTL. True when `holder` holds it afterwards.
   */
  acquire(key: string, holder: string, ttlMs: number): Promise<boolean>
  /** Extends the holder's lease to `ttlMs` from now; false when it is not (or no longer) theirs. */
  renew(key: string, holder: string, ttlMs: number): Promise<boolean>
  /** Lets the key go when `holder` holds it (another holder's lease is left alone); true when it did. */
  release(key: string, holder: string): Promise<boolean>
}
