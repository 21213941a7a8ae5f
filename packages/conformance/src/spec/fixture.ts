import type { MessageToStore } from '@engram/core'
import { afterEach, beforeEach } from 'vitest'
import type { StorageFixture, StorageInitializer } from '../types.ts'

/** A fresh store for every test of a spec, destroyed after it. */
export function useFixture(initializer: StorageInitializer): () => StorageFixture {
  let fixture: StorageFixture | null = null
  beforeEach(async () => {
    fixture = await initializer.create()
  })
  afterEach(async () => {
    if (fixture) await initializer.destroy(fixture)
    fixture = null
  })
  return () => {
    if (!fixture) throw new Error('no fixture outside a test')
    return fixture
  }
}

/** A user message as the session manager would store it (two tokens, default relevance). */
export const storedMessage = (content: string, timestamp: Date, isCompressed = false): MessageToStore => ({
  role: 'user',
  speaker: null,
  content,
  tokenCount: 2,
  timestamp,
  metadata: {},
  isCompressed,
  initialRelevance: 0.5,
})
