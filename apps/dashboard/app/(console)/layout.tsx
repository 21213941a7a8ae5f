import Link from 'next/link'
import type { ReactNode } from 'react'
import { adminKey, fetchHealth } from '../../lib/api'
import { signOut } from '../sign-in/actions'

const PAGES = [
  ['/', 'Overview'],
  ['/knowledge', 'Knowledge'],
  ['/sessions', 'Sessions'],
  ['/memory', 'Memory'],
  ['/memories', 'Memories'],
  ['/optimizer', 'Optimizer'],
  ['/keys', 'API keys'],
] as const

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  await adminKey()
  const health = await fetchHealth()
  return (
    <div className="console">
      <nav aria-label="Main" className="sidenav">
        <ul>
          {PAGES.map(([href, label]) => (
            <li key={href}>
              <Link href={href}>{label}</Link>
            </li>
          ))}
        </ul>
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
      </nav>
      <div className="page">{children}</div>
    </div>
  )
}
