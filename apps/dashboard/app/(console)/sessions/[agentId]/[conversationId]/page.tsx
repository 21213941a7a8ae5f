import Link from 'next/link'
import { ContextWindowBar } from '../../../../../components/context-window-bar'
import { gql } from '../../../../../lib/api'
import { formatTokens } from '../../../../../lib/format'

export const dynamic = 'force-dynamic'

const BUDGET_FIELDS = [
  ['maxContextTokens', 'Max context tokens', '1'],
  ['systemPromptTokens', 'System prompt tokens', '1'],
  ['responseReserveTokens', 'Response reserve tokens', '1'],
  ['fullMessageWindow', 'Full message window', '1'],
  ['compressionTriggerRatio', 'Compression trigger ratio', '0.01'],
] as const

interface Message {
  id: string
  role: string
  speaker: string | null
  content: string
  tokenCount: number
  isCompressed: boolean
  timestamp: string
}

interface Window {
  __typename: string
  message?: string
  issues?: { field: string; message: string }[]
  full: { id: string }[]
  compressed: { message: { id: string }; content: string; tokenCount: number }[]
  dropped: { id: string }[]
  fullTokens: number
  compressedTokens: number
  droppedTokens: number
  availableBudget: number
  usageRatio: number
  underPressure: boolean
  overBudget: boolean
  trimmedFullMessages: number
  budget: Record<string, number>
}

export default async function ConversationPage({
  params,
  searchParams,
}: {
  params: Promise<{ agentId: string; conversationId: string }>
  searchParams: Promise<Record<string, string | undefined>>
}) {
  const { agentId: rawAgent, conversationId: rawConversation } = await params
  const agentId = decodeURIComponent(rawAgent)
  const conversationId = decodeURIComponent(rawConversation)
  const search = await searchParams
  const budget = Object.fromEntries(
    BUDGET_FIELDS.flatMap(([field]) => {
      const raw = search[field]
      if (raw == null || raw === '') return []
      const value = Number(raw)
      return Number.isFinite(value) ? [[field, value]] : []
    }),
  )
  const data = await gql<{
    session: { __typename: string; messageCount?: number; messages?: { edges: { node: Message }[] } } | null
    contextWindow: Window
  }>(
    `query($a: ID, $c: String!, $b: TokenBudgetInput) {
      session(agentId: $a, conversationId: $c) { __typename ... on Session { messageCount messages(first: 200) { edges { node { id role speaker content tokenCount isCompressed timestamp } } } } }
      contextWindow(agentId: $a, conversationId: $c, budget: $b) {
        __typename
        ... on ContextWindow { full { id } compressed { message { id } content tokenCount } dropped { id } fullTokens compressedTokens droppedTokens availableBudget usageRatio underPressure overBudget trimmedFullMessages budget { maxContextTokens systemPromptTokens responseReserveTokens fullMessageWindow compressionTriggerRatio } }
        ... on Error { message }
        ... on ValidationError { issues { field message } }
      }
    }`,
    { a: agentId, c: conversationId, b: Object.keys(budget).length ? budget : null },
  )
  if (data.session?.__typename !== 'Session') {
    return (
      <section>
        <h1>Conversation not found</h1>
        <p>
          {agentId} has no conversation “{conversationId}”. <Link href="/sessions">Back to sessions</Link>
        </p>
      </section>
    )
  }
  const messages = data.session.messages?.edges.map((e) => e.node) ?? []
  const window = data.contextWindow
  const placement = new Map<string, string>()
  if (window.__typename === 'ContextWindow') {
    for (const m of window.full) placement.set(m.id, 'full')
    for (const c of window.compressed) placement.set(c.message.id, 'compressed')
    for (const m of window.dropped) placement.set(m.id, 'dropped')
  }
  return (
    <section aria-labelledby="conversation-heading">
      <header className="page-header">
        <h1 id="conversation-heading">
          {conversationId} <span className="muted">· {agentId}</span>
        </h1>
        <Link href={`/sessions?agent=${encodeURIComponent(agentId)}`}>All sessions</Link>
      </header>
      {window.__typename === 'ContextWindow' && (
        <ContextWindowBar
          full={window.fullTokens}
          compressed={window.compressedTokens}
          dropped={window.droppedTokens}
          budget={window.availableBudget}
        />
      )}
      {window.__typename === 'ContextWindow' && window.overBudget && (
        <p className="field-error" role="status" data-testid="over-budget">
          The newest {window.budget.fullMessageWindow} messages alone exceed the {window.availableBudget}{' '}
          tokens available: the oldest {window.trimmedFullMessages} of them were taken out of the full window.
        </p>
      )}
      {window.__typename !== 'ContextWindow' && (
        <p className="field-error" role="alert">
          {budgetProblem(window)}
        </p>
      )}
      <form className="filters" aria-label="Preview with another budget">
        {BUDGET_FIELDS.map(([field, label, step]) => (
          <label key={field}>
            {label}
            <input
              name={field}
              type="number"
              step={step}
              defaultValue={
                search[field] ?? (window.__typename === 'ContextWindow' ? String(window.budget[field]) : '')
              }
            />
          </label>
        ))}
        <button type="submit">Preview</button>
      </form>
      <ol className="messages" aria-label="Messages">
        {messages.map((m) => {
          const summary = m.content.startsWith('[CONTEXT SUMMARY]')
          return (
            <li
              key={m.id}
              // A memory formed from this message links here (memories page: "from …").
              id={`message-${m.id}`}
              className={`message ${m.isCompressed ? 'compressed' : ''} ${summary ? 'summary' : ''}`}
              data-placement={placement.get(m.id) ?? 'replaced'}
            >
              <span className="role">{m.role.toLowerCase()}</span>
              {m.speaker && (
                <span className="speaker" data-testid="speaker">
                  {' '}
                  · {m.speaker}
                </span>
              )}
              {summary && <span className="tag">context summary</span>}
              {m.isCompressed && <span className="tag warn">compressed into a summary</span>}
              {placement.get(m.id) === 'compressed' && <span className="tag warn">sent compressed</span>}
              {placement.get(m.id) === 'dropped' && <span className="tag bad">dropped</span>}
              <span className="muted"> {formatTokens(m.tokenCount)}</span>
              <pre>{m.content}</pre>
            </li>
          )
        })}
      </ol>
    </section>
  )
}

/**
 * A refused budget in the form's words: "Max context tokens must exceed …", not the API's field
 * path ("budget.maxContextTokens: must exceed …").
 */
function budgetProblem(window: Window): string {
  if (!window.issues?.length) return window.message ?? 'The context window could not be computed.'
  const label = (field: string) => {
    const name = field.split('.').pop() ?? field
    return BUDGET_FIELDS.find(([f]) => f === name)?.[1] ?? name
  }
  const lines = window.issues.map((issue) => `${label(issue.field)} ${issue.message}.`)
  return `This budget cannot be previewed: ${lines.join(' ')} Change it below and preview again.`
}
