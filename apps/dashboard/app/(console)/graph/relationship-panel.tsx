'use client'

import Link from 'next/link'
import { useState, useTransition } from 'react'
import { ConfirmActions } from '../../../components/confirm-actions'
import { FieldError, FormError } from '../../../components/form-fields'
import {
  dateTimeFieldValue,
  dayText,
  type GraphRelationship,
  type GraphSource,
  memorySourceHref,
  validityText,
} from '../../../lib/graph'
import { sourceHref } from '../../../lib/memories'
import { type Answer, correctRelationship, retireRelationship } from './actions'

type FormState = { ok?: boolean; message?: string; issues?: { field: string; message: string }[] }

function stateOf(answer: Answer<GraphRelationship>, success: string): FormState {
  return answer.ok
    ? { ok: true, message: success }
    : { ok: false, message: answer.message, issues: answer.issues ?? undefined }
}

/**
 * Why Engram believes an edge: the memory's or message's words as stored (already redacted), when
 * they were written, and links to the exact place (the memory's row; the message in its
 * conversation). A row deleted since shows its ids alone.
 */
function SourceItem({ agentId, source }: { agentId: string; source: GraphSource }) {
  const { memoryId, messageId, conversationId } = source
  return (
    <li data-testid="relationship-source">
      {source.excerpt === null ? (
        <span className="muted">deleted since: </span>
      ) : (
        <blockquote className="source-excerpt" data-testid="source-excerpt">
          {source.excerpt}
        </blockquote>
      )}
      {source.at && <span className="muted">{dayText(source.at)} · </span>}
      {memoryId &&
        (source.excerpt === null ? (
          `memory #${memoryId}`
        ) : (
          <Link href={memorySourceHref(agentId, memoryId)} prefetch={false}>
            memory #{memoryId}
          </Link>
        ))}
      {memoryId && messageId ? ' · ' : null}
      {messageId &&
        (conversationId ? (
          <Link href={sourceHref(agentId, conversationId, messageId)} prefetch={false}>
            message #{messageId} in {conversationId}
          </Link>
        ) : (
          `message #${messageId}`
        ))}
    </li>
  )
}

/**
 * One edge: what it says, how sure Engram is, when it held (valid time) and when Engram believed
 * it (system time), where it was learnt; and the operator's two fixes, correct it or retire it.
 */
