export { failureOf } from './failures.ts'
export { type GuardedMessage, guardMessages } from './guard-messages.ts'
export {
  createOperations,
  failureFrom,
  type OperationCall,
  type OperationHandlers,
  type Operations,
  operationHandlers,
  type QueryOrMutationName,
  type SubscriptionName,
} from './operations.ts'
export { agentScopeOf, listScopeOf, type Principal, requireOperator, scopeOf } from './principal.ts'
export {
  type RememberThisRequest,
  rememberThisMemory,
  type SearchRequest,
  searchOptionsOf,
} from './requests.ts'
export { eventStream } from './streams.ts'
export { formationActivityEventOut, graphEntityOut, graphRelationshipOut } from './wire.ts'
