import type { TrajectoryMemoryRepository } from '@engram/engine'
import type { Database } from '../db/client.ts'
import { trajectoriesIn } from './sqlite-trajectories.ts'

/**
 * Trajectory memory on SQLite (and on Postgres through the shared view): Prisma's model API, the
 * same statements on both. The writes of several statements (observations, inserts with their
 * pruning, forgetting, restore) each run in one transaction.
 */
export function sqliteTrajectories(db: Database): TrajectoryMemoryRepository {
  const inTransaction = <T>(fn: (repository: TrajectoryMemoryRepository) => Promise<T>) =>
    db.$transaction((tx) => fn(trajectoriesIn(tx)))
  const repository = trajectoriesIn(db)
  const atomic = <K extends (typeof SEVERAL_STATEMENTS)[number]>(name: K) =>
    (async (...args: unknown[]) => {
      const run = () =>
        inTransaction((inner) => (inner[name] as (...a: unknown[]) => Promise<unknown>)(...args))
      try {
        return await run()
      } catch (error) {
        // Two first observations of one fact or selector at once (Postgres writers run together):
        // the loser's insert meets the winner's row, and its second attempt confirms that row.
        if (!FIRST_SIGHTINGS.has(name) || (error as { code?: string }).code !== 'P2002') throw error
        return run()
      }
    }) as TrajectoryMemoryRepository[K]
  return {
    ...repository,
    ...(Object.fromEntries(SEVERAL_STATEMENTS.map((name) => [name, atomic(name)])) as Pick<
      TrajectoryMemoryRepository,
      (typeof SEVERAL_STATEMENTS)[number]
    >),
  }
}

/** Writes that create a row on first sight, so may meet a concurrent creation of the same one. */
const FIRST_SIGHTINGS = new Set<string>(['observeFact', 'observeSelector', 'putFact', 'putSelector'])

/** The writes of several statements: each runs in one transaction. */
const SEVERAL_STATEMENTS = [
  'insertRun',
  'updateRun',
  'forgetRun',
  'insertTrajectory',
  'deleteTrajectory',
  'insertRunSession',
  'observeFact',
  'putFact',
  'deleteFact',
  'observeSelector',
  'putSelector',
  'deleteSelector',
  'updateHint',
  'forgetDomain',
  'forgetScope',
  'restore',
  'clear',
] as const
