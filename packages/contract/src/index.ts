export {
  type Catalog,
  catalog,
  type GraphqlBinding,
  type InputOf,
  OPERATION_NAMES,
  type OperationKind,
  type OperationName,
  type OperationSpec,
  type OutputOf,
  type ParsedInputOf,
} from './catalog.ts'
export type { EngramClient, EngramSubscription } from './client.ts'
export {
  describeFailure,
  EngramError,
  type EngramFailure,
  ERROR_CODES,
  type ErrorCode,
  type FieldIssue,
  failure,
  ok,
  type Result,
  unwrap,
} from './errors.ts'
export { AGENT_ID_PATTERN, CONTRACT_LIMITS, CONVERSATION_ID_PATTERN, type ContractLimits } from './limits.ts'
export * from './schemas.ts'
export { fieldIssues, parseInput } from './validate.ts'
