import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// The SQLite and Postgres schemas must describe the same models, so one set of mappers and one
// conformance suite serve both adapters. They may differ only where the database does: native
// types (@db.*), indexes (Postgres has spec 002's extra ones), and the full-text columns
// (`search*`), which on SQLite are FTS5 tables its migrations own.

const prismaDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../prisma')

/** model -> field -> what must agree (type, optionality, identity, default, relation). */
type Shape = Map<string, Map<string, string>>

/** Reads the models of a Prisma schema: each field's type and the attributes both databases share. */
function modelShapes(schema: string): Shape {
  const models: Shape = new Map()
  const withoutComments = schema.replace(/\/\/.*$/gm, '')
  for (const match of withoutComments.matchAll(/^\s*model\s+(\w+)\s*\{([^}]*)\}/gm)) {
    const fields = new Map<string, string>()
    for (const raw of (match[2] ?? '').split('\n')) {
      const line = raw.trim()
      if (!line) continue
      if (line.startsWith('@@')) {
        // Identity and uniqueness change behaviour; indexes (@@index) only speed.
        if (/^@@(id|unique)\b/.test(line)) fields.set(line, 'block')
        continue
      }
      const [name, type, ...attributes] = line.split(/\s+(?![^(]*\))/)
      if (!name || !type) continue
      const shared = attributes.filter((a) => !a.startsWith('@db.')).join(' ')
      fields.set(name, `${type} ${shared}`.trim())
    }
    models.set(match[1] ?? '', fields)
  }
  return models
}

/** Postgres's full-text columns (searchTokens, searchLength, searchVector, searchCounts): SQLite's are FTS5 tables. */
const POSTGRES_SEARCH_COLUMNS = new Set(['searchTokens', 'searchLength', 'searchVector', 'searchCounts'])

/** Every way two schemas' models differ, in words. */
function differences(sqlite: Shape, postgres: Shape): string[] {
  const out: string[] = []
  for (const model of new Set([...sqlite.keys(), ...postgres.keys()])) {
    const a = sqlite.get(model)
    const b = postgres.get(model)
    if (!a || !b) {
      out.push(`model ${model} only in the ${a ? 'SQLite' : 'Postgres'} schema`)
      continue
    }
    for (const field of new Set([...a.keys(), ...b.keys()])) {
      const x = a.get(field)
      const y = b.get(field)
      if (x === undefined && POSTGRES_SEARCH_COLUMNS.has(field)) continue
      if (x === undefined || y === undefined) {
        out.push(`${model}.${field} only in the ${x !== undefined ? 'SQLite' : 'Postgres'} schema`)
      } else if (x !== y) {
        out.push(`${model}.${field}: SQLite "${x}", Postgres "${y}"`)
      }
    }
  }
  return out
}

describe('the SQLite and Postgres schemas', () => {
  it('have the same models, fields, types, identities, defaults and relations', () => {
    const sqlite = modelShapes(fs.readFileSync(path.join(prismaDir, 'schema.prisma'), 'utf8'))
    const postgres = modelShapes(fs.readFileSync(path.join(prismaDir, 'postgres', 'schema.prisma'), 'utf8'))
    expect(sqlite.size).toBeGreaterThan(10)
    expect(differences(sqlite, postgres)).toEqual([])
  })

  it('are told apart when a model, a field, a type, a default or a unique key drifts', () => {
    const sqlite = modelShapes(`
      model Agent {
        id        String   @id
        createdAt DateTime @default(now())
        name      String
        @@unique([name])
        @@index([createdAt])
      }
      model Gone { id Int @id }`)
    const postgres = modelShapes(`
      model Agent {
        id        String   @id
        createdAt DateTime @default(now()) @db.Timestamptz(3)
        name      String?
        extra     Int      @default(1)
        @@index([createdAt], type: Brin)
      }`)
    expect(differences(sqlite, postgres)).toEqual([
      'Agent.name: SQLite "String", Postgres "String?"',
      'Agent.@@unique([name]) only in the SQLite schema',
      'Agent.extra only in the Postgres schema',
      'model Gone only in the SQLite schema',
    ])
  })
})
