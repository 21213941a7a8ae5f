import type { Metadata } from 'next'
import type { ReactNode } from 'react'
import './globals.css'

export const metadata: Metadata = {
  title: 'Engram',
  description: 'Memory server for LLM agents: operator dashboard',
}

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <span className="brand">Engram</span>
          <span className="tagline">memory for LLM agents</span>
        </header>
        <main className="content">{children}</main>
      </body>
    </html>
  )
}
