'use client'

import { useEffect, useRef, useState } from 'react'
import { type LiveStatus, openLiveFeed } from '../lib/live-feed'

export type { LiveStatus }

/**
 * The one live feed of the dashboard: a GraphQL subscription over graphql-ws, authenticated with a
 * short-lived token fetched from this dashboard (re-fetched on every reconnect), so the browser
 * never holds the admin key. `tokenAgentId` limits the token to one agent (null: all agents).
 */
export function useLiveSubscription<T>({
  query,
  variables = {},
  tokenAgentId,
  onData,
}: {
  query: string
  variables?: Record<string, unknown>
  tokenAgentId: string | null
  onData: (data: T) => void
}): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('connecting')
  // The latest callback, without resubscribing whenever the caller re-renders.
  const handler = useRef(onData)
  handler.current = onData
  // Callers pass a fresh object each render; resubscribe only when its content changes.
  const variablesKey = JSON.stringify(variables)
  useEffect(() => {
    let active = true
    const close = openLiveFeed<T>({
      query,
      variables: JSON.parse(variablesKey) as Record<string, unknown>,
      fetchToken: async () => {
        const response = await fetch(
          `/api/live-token${tokenAgentId ? `?agent=${encodeURIComponent(tokenAgentId)}` : ''}`,
          { cache: 'no-store' },
        )
        if (!response.ok) throw new Error(`live token: ${response.status}`)
        return (await response.json()) as { token: string; url: string }
      },
      onData: (data) => handler.current(data),
      onStatus: (next) => {
        if (active) setStatus(next)
      },
    })
    return () => {
      active = false
      close()
    }
  }, [query, variablesKey, tokenAgentId])
  return status
}
