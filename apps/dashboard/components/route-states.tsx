'use client'

/** Shared loading skeleton and error boundary bodies for every route. */
export function Skeleton({ label }: { label: string }) {
  return (
    <div role="status" aria-busy="true" aria-label={`Loading ${label}`} className="skeleton">
      <div className="skeleton-bar wide" />
      <div className="skeleton-grid">
        <div className="skeleton-bar" />
        <div className="skeleton-bar" />
        <div className="skeleton-bar" />
      </div>
      <div className="skeleton-bar tall" />
    </div>
  )
}

export function RouteError({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <section role="alert" className="card">
      <h1>Something went wrong</h1>
      <p>{error.message || 'The page could not be loaded.'}</p>
      <button type="button" onClick={reset}>
        Try again
      </button>
    </section>
  )
}
