'use client'

import Link from 'next/link'
import { usePathname } from 'next/navigation'
import { type ReactNode, useEffect, useState } from 'react'

/**
 * The console's navigation. On a narrow screen (a phone at 390 px) it took half the width beside
 * the page: there it folds behind a Menu button and opens over the page, closing on navigation.
 */
export function SideNav({
  pages,
  children,
}: {
  pages: readonly (readonly [string, string])[]
  children: ReactNode
}) {
  const [open, setOpen] = useState(false)
  const pathname = usePathname()
  // biome-ignore lint/correctness/useExhaustiveDependencies: close whenever the route changes
  useEffect(() => setOpen(false), [pathname])
  return (
    <nav aria-label="Main" className={`sidenav${open ? ' open' : ''}`}>
      <button
        type="button"
        className="menu-button secondary"
        aria-expanded={open}
        aria-controls="sidenav-content"
        onClick={() => setOpen((value) => !value)}
      >
        {open ? '✕ Close' : '☰ Menu'}
      </button>
      <div id="sidenav-content" className="sidenav-content">
        <ul>
          {pages.map(([href, label]) => (
            <li key={href}>
              <Link href={href} aria-current={pathname === href ? 'page' : undefined}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
        {children}
      </div>
    </nav>
  )
}
