import { describe, expect, it } from 'vitest'
import { postgresPlaceholders } from './client.ts'

describe('postgresPlaceholders', () => {
  it('numbers the placeholders in order', () => {
    expect(postgresPlaceholders('SELECT * FROM "Job" WHERE "agentId" = ? AND "id" IN (?, ?) LIMIT ?')).toBe(
      'SELECT * FROM "Job" WHERE "agentId" = $1 AND "id" IN ($2, $3) LIMIT $4',
    )
    expect(postgresPlaceholders('SELECT 1')).toBe('SELECT 1')
  })

  it('copies question marks inside quoted strings, doubled quotes included', () => {
    expect(postgresPlaceholders(`SELECT 'why?' AS q, ? AS a`)).toBe(`SELECT 'why?' AS q, $1 AS a`)
    expect(postgresPlaceholders(`SELECT 'it''s ?' AS q WHERE "x" = ?`)).toBe(
      `SELECT 'it''s ?' AS q WHERE "x" = $1`,
    )
    // An unterminated string runs to the end: nothing after its quote is a placeholder.
    expect(postgresPlaceholders(`SELECT ? || 'open ?`)).toBe(`SELECT $1 || 'open ?`)
  })

  it('copies question marks inside quoted identifiers', () => {
    expect(postgresPlaceholders('SELECT "who?" FROM "t?" WHERE "a" = ?')).toBe(
      'SELECT "who?" FROM "t?" WHERE "a" = $1',
    )
  })

  it('copies line and block comments as they are', () => {
    expect(postgresPlaceholders('SELECT ? -- is this one?\n, ?')).toBe('SELECT $1 -- is this one?\n, $2')
    expect(postgresPlaceholders('SELECT ? -- to the end?')).toBe('SELECT $1 -- to the end?')
    expect(postgresPlaceholders('SELECT /* why ? here */ ?, ?')).toBe('SELECT /* why ? here */ $1, $2')
    expect(postgresPlaceholders('SELECT ? /* open ?')).toBe('SELECT $1 /* open ?')
    // A lone dash or slash is an operator, not a comment.
    expect(postgresPlaceholders('SELECT ? - ?, ? / ?')).toBe('SELECT $1 - $2, $3 / $4')
  })
})
