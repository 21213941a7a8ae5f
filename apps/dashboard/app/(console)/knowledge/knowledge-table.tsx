'use client'

import { useActionState, useState, useTransition } from 'react'
import { ConfirmActions } from '../../../components/confirm-actions'
import { FieldError, FormError, LabelledSelect } from '../../../components/form-fields'
import { formatCount, relativeTime } from '../../../lib/format'
import {
  createKnowledge,
  deleteKnowledge,
  deleteKnowledgeItems,
  type FormState,
  updateKnowledge,
} from './actions'

export interface KnowledgeRow {
  id: string
  agentId: string
  category: string
  key: string
  value: string
  confidence: number
  useCount: number
  storeCount: number
  lastUsedAt: string | null
  nextDecayAt: string
  prunedAtNextDecay: boolean
}

export const CATEGORY_LABELS: Record<string, string> = {
  DOMAIN: 'Domain',
  EXECUTION_PATTERN: 'Execution pattern',
  USER_PREFERENCE: 'User preference',
  WEBSITE_KNOWLEDGE: 'Website knowledge',
  ERROR_PATTERN: 'Error pattern',
}
const SOON_MS = 7 * 86_400_000

function CategorySelect({ name, defaultValue, id }: { name: string; defaultValue?: string; id: string }) {
  return (
    <LabelledSelect id={id} name={name} labels={CATEGORY_LABELS} defaultValue={defaultValue ?? 'DOMAIN'} />
  )
}

export function CreateKnowledgeForm({
  agents,
  defaultAgent,
}: {
  agents: string[]
  defaultAgent: string | null
}) {
  const [state, action, pending] = useActionState<FormState, FormData>(createKnowledge, {})
  return (
    <form action={action} className="card form-grid" aria-label="Add knowledge">
      <h2>Add knowledge</h2>
      <label htmlFor="new-agent">Agent</label>
      <select id="new-agent" name="agentId" defaultValue={defaultAgent ?? agents[0]}>
        {agents.map((a) => (
          <option key={a}>{a}</option>
        ))}
      </select>
      <label htmlFor="new-category">Category</label>
      <CategorySelect id="new-category" name="category" />
      <label htmlFor="new-key">Key</label>
      <span>
        <input id="new-key" name="key" required maxLength={256} />
        <FieldError state={state} field="key" />
      </span>
      <label htmlFor="new-value">Value</label>
      <span>
        <textarea id="new-value" name="value" required rows={2} />
        <FieldError state={state} field="value" />
      </span>
      <label htmlFor="new-confidence">Confidence</label>
      <span>
        <input id="new-confidence" name="confidence" inputMode="decimal" placeholder="0.5" />
        <FieldError state={state} field="confidence" />
      </span>
      <span />
      <span>
        <button type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Add'}
        </button>{' '}
        {state.ok && <span className="ok">{state.message}</span>}
        <FormError state={state} />
      </span>
    </form>
  )
}

function EditRow({ row, onDone }: { row: KnowledgeRow; onDone: () => void }) {
  const [state, action, pending] = useActionState<FormState, FormData>(async (previous, form) => {
    const next = await updateKnowledge(previous, form)
    if (next.ok) onDone()
    return next
  }, {})
  return (
    <tr className="editing">
      <td colSpan={8}>
        <form action={action} className="inline-form" aria-label={`Edit ${row.key}`}>
          <input type="hidden" name="id" value={row.id} />
          <input type="hidden" name="agentId" value={row.agentId} />
          <strong>{row.key}</strong>
          <label htmlFor={`cat-${row.id}`}>Category</label>
          <CategorySelect id={`cat-${row.id}`} name="category" defaultValue={row.category} />
          <label>
            Value <input name="value" defaultValue={row.value} aria-label="Value" />
          </label>
          <FieldError state={state} field="value" />
          <label>
            Confidence{' '}
            <input
              name="confidence"
              defaultValue={String(row.confidence)}
              inputMode="decimal"
              aria-label="Confidence"
            />
          </label>
          <FieldError state={state} field="confidence" />
          <button type="submit" disabled={pending}>
            Save
          </button>
          <button type="button" className="secondary" onClick={onDone}>
            Cancel
          </button>
        </form>
      </td>
    </tr>
  )
}

