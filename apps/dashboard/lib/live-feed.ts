import { type Client, createClient } from 'graphql-ws'

export type LiveStatus = 'connecting' | 'live' | 'offline'

export interface LiveFeedOptions<T> {
  query: string
  variables: Record<string, unknown>
  /** A short-lived token and the WebSocket URL to use it on, fetched again on every reconnect. */
  fetchToken: () => Promise<{ token: string; url: string }>
  onData: (data: T) => void
  onStatus: (status: LiveStatus) => void
  /** The WebSocket class (the browser's by default; tests pass `ws`). */
  webSocketImpl?: unknown
}

// biome-ignore lint/suspicious/noExplicitAny: TypeScript requires a mixin's base constructor to take any[]
type SocketClass = new (...args: any[]) => { readonly readyState: number; send(data: never): void }

/**
 * The WebSocket class with a send() that drops what would go out on a socket already closing or
 * closed. graphql-ws may still send (a subscription's `complete` on release, a pong) in the turn a
 * close was started by either side; the browser then logs "WebSocket is already in CLOSING or CLOSED
 * state" as a console error (the dashboard's e2e saw it when a page left while its feed connected).
 * Nothing is lost: a message sent on a closing socket never reaches the server anyway.
 */
export function closingSafe<T extends SocketClass>(Base: T): T {
  const OPEN = (Base as unknown as { OPEN?: number }).OPEN ?? 1
  return class extends Base {
    override send(data: never): void {
      if (this.readyState === OPEN) super.send(data)
    }
  }
}

/**
 * One GraphQL subscription over graphql-ws that reconnects forever, each time with a fresh token.
 * Returns the function that closes it. Closing never throws into the page, whatever state the
 * connection is in: graphql-ws's dispose() waits for the pending connection and rejects with its
 * CloseEvent when that connection is refused or closed by the server, which surfaced as an
 * uncaught "CloseEvent" page error when a feed was closed while it was still connecting.
 */
export function openLiveFeed<T>(options: LiveFeedOptions<T>): () => void {
  let url = ''
  let closed = false
  let client: Client | null = null
  const tokenFor = async () => {
    const body = await options.fetchToken()
    url = body.url
    return body
  }
  tokenFor()
    .then(({ url: first }) => {
      if (closed) return
      client = createClient({
        url: () => url || first,
        webSocketImpl:
          options.webSocketImpl ??
          (typeof WebSocket === 'undefined' ? undefined : closingSafe(WebSocket as unknown as SocketClass)),
        connectionParams: async () => {
          const { token } = await tokenFor()
          // Closed while the token was on its way: refuse to initialise, which makes graphql-ws
          // close the socket now instead of leaving it open until the server's init timeout.
          if (closed) throw new Error('live feed closed')
          return { authorization: `Bearer ${token}` }
        },
        retryAttempts: Number.POSITIVE_INFINITY,
        shouldRetry: () => !closed,
        on: {
          connected: () => options.onStatus('live'),
          closed: () => options.onStatus('offline'),
        },
      })
      client.subscribe<T>(
        { query: options.query, variables: options.variables },
        {
          next: (value) => {
            if (value.data && !closed) options.onData(value.data as T)
          },
          error: () => options.onStatus('offline'),
          complete: () => {},
        },
      )
    })
    .catch(() => options.onStatus('offline'))
  return () => {
    closed = true
    const pending = client?.dispose()
    // The pending connection's refusal is expected once we have let go of it.
    if (pending) pending.catch(() => {})
  }
}