export function RelationshipPanel({
  relationship: r,
  onClose,
  onChanged,
}: {
  relationship: GraphRelationship
  onClose: () => void
  onChanged: (relationship: GraphRelationship) => void
}) {
  const [correction, setCorrection] = useState<FormState>({})
  const [retirement, setRetirement] = useState<FormState>({})
  const [confirmingRetire, setConfirmingRetire] = useState(false)
  const [reason, setReason] = useState('')
  const [pending, startTransition] = useTransition()
  const title = `${r.source.name} ${r.relation} ${r.target.name}`

  return (
    <section className="card relationship-panel" aria-labelledby="relationship-heading">
      <header className="page-header">
        <h2 id="relationship-heading">{title}</h2>
        <button type="button" className="secondary" onClick={onClose}>
          Close
        </button>
      </header>
      <dl className="facts" data-testid="relationship-details">
        <dt>Relation</dt>
        <dd data-testid="relationship-relation">{r.relation}</dd>
        <dt>Confidence</dt>
        <dd data-testid="relationship-confidence">{r.confidence.toFixed(2)}</dd>
        <dt>Valid</dt>
        <dd data-testid="relationship-validity">{validityText(r)}</dd>
        <dt>Learnt</dt>
        <dd>{dayText(r.learntAt)}</dd>
        <dt>Retired</dt>
        <dd data-testid="relationship-retired">
          {r.retiredAt ? `${dayText(r.retiredAt)}${r.retiredReason ? ` (${r.retiredReason})` : ''}` : 'no'}
        </dd>
        <dt>Holds now</dt>
        <dd>
          {r.current ? 'yes' : 'no'}
          {r.supersededById ? ' (superseded by a newer relationship)' : ''}
        </dd>
        <dt>Origin</dt>
        <dd>{r.origin === 'MANUAL' ? 'added by an operator' : 'formed from memories'}</dd>
        <dt>Sources</dt>
        <dd>
          {r.sources.length === 0 ? (
            'none recorded'
          ) : (
            <ul className="plain-list relationship-sources" aria-label="Sources">
              {r.sources.map((source) => (
                <SourceItem
                  key={`${source.memoryId}-${source.messageId}`}
                  agentId={r.agentId}
                  source={source}
                />
              ))}
            </ul>
          )}
        </dd>
      </dl>

      <form
        className="card form-grid"
        aria-label="Correct relationship"
        onSubmit={(event) => {
          event.preventDefault()
          const form = new FormData(event.currentTarget)
          startTransition(async () => {
            const answer = await correctRelationship(form)
            setCorrection(stateOf(answer, 'Corrected.'))
            if (answer.ok) onChanged(answer.value)
          })
        }}
      >
        <h3>Correct</h3>
        <input type="hidden" name="agentId" value={r.agentId} />
        <input type="hidden" name="id" value={r.id} />
        <label htmlFor="edge-relation">Relation</label>
        <span>
          <input id="edge-relation" name="relation" defaultValue={r.relation} required maxLength={100} />
          <FieldError state={correction} field="relation" />
        </span>
        <label htmlFor="edge-confidence">Confidence</label>
        <span>
          <input
            id="edge-confidence"
            name="confidence"
            inputMode="decimal"
            defaultValue={String(r.confidence)}
            aria-describedby="edge-confidence-help"
          />
          <span id="edge-confidence-help" className="muted">
            {' '}
            0.0 to 1.0
          </span>
          <FieldError state={correction} field="confidence" />
        </span>
        <label htmlFor="edge-valid-from">Valid from (UTC)</label>
        <span>
          <input
            id="edge-valid-from"
            name="validFrom"
            type="datetime-local"
            defaultValue={dateTimeFieldValue(r.validFrom)}
          />
          <FieldError state={correction} field="validFrom" />
        </span>
        <label htmlFor="edge-valid-until">Valid until (UTC)</label>
        <span>
          <input
            id="edge-valid-until"
            name="validUntil"
            type="datetime-local"
            defaultValue={dateTimeFieldValue(r.validUntil)}
          />
          <FieldError state={correction} field="validUntil" />
        </span>
        <span />
        <span>
          <button type="submit" disabled={pending}>
            {pending ? 'Saving…' : 'Save correction'}
          </button>{' '}
          {correction.ok && (
            <span className="ok" role="status">
              {correction.message}
            </span>
          )}
          <FormError state={correction} />
        </span>
      </form>

      {r.retiredAt ? null : (
        <form
          className="card form-grid"
          aria-label="Retire relationship"
          onSubmit={(event) => {
            event.preventDefault()
            setConfirmingRetire(true)
          }}
        >
          <h3>Retire</h3>
          <p className="muted span-all">
            A wrong edge: Engram stops believing it now. Reads “known at” an earlier time still see it.
          </p>
          <label htmlFor="edge-retire-reason">Reason</label>
          <span>
            <input
              id="edge-retire-reason"
              value={reason}
              maxLength={500}
              onChange={(event) => setReason(event.target.value)}
              placeholder="why it is wrong (optional)"
            />
            <FieldError state={retirement} field="reason" />
          </span>
          <span />
          <span>
            {confirmingRetire ? (
              <ConfirmActions
                prompt="Retire this relationship?"
                confirmLabel="Confirm retire"
                disabled={pending}
                onCancel={() => setConfirmingRetire(false)}
                onConfirm={() =>
                  startTransition(async () => {
                    const answer = await retireRelationship(r.agentId, r.id, reason)
                    setRetirement(stateOf(answer, 'Retired.'))
                    setConfirmingRetire(false)
                    if (answer.ok) onChanged(answer.value)
                  })
                }
              />
            ) : (
              <button type="submit" className="danger">
                Retire
              </button>
            )}
            <FormError state={retirement} />
          </span>
        </form>
      )}
    </section>
  )
}