export function KnowledgeTable({ rows, now }: { rows: KnowledgeRow[]; now: string }) {
  const [selected, setSelected] = useState<Set<string>>(new Set())
  const [editing, setEditing] = useState<string | null>(null)
  const [confirming, setConfirming] = useState<string | null>(null)
  const [message, setMessage] = useState<string | null>(null)
  const [pending, startTransition] = useTransition()
  const toggle = (id: string) =>
    setSelected((current) => {
      const next = new Set(current)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })
  if (rows.length === 0)
    return (
      <p className="empty">No knowledge matches. Agents store facts with storeKnowledge, or add one above.</p>
    )
  return (
    <>
      <div className="toolbar">
        <button
          type="button"
          className="danger"
          disabled={selected.size === 0 || pending}
          onClick={() => setConfirming('bulk')}
        >
          Delete selected ({selected.size})
        </button>
        {confirming === 'bulk' && (
          <span role="alertdialog" aria-label="Confirm bulk delete">
            <ConfirmActions
              prompt={`Delete ${selected.size} facts?`}
              confirmLabel="Confirm delete"
              disabled={pending}
              onCancel={() => setConfirming(null)}
              onConfirm={() =>
                startTransition(async () => {
                  const result = await deleteKnowledgeItems([...selected])
                  setMessage(result.message ?? null)
                  setSelected(new Set())
                  setConfirming(null)
                })
              }
            />
          </span>
        )}
        {message && <span className="ok">{message}</span>}
      </div>
      <table className="data" aria-label="Knowledge">
        <thead>
          <tr>
            <th scope="col">
              <span className="sr-only">Select</span>
            </th>
            <th scope="col">Agent</th>
            <th scope="col">Category</th>
            <th scope="col">Key</th>
            <th scope="col">Value</th>
            <th scope="col">Confidence</th>
            <th scope="col">Uses · last used</th>
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
              <tr key={row.id} data-testid={`knowledge-${row.key}`}>
                <td>
                  <input
                    type="checkbox"
                    aria-label={`Select ${row.key}`}
                    checked={selected.has(row.id)}
                    onChange={() => toggle(row.id)}
                  />
                </td>
                <td>{row.agentId}</td>
                <td>{CATEGORY_LABELS[row.category] ?? row.category}</td>
                <td>{row.key}</td>
                <td className="value-cell">{row.value}</td>
                <td>
                  <span className="bar" role="img" aria-label={`confidence ${row.confidence.toFixed(2)}`}>
                    <span className="bar-fill" style={{ width: `${Math.round(row.confidence * 100)}%` }} />
                  </span>{' '}
                  {row.confidence.toFixed(2)}
                  {row.prunedAtNextDecay ? (
                    <span className="tag bad" title="its next decay takes it under 0.1, and it is deleted">
                      pruned {relativeTime(row.nextDecayAt, new Date(now))} if unused
                    </span>
                  ) : new Date(row.nextDecayAt).getTime() - new Date(now).getTime() < SOON_MS ? (
                    <span
                      className="tag warn"
                      title={`decays ${relativeTime(row.nextDecayAt, new Date(now))}`}
                    >
                      decays soon
                    </span>
                  ) : null}
                </td>
                <td>
                  {formatCount(row.useCount)} ·{' '}
                  {row.lastUsedAt ? relativeTime(row.lastUsedAt, new Date(now)) : 'never'}
                </td>
                <td className="actions">
                  <button type="button" className="secondary" onClick={() => setEditing(row.id)}>
                    Edit
                  </button>{' '}
                  {confirming === row.id ? (
                    <ConfirmActions
                      confirmLabel="Confirm delete"
                      disabled={pending}
                      onCancel={() => setConfirming(null)}
                      onConfirm={() =>
                        startTransition(async () => {
                          const result = await deleteKnowledge(row.agentId, row.id)
                          setMessage(result.message ?? null)
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
