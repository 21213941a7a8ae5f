// The engine reads time and sets its delays only through these ports, so tests move time by hand
// (every catch-up, gather, lease poll and flush fires then) and jobs back off on it.
export type { Clock, Scheduler, TimerClock } from '@engram/core'
