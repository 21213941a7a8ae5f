import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DOCUMENTS_FILE, renderDocuments } from '../scripts/documents.ts'

describe('src/operations.graphql', () => {
  it('is what the catalog and schema.graphql give today (run `pnpm --filter @engram/sdk generate`)', () => {
    expect(fs.readFileSync(DOCUMENTS_FILE, 'utf8')).toBe(renderDocuments())
  })
})
