// The working context's GraphQL documents (issue 17), shared by its API, Redis, isolation and deletion tests.

export const ERRORS = `... on Error { __typename code message } ... on ValidationError { issues { field message limit } }`
const CONTEXT = `agentId conversationId scratchpad tokenCount flushThresholdTokens updatedAt expiresAt
  messages { id conversationId role content name toolCallId tokenCount at }
  toolResults { toolCallId conversationId name content isError tokenCount at }`
const CHANGE = `__typename ... on WorkingContextChange { context { ${CONTEXT} } flush { reason messages toolResults tokens conversationIds } } ${ERRORS}`

export const GET_WORKING_CONTEXT = `query($a: ID) { workingContext(agentId: $a) { __typename ... on WorkingContext { ${CONTEXT} } ${ERRORS} } }`
export const APPEND_WORKING_CONTEXT = `mutation($a: ID, $m: [WorkingMessageInput!]!, $c: String) {
  appendWorkingContext(agentId: $a, messages: $m, conversationId: $c) { ${CHANGE} } }`
export const SET_SCRATCHPAD = `mutation($a: ID, $s: String!) { setWorkingScratchpad(agentId: $a, scratchpad: $s) {
  __typename ... on WorkingContext { ${CONTEXT} } ${ERRORS} } }`
export const RECORD_TOOL_RESULT = `mutation($a: ID, $id: String!, $n: String!, $t: String!, $e: Boolean, $c: String) {
  recordToolResult(agentId: $a, toolCallId: $id, name: $n, content: $t, isError: $e, conversationId: $c) { ${CHANGE} } }`
export const FLUSH_WORKING_CONTEXT = `mutation($a: ID) { flushWorkingContext(agentId: $a) { ${CHANGE} } }`
export const CLEAR_WORKING_CONTEXT = `mutation($a: ID) { clearWorkingContext(agentId: $a) { __typename ... on WorkingContext { ${CONTEXT} } ${ERRORS} } }`
export const RECENT_MEMORY = `query($a: ID, $c: String, $l: Int) { recentMemory(agentId: $a, conversationId: $c, limit: $l) {
  __typename ... on QueryRecentMemorySuccess { data { id source conversationId role content name toolCallId tokenCount at } } ${ERRORS} } }`
