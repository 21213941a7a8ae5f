import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { lexicographicSortSchema, printSchema } from 'graphql'
import { schema } from './schema/index.ts'

export const SCHEMA_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'schema.graphql')

export function printedSchema(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  fs.writeFileSync(SCHEMA_FILE, printedSchema())
  console.info(`wrote ${SCHEMA_FILE}`)
}
