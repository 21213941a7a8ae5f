import type { EngramClient } from '@engram/contract'
import { type ConnectOptions, connect } from './remote.ts'

export type {
  EngramClient,
  EngramFailure,
  EngramSubscription,
  ErrorCode,
  FieldIssue,
  InputOf,
  OperationName,
  OutputOf,
  Result,
} from '@engram/contract'
export { CONTRACT_LIMITS, catalog, describeFailure, EngramError, ERROR_CODES, unwrap } from '@engram/contract'
export type { ConnectOptions } from './remote.ts'

/**
 * Engram's client. `Engram.connect({ url, apiKey })` talks to a server. (`Engram.open({ path })`,
 * the engine in-process on one SQLite file, comes with the engine package: see the README.)
 */
export const Engram = {
  connect(options: ConnectOptions): EngramClient {
    return connect(options)
  },
}
