'use client'

import { useEffect, useState } from 'react'
import { relativeTime } from '../lib/format'

/**
 * "3 minutes ago" that hydrates cleanly. Computing it against the browser's clock during the
 * first render printed a different text from the server's whenever a unit boundary fell between
 * the two renders ("59 seconds ago" vs "1 minute ago": React error #418). The first render uses
 * the server's render time; after hydration the browser's clock takes over and keeps it current.
 */
export function TimeAgo({ date, renderedAt }: { date: string; renderedAt: string }) {
  const [now, setNow] = useState(() => new Date(renderedAt))
  useEffect(() => {
    setNow(new Date())
    const timer = setInterval(() => setNow(new Date()), 30_000)
    return () => clearInterval(timer)
  }, [])
  // The absolute time in UTC: locale and time zone formatting also differ between the two renders.
  const absolute = `${date.slice(0, 19).replace('T', ' ')} UTC`
  return (
    <time dateTime={date} title={absolute}>
      {relativeTime(date, now)}
    </time>
  )
}
