import { AgentSelect } from '../../../components/agent-select'
import { TimeAgo } from '../../../components/time-ago'
import { type ErrorPayload, gql, listAgents } from '../../../lib/api'
import { formatPercent, formatTokens } from '../../../lib/format'
import { ContextActions } from './context-actions'

export const dynamic = 'force-dynamic'

interface WorkingMessage {
  id: string
  conversationId: string
  role: string
  content: string
  name: string | null
  toolCallId: string | null
  tokenCount: number
  at: string
}
interface WorkingToolResult {
  toolCallId: string
  conversationId: string
  name: string
  content: string
  isError: boolean
  tokenCount: number
  at: string
}
interface WorkingContext {
  conversationId: string | null
  messages: WorkingMessage[]
  toolResults: WorkingToolResult[]
  scratchpad: string
  tokenCount: number
  flushThresholdTokens: number
  updatedAt: string | null
  expiresAt: string | null
}

const CONTEXT_FIELDS = `conversationId scratchpad tokenCount flushThresholdTokens updatedAt expiresAt
  messages { id conversationId role content name toolCallId tokenCount at }
  toolResults { toolCallId conversationId name content isError tokenCount at }`

/** Spec 002's L1 of one agent: what it holds now, how close it is to flushing, flush and clear. */
export default async function WorkingContextPage({
  searchParams,
}: {
  searchParams: Promise<{ agent?: string }>
}) {
  const params = await searchParams
  const agents = await listAgents()
  const agentId =
    params.agent && agents.some((a) => a.id === params.agent) ? params.agent : (agents[0]?.id ?? null)
  if (!agentId) return <p className="empty">No agents yet: create one on the API keys page.</p>
  const { workingContext: context } = await gql<{ workingContext: ErrorPayload & Partial<WorkingContext> }>(
    `query($a: ID) { workingContext(agentId: $a) { __typename ... on WorkingContext { ${CONTEXT_FIELDS} } ... on Error { message } } }`,
    { a: agentId },
  )
  if (context.__typename !== 'WorkingContext') throw new Error(context.message)
  const wc = context as WorkingContext
  const renderedAt = new Date().toISOString()
  const share = wc.flushThresholdTokens > 0 ? wc.tokenCount / wc.flushThresholdTokens : 0
  const empty = wc.messages.length === 0 && wc.toolResults.length === 0

  return (
    <section aria-labelledby="wc-heading">
      <header className="page-header">
        <h1 id="wc-heading">Working context</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>
      <p className="hint">
        What the agent holds for the task in progress (spec 002’s L1), not yet stored. Past the threshold it
        flushes into the stored conversation by itself.
      </p>
      <section className="card" aria-label="Tokens against the flush threshold">
        <label htmlFor="wc-gauge">
          Tokens: <strong data-testid="wc-tokens">{formatTokens(wc.tokenCount)}</strong> of{' '}
          <span data-testid="wc-threshold">{formatTokens(wc.flushThresholdTokens)}</span> (
          {formatPercent(share)})
        </label>
        <meter
          id="wc-gauge"
          min={0}
          max={wc.flushThresholdTokens}
          low={wc.flushThresholdTokens * 0.6}
          high={wc.flushThresholdTokens * 0.9}
          optimum={0}
          value={Math.min(wc.tokenCount, wc.flushThresholdTokens)}
        />
        <p>
          {wc.updatedAt && wc.expiresAt ? (
            <>
              Written <TimeAgo date={wc.updatedAt} renderedAt={renderedAt} />; dropped{' '}
              <TimeAgo date={wc.expiresAt} renderedAt={renderedAt} /> unless written again.
            </>
          ) : (
            'Nothing held.'
          )}
        </p>
        <ContextActions agentId={agentId} empty={empty} />
      </section>

      <h2>Messages ({wc.messages.length})</h2>
      {wc.messages.length === 0 ? (
        <p className="empty">No messages held.</p>
      ) : (
        <table data-testid="wc-messages">
          <thead>
            <tr>
              <th>Role</th>
              <th>Name</th>
              <th>Content</th>
              <th>Conversation</th>
              <th>Tokens</th>
            </tr>
          </thead>
          <tbody>
            {wc.messages.map((m) => (
              <tr key={m.id}>
                <td>{m.role}</td>
                <td>{m.name ?? ''}</td>
                <td className="wrap">{m.content}</td>
                <td>{m.conversationId}</td>
                <td>{formatTokens(m.tokenCount)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Tool results ({wc.toolResults.length})</h2>
      {wc.toolResults.length === 0 ? (
        <p className="empty">No tool results held.</p>
      ) : (
        <table data-testid="wc-tool-results">
          <thead>
            <tr>
              <th>Call</th>
              <th>Tool</th>
              <th>Result</th>
              <th>Tokens</th>
            </tr>
          </thead>
          <tbody>
            {wc.toolResults.map((r) => (
              <tr key={r.toolCallId}>
                <td>{r.toolCallId}</td>
                <td>
                  {r.name}
                  {r.isError ? <span className="bad"> (error)</span> : null}
                </td>
                <td className="wrap">{r.content}</td>
                <td>{formatTokens(r.tokenCount)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Scratchpad</h2>
      {wc.scratchpad ? (
        <pre className="wrap" data-testid="wc-scratchpad">
          {wc.scratchpad}
        </pre>
      ) : (
        <p className="empty">Empty.</p>
      )}
    </section>
  )
}
