// The engine reads time only through this port, so tests move it by hand and jobs back off on it.
export type { Clock } from '@engram/core'
