#!/usr/bin/env node
// Offline schema diffing with Prisma's WebAssembly schema engine: the native engine the Prisma
// CLI downloads cannot be fetched here. For both schemas, SQLite (prisma/schema.prisma,
// prisma/migrations) and Postgres (prisma/postgres/schema.prisma, prisma/postgres/migrations):
//   node tools/schema-diff.mjs new <name>   write <migrations>/<timestamp>_<name>/migration.sql
//                                           for what each schema has beyond its migrations
//   node tools/schema-diff.mjs check        exit 2 (and print the SQL) when either differs
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const requireFromApi = createRequire(path.join(root, 'apps', 'api', 'package.json'))
const requireFromPostgres = createRequire(path.join(root, 'packages', 'store-postgres', 'package.json'))
const importFrom = async (require, specifier) => import(pathToFileURL(require.resolve(specifier)).href)

// The engine replays each migration file as one raw statement, which better-sqlite3 (and pg's
// extended protocol) refuse when it holds several: those go through executeScript instead.
const scriptable = (connect) => async () => {
  const connection = await connect()
  if (connection.provider === 'postgres') adaptPostgres(connection)
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

/**
 * Two gaps of @prisma/adapter-pg 7.10 under the WASM engine. The engine describes a database from
 * catalog columns of type "char" (pg_class.relkind and the like), which the adapter refuses
 * ("Column type 'char' could not be deserialized"): they arrive as one-letter strings, so they are
 * declared text (OID 25) to it. And its executeScript splits a script at every ';', which cuts
 * a function body ($$ ... $$) apart: a script goes to the server whole instead (pg's simple query
 * protocol runs several statements).
 */
function adaptPostgres(connection) {
  const pool = connection.client
  const PG_CHAR = 18
  const PG_TEXT = 25
  connection.client = new Proxy(pool, {
    get(target, property) {
      if (property === 'query') {
        return async (...args) => {
          const result = await target.query(...args)
          for (const field of result?.fields ?? [])
            if (field.dataTypeID === PG_CHAR) field.dataTypeID = PG_TEXT
          return result
        }
      }
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  connection.executeScript = async (script) => {
    await pool.query(script)
  }
}

/**
 * The two schemas and their own migration histories. Each is diffed by replaying its migrations
 * into a shadow database of its kind: in-memory SQLite, or a database of a throwaway
 * postgresql-15 (packages/test-servers; ENGRAM_SHADOW_POSTGRES_URL names a server to use instead).
 */
const TARGETS = [
  {
    name: 'sqlite',
    schemaPath: path.join(root, 'prisma', 'schema.prisma'),
    migrationsDir: path.join(root, 'prisma', 'migrations'),
    // Tables the migrations own but schema.prisma cannot describe (FTS5 virtual tables and their shadows).
    externalTables: JSON.parse(fs.readFileSync(path.join(root, 'prisma', 'external-tables.json'), 'utf8')),
    async shadow() {
      const { PrismaBetterSqlite3 } = await importFrom(requireFromApi, '@prisma/adapter-better-sqlite3')
      return {
        factory: new PrismaBetterSqlite3({ url: ':memory:' }, { shadowDatabaseUrl: ':memory:' }),
        close: async () => {},
      }
    },
  },
  {
    name: 'postgres',
    schemaPath: path.join(root, 'prisma', 'postgres', 'schema.prisma'),
    migrationsDir: path.join(root, 'prisma', 'postgres', 'migrations'),
    externalTables: [],
    async shadow() {
      const { PrismaPg } = await importFrom(requireFromPostgres, '@prisma/adapter-pg')
      let url = process.env.ENGRAM_SHADOW_POSTGRES_URL
      let close = async () => {}
      if (!url) {
        // The harness is TypeScript: tsx's loader lets this plain-node tool import it.
        // require.resolve picks the package's CommonJS entry, which cannot register the ESM loader:
        // read the ESM one from tsx's exports.
        const tsxManifest = requireFromPostgres.resolve('tsx/package.json')
        const tsxApi = JSON.parse(fs.readFileSync(tsxManifest, 'utf8')).exports['./esm/api'].import.default
        const { register } = await import(pathToFileURL(path.join(path.dirname(tsxManifest), tsxApi)).href)
        register()
        const { startPostgres } = await import(
          pathToFileURL(path.join(root, 'packages', 'test-servers', 'src', 'postgres.ts')).href
        )
        const server = await startPostgres()
        url = server.url
        close = () => server.stop()
      }
      // PrismaPg creates (and drops) a shadow database of its own on that server.
      const factory = new PrismaPg({ connectionString: url })
      return { factory, close }
    },
  },
]

async function loadWasm() {
  const engineDir = path.dirname(requireFromApi.resolve('@prisma/schema-engine-wasm'))
  const bindings = await import(pathToFileURL(path.join(engineDir, 'schema_engine_bg.js')).href)
  // Node 20 cannot `import` a .wasm module: instantiate it from its bytes with the JS glue.
  const bytes = fs.readFileSync(path.join(engineDir, 'schema_engine_bg.wasm'))
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bindings })
  bindings.__wbg_set_wasm(instance.exports)
  instance.exports.__wbindgen_start?.()
  const { bindMigrationAwareSqlAdapterFactory } = await importFrom(
    requireFromApi,
    '@prisma/driver-adapter-utils',
  )
  return { bindings, bindMigrationAwareSqlAdapterFactory }
}

function migrationList(migrationsDir) {
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

/** The SQL `target`'s schema has beyond its migrations ('' when they match). */
async function pendingSql(wasm, target) {
  const { factory, close } = await target.shadow()
  try {
    const adapter = wasm.bindMigrationAwareSqlAdapterFactory({
      provider: factory.provider,
      adapterName: factory.adapterName,
      connect: scriptable(() => factory.connect()),
      connectToShadowDb: scriptable(() => factory.connectToShadowDb()),
    })
    const schema = fs.readFileSync(target.schemaPath, 'utf8')
    const engine = await wasm.bindings.SchemaEngine.new(
      { datamodels: [[target.schemaPath, schema]] },
      () => {},
      adapter,
    )
    const result = await engine.diff({
      from: { tag: 'migrations', ...migrationList(target.migrationsDir) },
      to: { tag: 'schemaDatamodel', files: [{ path: target.schemaPath, content: schema }] },
      script: true,
      exitCode: true,
      filters: { externalTables: target.externalTables, externalEnums: [] },
    })
    const sql = (result.stdout ?? '').trim()
    return sql === '' || /^-- This is an empty migration\.?$/.test(sql) ? '' : `${sql}\n`
  } finally {
    await close()
  }
}

const [command, name] = process.argv.slice(2)
// `ENGRAM_SCHEMA_TARGETS=sqlite` limits a run to some schemas (default: all).
const only = process.env.ENGRAM_SCHEMA_TARGETS?.split(',')
const targets = TARGETS.filter((t) => !only || only.includes(t.name))
const relative = (p) => path.relative(root, p)
if (command === 'check') {
  const wasm = await loadWasm()
  let stale = false
  for (const target of targets) {
    const sql = await pendingSql(wasm, target)
    if (sql) {
      stale = true
      console.error(
        `${relative(target.schemaPath)} has changes no migration in ${relative(target.migrationsDir)} captures; run \`pnpm db:migrate <name>\`:\n`,
      )
      console.error(sql)
    } else {
      console.info(`migrations match ${relative(target.schemaPath)}`)
    }
  }
  if (stale) process.exit(2)
} else if (command === 'new' && name && /^[a-z0-9_]+$/.test(name)) {
  const wasm = await loadWasm()
  // One timestamp for both histories, so a change made to both schemas reads as one step.
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14)
  for (const target of targets) {
    const sql = await pendingSql(wasm, target)
    if (!sql) {
      console.info(`nothing to migrate: the migrations already match ${relative(target.schemaPath)}`)
      continue
    }
    const dir = path.join(target.migrationsDir, `${stamp}_${name}`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'migration.sql'), sql)
    console.info(`wrote ${relative(dir)}/migration.sql`)
  }
} else {
  console.error('usage: node tools/schema-diff.mjs check | new <snake_case_name>')
  process.exit(1)
}
