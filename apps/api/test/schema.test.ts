import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { printedSchema, SCHEMA_FILE } from '../src/print-schema.ts'

describe('schema.graphql', () => {
  it('is the printed schema (run `pnpm --filter @engram/api print-schema` after changing it)', () => {
    expect(fs.readFileSync(SCHEMA_FILE, 'utf8')).toBe(printedSchema())
  })
})
