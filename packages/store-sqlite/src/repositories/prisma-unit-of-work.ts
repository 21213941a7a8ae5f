import type { Repositories, TransactionOptions, UnitOfWork } from '@engram/engine'
import type { Database } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import { prismaRepositories } from './prisma-repositories.ts'

/** One Prisma interactive transaction per unit of work: committed when `fn` resolves, rolled back when it throws. */
export class PrismaUnitOfWork implements UnitOfWork {
  constructor(
    private readonly db: Database,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {}

  transaction<T>(fn: (repositories: Repositories) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.db.$transaction((tx) => fn(prismaRepositories(tx, this.dialect)), {
      ...(options?.timeoutMs ? { timeout: options.timeoutMs } : {}),
      ...(options?.maxWaitMs ? { maxWait: options.maxWaitMs } : {}),
    })
  }
}
