'use client'

import Link from 'next/link'
import { useActionState, useState, useTransition } from 'react'
import { ConfirmActions } from '../../../components/confirm-actions'
import { FieldError, FormError, LabelledSelect } from '../../../components/form-fields'
import { fieldError, relativeTime } from '../../../lib/format'
import { MEMORY_CATEGORY_LABELS, type MemoryRow, memoryHref, sourceHref } from '../../../lib/memories'
import { createMemory, deleteMemory, type MemoryFormState, updateMemory, type WriteOutcome } from './actions'

function CategorySelect({ id, defaultValue }: { id: string; defaultValue?: string }) {
  return (
    <LabelledSelect
      id={id}
      name="category"
      labels={MEMORY_CATEGORY_LABELS}
      defaultValue={defaultValue ?? 'FACT'}
    />
  )
}

function MemoryLink({ agentId, memory }: { agentId: string; memory: { id: string; content: string } }) {
  return (
    <Link href={memoryHref(agentId, memory.id, memory.content)} prefetch={false}>
      #{memory.id}
    </Link>
  )
}

function OutcomeMessage({ agentId, write }: { agentId: string; write: WriteOutcome }) {
  return (
    <span className="ok" role="status" data-testid="write-outcome" data-outcome={write.outcome}>
      {write.outcome === 'DUPLICATE' ? (
        <>
          Duplicate of <MemoryLink agentId={agentId} memory={write.duplicateOf ?? write.memory} />: not stored
          {write.layer && write.similarity != null
            ? ` (${write.layer.toLowerCase()} similarity ${write.similarity.toFixed(2)})`
            : ''}
          .
        </>
      ) : (
        <>
          Stored as <MemoryLink agentId={agentId} memory={write.memory} />.
          {write.superseded && (
            <>
              {' '}
              Superseded <MemoryLink agentId={agentId} memory={write.superseded} />
              {write.similarity != null ? ` (word overlap ${write.similarity.toFixed(2)})` : ''}.
            </>
          )}
        </>
      )}
      {write.evicted.length > 0 && (
        <> Evicted {write.evicted.map((e) => `#${e.id}`).join(', ')} to stay within maxEntriesPerAgent.</>
      )}
    </span>
  )
}

export function CreateMemoryForm({ agentId }: { agentId: string }) {
  const [state, action, pending] = useActionState<MemoryFormState, FormData>(createMemory, {})
  return (
    <form action={action} className="card form-grid" aria-label="Add a memory">
      <h2>Add a memory</h2>
      <input type="hidden" name="agentId" value={agentId} />
      <label htmlFor="new-content">Content</label>
      <span>
        <textarea
          id="new-content"
          name="content"
          required
          rows={2}
          maxLength={10_000}
          defaultValue={state.values?.content ?? ''}
        />
        <FieldError state={state} field="content" />
      </span>
      <label htmlFor="new-category">Category</label>
      <span>
        {/* A select does not take a new defaultValue once mounted: a key remounts it. */}
        <CategorySelect
          key={state.values?.category ?? 'default'}
          id="new-category"
          defaultValue={state.values?.category}
        />
        <FieldError state={state} field="category" />
      </span>
      <label htmlFor="new-tags">Tags</label>
      <span>
        <input
          id="new-tags"
          name="tags"
          placeholder="ui, editor (comma-separated)"
          defaultValue={state.values?.tags ?? ''}
        />
        <FieldError state={state} field="tags" />
      </span>
      <label htmlFor="new-importance">Importance</label>
      <span>
        <input
          id="new-importance"
          name="importance"
          inputMode="decimal"
          placeholder="0.5"
          defaultValue={state.values?.importance ?? ''}
          aria-invalid={!!fieldError(state.issues, 'importance')}
        />
        <FieldError state={state} field="importance" />
      </span>
      <label htmlFor="new-pinned">Pinned</label>
      <span>
        <input id="new-pinned" name="pinned" type="checkbox" defaultChecked={state.values?.pinned === 'on'} />{' '}
        <span className="muted">always part of the assembled context</span>
      </span>
      <span />
      <span>
        <button type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Add memory'}
        </button>{' '}
        {state.ok && state.write && <OutcomeMessage agentId={agentId} write={state.write} />}
        <FormError state={state} />
      </span>
    </form>
  )
}

function EditRow({ row, onDone }: { row: MemoryRow; onDone: () => void }) {
  const [state, action, pending] = useActionState<MemoryFormState, FormData>(async (previous, form) => {
    const next = await updateMemory(previous, form)
    if (next.ok) onDone()
    return next
  }, {})
  const id = (field: string) => `edit-${row.id}-${field}`
  // After a refused save the fields keep what was typed (React resets a form after its action).
  const value = (field: string, current: string) => state.values?.[field] ?? current
  return (
    <tr className="editing" data-testid={`memory-${row.id}`}>
      <td colSpan={7}>
        <form action={action} className="edit-grid" aria-label={`Edit memory #${row.id}`}>
          <input type="hidden" name="id" value={row.id} />
          <input type="hidden" name="agentId" value={row.agentId} />
          <strong className="edit-title">Editing #{row.id}</strong>
          <label htmlFor={id('content')}>Content</label>
          <span>
            <textarea
              id={id('content')}
              name="content"
              defaultValue={value('content', row.content)}
              rows={2}
            />
            <FieldError state={state} field="content" />
          </span>
          <label htmlFor={id('category')}>Category</label>
          <CategorySelect
            key={value('category', row.category)}
            id={id('category')}
            defaultValue={value('category', row.category)}
          />
          <label htmlFor={id('tags')}>Tags</label>
          <span>
            <input id={id('tags')} name="tags" defaultValue={value('tags', row.tags.join(', '))} />
            <FieldError state={state} field="tags" />
          </span>
          <label htmlFor={id('importance')}>Importance</label>
          <span>
            <input
              id={id('importance')}
              name="importance"
              inputMode="decimal"
              defaultValue={value('importance', String(row.importance))}
              aria-invalid={!!fieldError(state.issues, 'importance')}
            />
            <FieldError state={state} field="importance" />
          </span>
          <label htmlFor={id('confidence')}>Confidence</label>
          <span>
            <input
              id={id('confidence')}
              name="confidence"
              inputMode="decimal"
              defaultValue={value('confidence', String(row.confidence))}
              aria-invalid={!!fieldError(state.issues, 'confidence')}
            />
            <FieldError state={state} field="confidence" />
          </span>
          <label htmlFor={id('pinned')}>Pinned</label>
          <span>
            <input
              id={id('pinned')}
              name="pinned"
              type="checkbox"
              defaultChecked={state.values ? state.values.pinned === 'on' : row.pinned}
            />
          </span>
          <span />
          <span>
            <button type="submit" disabled={pending}>
              {pending ? 'Saving…' : 'Save'}
            </button>{' '}
            <button type="button" className="secondary" onClick={onDone}>
              Cancel
            </button>
            <FormError state={state} />
          </span>
        </form>
      </td>
    </tr>
  )
}

