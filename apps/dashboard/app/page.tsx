import { fetchHealth } from '../lib/api'

// Always live: the API's state is the page.
export const dynamic = 'force-dynamic'

export default async function HomePage() {
  const result = await fetchHealth()
  return (
    <section aria-labelledby="status-heading">
      <h1 id="status-heading">Status</h1>
      {result.reachable ? (
        <dl className="status" data-testid="api-status">
          <div>
            <dt>API</dt>
            <dd className={result.health.status === 'ok' ? 'ok' : 'bad'}>
              {result.health.status === 'ok' ? 'healthy' : result.health.status}
            </dd>
          </div>
          <div>
            <dt>Database</dt>
            <dd className={result.health.database === 'ok' ? 'ok' : 'bad'}>{result.health.database}</dd>
          </div>
          <div>
            <dt>Version</dt>
            <dd>{result.health.version}</dd>
          </div>
        </dl>
      ) : (
        <p className="bad" data-testid="api-status" role="alert">
          API unreachable at {result.url}: {result.reason}. Start it with <code>pnpm start</code>.
        </p>
      )}
    </section>
  )
}
