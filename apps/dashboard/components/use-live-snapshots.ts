'use client'

import { createClient } from 'graphql-ws'
import { useEffect, useRef, useState } from 'react'
import { SNAPSHOT_FIELDS, type Snapshot } from '../lib/snapshots'

export type { Snapshot }

export type LiveStatus = 'connecting' | 'live' | 'offline'

/**
 * The one live feed of the dashboard: optimizer snapshots over graphql-ws, authenticated with a
 * short-lived token fetched from this dashboard (re-fetched on every reconnect).
 */
export function useLiveSnapshots(
  agentId: string | null,
  onSnapshot: (snapshot: Snapshot) => void,
): LiveStatus {
  const [status, setStatus] = useState<LiveStatus>('connecting')
  // The latest callback, without resubscribing whenever the caller re-renders.
  const handler = useRef(onSnapshot)
  handler.current = onSnapshot
  useEffect(() => {
    let url = ''
    let disposed = false
    const tokenFor = async () => {
      const response = await fetch(
        `/api/live-token${agentId ? `?agent=${encodeURIComponent(agentId)}` : ''}`,
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
          connectionParams: async () => ({ authorization: `Bearer ${(await tokenFor()).token}` }),
          retryAttempts: Number.POSITIVE_INFINITY,
          shouldRetry: () => true,
          on: {
            connected: () => setStatus('live'),
            closed: () => setStatus('offline'),
          },
        })
        client.subscribe<{ optimizerSnapshots: Snapshot }>(
          {
            query: `subscription($a: ID) { optimizerSnapshots(agentId: $a) { ${SNAPSHOT_FIELDS} } }`,
            variables: { a: agentId },
          },
          {
            next: (value) => {
              if (value.data?.optimizerSnapshots) handler.current(value.data.optimizerSnapshots)
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
  }, [agentId])
  return status
}
