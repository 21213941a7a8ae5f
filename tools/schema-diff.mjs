#!/usr/bin/env node
// Offline schema diffing with Prisma's WebAssembly schema engine: the native engine the Prisma
// CLI downloads cannot be fetched here. Two uses:
//   node tools/schema-diff.mjs new <name>   write prisma/migrations/<timestamp>_<name>/migration.sql
//                                           for what schema.prisma has beyond the migrations
//   node tools/schema-diff.mjs check        exit 2 (and print the SQL) when they differ
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const schemaPath = path.join(root, 'prisma', 'schema.prisma')
const migrationsDir = path.join(root, 'prisma', 'migrations')
const requireFromApi = createRequire(path.join(root, 'apps', 'api', 'package.json'))
// Tables the migrations own but schema.prisma cannot describe (FTS5 virtual tables and their shadows).
const externalTables = JSON.parse(fs.readFileSync(path.join(root, 'prisma', 'external-tables.json'), 'utf8'))

async function loadEngine() {
  const engineDir = path.dirname(requireFromApi.resolve('@prisma/schema-engine-wasm'))
  const bindings = await import(pathToFileURL(path.join(engineDir, 'schema_engine_bg.js')).href)
  // Node 20 cannot `import` a .wasm module: instantiate it from its bytes with the JS glue.
  const bytes = fs.readFileSync(path.join(engineDir, 'schema_engine_bg.wasm'))
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bindings })
  bindings.__wbg_set_wasm(instance.exports)
  instance.exports.__wbindgen_start?.()
  const { PrismaBetterSqlite3 } = await import(
    pathToFileURL(requireFromApi.resolve('@prisma/adapter-better-sqlite3')).href
  )
  const { bindMigrationAwareSqlAdapterFactory } = await import(
    pathToFileURL(requireFromApi.resolve('@prisma/driver-adapter-utils')).href
  )
  // Migrations are replayed into an in-memory shadow database to learn their end state. The
  // engine sends each migration file as one raw statement, which better-sqlite3 refuses when it
  // holds several: those go through executeScript instead.
  const factory = new PrismaBetterSqlite3({ url: ':memory:' }, { shadowDatabaseUrl: ':memory:' })
  const scriptable = (connect) => async () => {
    const connection = await connect()
    const executeRaw = connection.executeRaw.bind(connection)
    connection.executeRaw = async (query) => {
      try {
        return await executeRaw(query)
      } catch (error) {
        if (!query.args?.length && connection.executeScript) {
          await connection.executeScript(query.sql)
          return 0
        }
        throw error
      }
    }
    return connection
  }
  const adapter = bindMigrationAwareSqlAdapterFactory({
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: scriptable(() => factory.connect()),
    connectToShadowDb: scriptable(() => factory.connectToShadowDb()),
  })
  const schema = fs.readFileSync(schemaPath, 'utf8')
  const engine = await bindings.SchemaEngine.new({ datamodels: [[schemaPath, schema]] }, () => {}, adapter)
  return { engine, schema }
}

function migrationList() {
  const lockPath = path.join(migrationsDir, 'migration_lock.toml')
  const dirs = fs.existsSync(migrationsDir)
    ? fs
        .readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : []
  return {
    baseDir: migrationsDir,
    lockfile: {
      path: 'migration_lock.toml',
      content: fs.existsSync(lockPath) ? fs.readFileSync(lockPath, 'utf8') : null,
    },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: {
          tag: 'ok',
          value: fs.readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8'),
        },
      },
    })),
  }
}

async function pendingSql() {
  const { engine, schema } = await loadEngine()
  const result = await engine.diff({
    from: { tag: 'migrations', ...migrationList() },
    to: { tag: 'schemaDatamodel', files: [{ path: schemaPath, content: schema }] },
    script: true,
    exitCode: true,
    filters: { externalTables, externalEnums: [] },
  })
  const sql = (result.stdout ?? '').trim()
  return sql === '' || /^-- This is an empty migration\.?$/.test(sql) ? '' : `${sql}\n`
}

const [command, name] = process.argv.slice(2)
if (command === 'check') {
  const sql = await pendingSql()
  if (sql) {
    console.error('prisma/schema.prisma has changes no migration captures; run `pnpm db:migrate <name>`:\n')
    console.error(sql)
    process.exit(2)
  }
  console.info('migrations match prisma/schema.prisma')
} else if (command === 'new' && name && /^[a-z0-9_]+$/.test(name)) {
  const sql = await pendingSql()
  if (!sql) {
    console.info('nothing to migrate: the migrations already match prisma/schema.prisma')
    process.exit(0)
  }
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14)
  const dir = path.join(migrationsDir, `${stamp}_${name}`)
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'migration.sql'), sql)
  console.info(`wrote ${path.relative(root, dir)}/migration.sql`)
} else {
  console.error('usage: node tools/schema-diff.mjs check | new <snake_case_name>')
  process.exit(1)
}