function Meter({ label, value }: { label: string; value: number }) {
  return (
    <>
      <span className="bar" role="img" aria-label={`${label} ${value.toFixed(2)}`}>
        <span
          className="bar-fill"
          style={{ width: `${Math.round(Math.min(1, Math.max(0, value)) * 100)}%` }}
        />
      </span>{' '}
      {value.toFixed(2)}
    </>
  )
}

export function MemoryTable({ rows, now }: { rows: MemoryRow[]; now: string }) {
  const [editing, setEditing] = useState<string | null>(null)
  const [confirming, setConfirming] = useState<string | null>(null)
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null)
  const [pending, startTransition] = useTransition()
  return (
    <>
      {message && (
        <p className={message.ok ? 'ok' : 'field-error'} role="status">
          {message.text}
        </p>
      )}
      <table className="data" aria-label="Memories">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Category</th>
            <th scope="col">Content</th>
            <th scope="col">Importance</th>
            <th scope="col">Confidence</th>
            <th scope="col">Recalled · created</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) =>
            editing === row.id ? (
              <EditRow key={row.id} row={row} onDone={() => setEditing(null)} />
            ) : (
              <tr
                key={row.id}
                id={`memory-${row.id}`}
                data-testid={`memory-${row.id}`}
                data-current={row.isCurrent}
                className={row.isCurrent ? undefined : 'superseded'}
              >
                <td>#{row.id}</td>
                <td>{MEMORY_CATEGORY_LABELS[row.category] ?? row.category}</td>
                <td className="value-cell">
                  <span className="memory-content">{row.content}</span>
                  {row.sourceConversationId && (
                    <span className="memory-source muted">
                      {' '}
                      from{' '}
                      <Link
                        href={sourceHref(row.agentId, row.sourceConversationId, row.sourceMessageId)}
                        prefetch={false}
                        aria-label={`Source of #${row.id}: conversation ${row.sourceConversationId}${row.sourceMessageId ? `, message #${row.sourceMessageId}` : ''}`}
                      >
                        {row.sourceConversationId}
                        {row.sourceMessageId ? ` #${row.sourceMessageId}` : ''}
                      </Link>
                    </span>
                  )}
                  {row.pinned && <span className="tag">pinned</span>}
                  {row.tags.map((tag) => (
                    <span key={tag} className="tag muted-tag">
                      #{tag}
                    </span>
                  ))}
                  {!row.isCurrent && (
                    <span className="superseded-note">
                      <span className="tag bad">{row.supersededById ? 'superseded' : 'expired'}</span>{' '}
                      {row.supersededBy ? (
                        <>
                          replaced by{' '}
                          <Link
                            href={memoryHref(row.agentId, row.supersededBy.id, row.supersededBy.content)}
                            prefetch={false}
                            aria-label={`Replacement of #${row.id}: memory #${row.supersededBy.id}`}
                          >
                            #{row.supersededBy.id}
                          </Link>
                          <span className="muted"> “{row.supersededBy.content}”</span>
                        </>
                      ) : row.supersededById ? (
                        `replaced by #${row.supersededById} (since deleted)`
                      ) : null}
                      {row.validUntil && (
                        <span className="muted">
                          {' '}
                          · until {new Date(row.validUntil).toISOString().slice(0, 16).replace('T', ' ')} UTC
                        </span>
                      )}
                    </span>
                  )}
                </td>
                <td>
                  <Meter label="importance" value={row.importance} />
                </td>
                <td>
                  <Meter label="confidence" value={row.confidence} />
                </td>
                <td>
                  {row.accessCount}× · {relativeTime(row.createdAt, new Date(now))}
                </td>
                <td className="actions">
                  <button type="button" className="secondary" onClick={() => setEditing(row.id)}>
                    Edit
                  </button>{' '}
                  {confirming === row.id ? (
                    <ConfirmActions
                      prompt={<span className="muted">Delete #{row.id}?</span>}
                      confirmLabel="Confirm delete"
                      disabled={pending}
                      onCancel={() => setConfirming(null)}
                      onConfirm={() =>
                        startTransition(async () => {
                          const result = await deleteMemory(row.agentId, row.id)
                          setMessage({ ok: !!result.ok, text: result.message ?? 'Delete failed.' })
                          setConfirming(null)
                        })
                      }
                    />
                  ) : (
                    <button type="button" className="danger" onClick={() => setConfirming(row.id)}>
                      Delete
                    </button>
                  )}
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </>
  )
}
