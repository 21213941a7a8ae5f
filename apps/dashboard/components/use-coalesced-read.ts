'use client'

import { useCallback, useRef } from 'react'

/**
 * A read of the API that live events trigger: a burst of events asks for one read at a time, and
 * one more if events came in meanwhile (so the last state is always read, never N times).
 */
export function useCoalescedRead(read: () => Promise<void>): () => Promise<void> {
  const reading = useRef<'idle' | 'reading' | 'again'>('idle')
  return useCallback(async () => {
    if (reading.current !== 'idle') {
      reading.current = 'again'
      return
    }
    try {
      do {
        reading.current = 'reading'
        await read()
      } while ((reading.current as string) === 'again')
    } finally {
      reading.current = 'idle'
    }
  }, [read])
}
