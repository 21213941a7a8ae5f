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
