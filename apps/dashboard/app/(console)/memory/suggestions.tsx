'use client'

import { useState, useTransition } from 'react'
import { applySuggestion } from './actions'

export interface Suggestion {
  entryId: string
  action: 'COMPRESS' | 'DROP' | 'PROMOTE'
  relevance: number
  reason: string
  preview: string
}

export function Suggestions({ agentId, suggestions }: { agentId: string; suggestions: Suggestion[] }) {
  const [pending, startTransition] = useTransition()
  const [done, setDone] = useState<Record<string, string>>({})
  if (suggestions.length === 0)
    return <p className="empty">The analyzer suggests nothing: every entry is where it belongs.</p>
  return (
    <table className="data" aria-label="Suggestions">
      <thead>
        <tr>
          <th scope="col">Entry</th>
          <th scope="col">Suggestion</th>
          <th scope="col">Why</th>
          <th scope="col">
            <span className="sr-only">Apply</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {suggestions.map((s) => (
          <tr key={s.entryId} data-testid={`suggestion-${s.entryId}`}>
            <td className="value-cell">
              #{s.entryId} {s.preview}
            </td>
            <td>{s.action.toLowerCase()}</td>
            <td>{s.reason}</td>
            <td>
              {done[s.entryId] ? (
                <span className="ok">{done[s.entryId]}</span>
              ) : (
                <button
                  type="button"
                  disabled={pending}
                  onClick={() =>
                    startTransition(async () => {
                      const error = await applySuggestion(agentId, s.entryId, s.action)
                      setDone((d) => ({ ...d, [s.entryId]: error ?? 'applied' }))
                    })
                  }
                >
                  Apply {s.action.toLowerCase()}
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
