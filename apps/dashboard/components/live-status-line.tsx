import type { LiveStatus } from '../lib/live-feed'

/** The live feed's state above what it keeps current: live, connecting, or offline and retrying. */
export function LiveStatusLine({ status }: { status: LiveStatus }) {
  return (
    <p className={`live-status ${status}`} data-testid="live-status" aria-live="polite">
      {status === 'live' ? '● live' : status === 'connecting' ? '○ connecting…' : '○ offline (retrying)'}
    </p>
  )
}
