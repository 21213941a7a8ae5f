import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'prisma/config'

// Prisma 7 loads no .env file and env() throws when a variable is unset, so the URL is computed
// here with the same default the server uses: an absolute path under ./data.
const root = path.dirname(fileURLToPath(import.meta.url))
const url = process.env.DATABASE_URL ?? `file:${path.join(root, 'data', 'engram.db')}`

export default defineConfig({
  schema: path.join(root, 'prisma', 'schema.prisma'),
  migrations: { path: path.join(root, 'prisma', 'migrations') },
  datasource: { url },
  // FTS5 virtual tables live in migrations only (see prisma/external-tables.json).
  experimental: { externalTables: true },
  tables: {
    external: JSON.parse(fs.readFileSync(path.join(root, 'prisma', 'external-tables.json'), 'utf8')),
  },
})
