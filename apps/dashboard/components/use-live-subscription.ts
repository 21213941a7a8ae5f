'use client'

import { createClient } from 'graphql-ws'
import { useEffect, useRef, useState } from 'react'

export type LiveStatus = 'connecting' | 'live' | 'offline'

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
    let url = ''
    let disposed = false
    const tokenFor = async () => {
      const response = await fetch(
        `/api/live-token${tokenAgentId ? `?agent=${encodeURIComponent(tokenAgentId)}` : ''}`,
        { cache: 'no-store' },
      )
      if (!response.ok) throw new Error(`live token: ${response.status}`)
      const body = (await response.json()) as { token: string; url: string }
      url = body.url
      return body
    }
    let client: ReturnType<typeof createClient> | null = null
    tokenFor()
      .then(({ url: first }) => {
        if (disposed) return
        client = createClient({
          url: () => url || first,
          connectionParams: async () => {
            const { token } = await tokenFor()
            // Unmounted while the token was on its way: the socket is closing, and sending the
            // connection message on it logged "WebSocket is already in CLOSING or CLOSED state";
            // throwing instead surfaced as an uncaught error in the page. Never answering sends
            // nothing, and the disposed client lets go of the socket.
            if (disposed) return new Promise<Record<string, unknown>>(() => {})
            return { authorization: `Bearer ${token}` }
          },
          retryAttempts: Number.POSITIVE_INFINITY,
          shouldRetry: () => true,
          on: {
            connected: () => setStatus('live'),
            closed: () => setStatus('offline'),
          },
        })
        client.subscribe<T>(
          { query, variables: JSON.parse(variablesKey) as Record<string, unknown> },
          {
            next: (value) => {
              if (value.data) handler.current(value.data as T)
            },
            error: () => setStatus('offline'),
            complete: () => {},
          },
        )
      })
      .catch(() => setStatus('offline'))
    return () => {
      disposed = true
      void client?.dispose()
    }
  }, [query, variablesKey, tokenAgentId])
  return status
}
