import type { ReactNode } from 'react'
import { SideNav } from '../../components/side-nav'
import { adminKey, fetchHealth } from '../../lib/api'
import { signOut } from '../sign-in/actions'

const PAGES = [
  ['/', 'Overview'],
  ['/knowledge', 'Knowledge'],
  ['/sessions', 'Sessions'],
  ['/memory', 'Memory'],
  ['/memories', 'Memories'],
  ['/graph', 'Graph'],
  ['/runs', 'Runs'],
  ['/pools', 'Pools'],
  ['/working-context', 'Working context'],
  ['/profile', 'Profile'],
  ['/formation', 'Formation'],
  ['/optimizer', 'Optimizer'],
  ['/metrics', 'Metrics'],
  ['/maintenance', 'Maintenance'],
  ['/keys', 'API keys'],
] as const

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  await adminKey()
  const health = await fetchHealth()
  return (
    <div className="console">
      <SideNav pages={PAGES}>
        <p className="api-state" data-testid="api-status">
          API:{' '}
          {health.reachable ? (
            <span className={health.health.status === 'ok' ? 'ok' : 'bad'}>
              {health.health.status === 'ok' ? 'healthy' : health.health.status} (database{' '}
              {health.health.database})
            </span>
          ) : (
            <span className="bad">unreachable at {health.url}</span>
          )}
        </p>
        <form action={signOut}>
          <button type="submit" className="link">
            Sign out
          </button>
        </form>
      </SideNav>
      <div className="page">{children}</div>
    </div>
  )
}
