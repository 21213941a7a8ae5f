// A stand-in for Prisma's native `schema-engine` binary, for machines that cannot download it.
// The Prisma CLI starts whatever PRISMA_SCHEMA_ENGINE_BINARY names and talks to it in two ways:
//   <bin> --datasource <json> cli can-connect-to-database|create-database|drop-database
//       plain argv calls; failures are reported as JSON log lines on stderr
//   <bin> [--datamodels <file>]... [--datasource <json>]
//       line-delimited JSON-RPC 2.0 on stdin/stdout, one engine per CLI command
// The JSON-RPC methods are served by Prisma's WebAssembly build of the same engine
// (@prisma/schema-engine-wasm), which reaches SQLite through the better-sqlite3 driver adapter.
// Only SQLite is supported. See README.md beside this file for the quirks worked around here.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
// The engine's packages are dev dependencies of the API app, not of the root.
const requireFromApi = createRequire(path.join(root, 'apps', 'api', 'package.json'))
const Database = requireFromApi('better-sqlite3')

// Prisma's own bookkeeping table, byte for byte what the native engine creates on SQLite.
const MIGRATIONS_TABLE_DDL = `CREATE TABLE "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`

// ---------------------------------------------------------------------------------------------
// Logging in the engine's tracing format: the CLI keeps `fields.message` of every stderr line and
// reads `fields.error_code` from ERROR lines.

function logLine(level, fields) {
  process.stderr.write(
    `${JSON.stringify({ timestamp: new Date().toISOString(), level, fields, target: 'schema_engine::logger' })}\n`,
  )
}

class EngineError extends Error {
  constructor(message, errorCode) {
    super(message)
    this.errorCode = errorCode
  }
}

// ---------------------------------------------------------------------------------------------
// Arguments and the datasource

function parseArgs(argv) {
  const args = { datamodels: [], datasource: null, cli: null }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--datamodels') args.datamodels.push(argv[++i])
    else if (arg === '--datasource') args.datasource = JSON.parse(argv[++i])
    else if (arg === '--enabled-preview-features' || arg === '--extension-types') i++
    else if (arg === 'cli') args.cli = argv.slice(i + 1)
    else if (arg === '--version' || arg === '-V') args.version = true
    if (args.cli) break
  }
  return args
}

/** The SQLite file a `file:` URL names, absolute (relative paths resolve against the CLI's cwd). */
function sqliteFile(url) {
  if (!url) return null
  if (!url.startsWith('file:')) {
    throw new EngineError(
      `This offline schema engine supports SQLite only (file: URLs), not ${url.split(':')[0]}.`,
      'P1013',
    )
  }
  const file = decodeURIComponent(url.slice('file:'.length).replace(/^\/\/(?=\/)/, '')).replace(/\?.*$/, '')
  return file === ':memory:' ? file : path.resolve(process.cwd(), file)
}

// ---------------------------------------------------------------------------------------------
// `cli` subcommands

function runCliCommand([command], datasource) {
  const file = sqliteFile(datasource?.url)
  if (!file) throw new EngineError('No datasource URL was given.', 'P1012')
  switch (command) {
    case 'can-connect-to-database':
      if (file !== ':memory:' && !fs.existsSync(file)) {
        throw new EngineError(`Database ${path.basename(file)} does not exist at ${file}`, 'P1003')
      }
      new Database(file, { fileMustExist: true }).close()
      return 'Connection successful'
    case 'create-database':
      fs.mkdirSync(path.dirname(file), { recursive: true })
      new Database(file).close()
      return `Database '${path.basename(file)}' was successfully created.`
    case 'drop-database':
      for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${file}${suffix}`, { force: true })
      return `The database was successfully dropped.`
    default:
      throw new EngineError(`Unknown cli subcommand: ${command}`)
  }
}

// ---------------------------------------------------------------------------------------------
// The WebAssembly engine

async function importFromApi(specifier) {
  return import(pathToFileURL(requireFromApi.resolve(specifier)).href)
}

// The WASM engine reports a Rust panic's message here before it throws a bare `unreachable`.
const panicRegistry = {
  message: null,
  set_message(message) {
    this.message = message
  },
}
globalThis.PRISMA_WASM_PANIC_REGISTRY = panicRegistry

async function loadWasmBindings() {
  const engineDir = path.dirname(requireFromApi.resolve('@prisma/schema-engine-wasm'))
  const bindings = await import(pathToFileURL(path.join(engineDir, 'schema_engine_bg.js')).href)
  // The package's entry `import`s its .wasm file, which Node 20 cannot do: instantiate it from its
  // bytes and hand the instance to the JS glue the way the entry would.
  const bytes = fs.readFileSync(path.join(engineDir, 'schema_engine_bg.wasm'))
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bindings })
  bindings.__wbg_set_wasm(instance.exports)
  instance.exports.__wbindgen_start?.()
  return bindings
}

function isMultiStatementError(error) {
  const text = `${error?.message ?? ''} ${JSON.stringify(error?.cause ?? {})}`
  return text.includes('more than one statement')
}

/**
 * The engine sends a whole migration file as one raw statement (replaying migrations into the
 * shadow database, for instance), which better-sqlite3's prepare() refuses when it holds several
 * statements: those go through executeScript instead.
 */
function acceptScripts(connection) {
  const executeRaw = connection.executeRaw.bind(connection)
  connection.executeRaw = async (query) => {
    try {
      return await executeRaw(query)
    } catch (error) {
      if (query.args?.length || !isMultiStatementError(error)) throw error
      await connection.executeScript(query.sql)
      return 0
    }
  }
  return connection
}

async function createAdapter(mainFile, shadowFile, onMainConnection) {
  const { PrismaBetterSqlite3 } = await importFromApi('@prisma/adapter-better-sqlite3')
  const { bindMigrationAwareSqlAdapterFactory } = await importFromApi('@prisma/driver-adapter-utils')
  const factory = new PrismaBetterSqlite3({ url: mainFile }, { shadowDatabaseUrl: shadowFile })
  return bindMigrationAwareSqlAdapterFactory({
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      if (mainFile !== ':memory:') fs.mkdirSync(path.dirname(mainFile), { recursive: true })
      const connection = await factory.connect()
      onMainConnection(connection)
      return acceptScripts(connection)
    },
    connectToShadowDb: async () => acceptScripts(await factory.connectToShadowDb()),
  })
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC server

/** Methods that read `_prisma_migrations`, which the WASM engine cannot do before it exists. */
const READS_MIGRATIONS_TABLE = new Set([
  'devDiagnostic',
  'diagnoseMigrationHistory',
  'markMigrationApplied',
  'markMigrationRolledBack',
])
/** Of those, the ones that must leave the database as they found it. */
const READ_ONLY = new Set(['devDiagnostic', 'diagnoseMigrationHistory'])

function usesMainDatabase(method, params) {
  if (method === 'diff') {
    return [params?.from, params?.to].some((target) => target?.tag === 'schemaDatasource')
  }
  return method !== 'debugPanic'
}

const quoteName = (name) => `"${name.replaceAll('"', '""')}"`

class Server {
  #engine = null
  #engineFile = null
  #mainConnections = []
  #nextId = 1
  #pending = new Map()
  #closed = false

  constructor(args) {
    this.args = args
    this.mainFile = sqliteFile(args.datasource?.url) ?? ':memory:'
    this.shadowFile = sqliteFile(args.datasource?.shadowDatabaseUrl) ?? ':memory:'
  }

  /**
   * The WASM engine opens its main database as soon as it is constructed. A command that never
   * touches it (`migrate diff` between schemas and migrations) gets an in-memory one, so that
   * it does not create the configured database file as a side effect.
   */
  async engine(needsMainDatabase = true) {
    const file = needsMainDatabase ? this.mainFile : (this.#engineFile ?? ':memory:')
    if (this.#engine && this.#engineFile === file) return this.#engine
    this.closeConnections()
    const bindings = await loadWasmBindings()
    const datamodels = this.args.datamodels.map((schema) => [schema, fs.readFileSync(schema, 'utf8')])
    // The CLI sends no schema for some commands (`migrate diff`), and the WASM engine panics
    // without one; the native engine takes the provider from --datasource instead.
    if (datamodels.length === 0) {
      datamodels.push(['schema.prisma', 'datasource db {\n  provider = "sqlite"\n}\n'])
    }
    const adapter = await createAdapter(file, this.shadowFile, (connection) => {
      this.#mainConnections.push(connection)
    })
    this.#engine = await bindings.SchemaEngine.new({ datamodels }, (log) => forwardLog(log), adapter)
    this.#engineFile = file
    return this.#engine
  }

  closeConnections() {
    for (const { client } of this.#mainConnections.splice(0)) if (client?.open) client.close()
  }

  /** Sends a request to the CLI (only `print` exists) and waits for its answer. */
  request(method, params) {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error('The CLI closed the connection.'))
      this.#pending.set(id, { resolve, reject })
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  }

  handleResponse(message) {
    const pending = this.#pending.get(message.id)
    if (!pending) return
    this.#pending.delete(message.id)
    if (message.error) pending.reject(new Error(message.error.message ?? `${message.id} failed`))
    else pending.resolve(message.result)
  }

  /** The CLI stopped listening: nothing will answer the requests still waiting. */
  abandonRequests() {
    this.#closed = true
    for (const { reject } of this.#pending.values()) reject(new Error('The CLI closed the connection.'))
    this.#pending.clear()
  }

  /**
   * Runs `task` on the main database, through the engine's own connection once it has one: the
   * engine keeps its connection locked, so a second one would time out waiting.
   */
  withMainDatabase(task) {
    if (this.mainFile === ':memory:') return undefined
    const engineClient = this.#engineFile === this.mainFile && this.#mainConnections.at(-1)?.client
    if (engineClient?.open) return task(engineClient)
    fs.mkdirSync(path.dirname(this.mainFile), { recursive: true })
    const db = new Database(this.mainFile)
    try {
      return task(db)
    } finally {
      db.close()
    }
  }

  /**
   * The WASM engine reports "table does not exist" where the native engine sees a database Prisma
   * Migrate has not initialised yet: create the (empty) table first. Returns whether it did.
   */
  ensureMigrationsTable() {
    return this.withMainDatabase((db) => {
      const exists = db.prepare(
        `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_prisma_migrations'`,
      )
      if (exists.get()) return false
      db.exec(MIGRATIONS_TABLE_DDL)
      return true
    })
  }

  dropMigrationsTableIfUnused() {
    this.withMainDatabase((db) => {
      // Number(): the engine's connection reads integers as BigInt.
      if (Number(db.prepare('SELECT COUNT(*) AS n FROM "_prisma_migrations"').get().n) === 0) {
        db.exec('DROP TABLE "_prisma_migrations"')
      }
    })
  }

  /**
   * The WASM engine's reset does nothing on better-sqlite3, where the native engine deletes the
   * file. Drop every schema object instead, external (FTS5) tables included, as deleting would.
   */
  resetMainDatabase() {
    this.withMainDatabase((db) => {
      db.pragma('foreign_keys = OFF')
      const objects = () =>
        db
          .prepare(
            `SELECT type, name, sql FROM sqlite_master
             WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND type IN ('table', 'view', 'trigger')`,
          )
          .all()
      for (const { type, name } of objects().filter((o) => o.type !== 'table')) {
        db.exec(`DROP ${type.toUpperCase()} IF EXISTS ${quoteName(name)}`)
      }
      // Virtual tables first: dropping one drops its shadow tables with it.
      const isVirtual = (o) => /^CREATE VIRTUAL/i.test(o.sql ?? '')
      const tables = objects().sort((a, b) => Number(isVirtual(b)) - Number(isVirtual(a)))
      for (const { name } of tables) db.exec(`DROP TABLE IF EXISTS ${quoteName(name)}`)
      db.exec('VACUUM')
      db.pragma('foreign_keys = ON')
    })
  }

  async call(method, params) {
    const needsMainDatabase = usesMainDatabase(method, params)
    switch (method) {
      case 'getDatabaseVersion':
        return (await this.engine(needsMainDatabase)).version(params ?? null)
      case 'createDatabase': {
        const url = params?.datasource?.url ?? this.args.datasource?.url
        runCliCommand(['create-database'], { url })
        return { databaseName: path.basename(sqliteFile(url)) }
      }
      case 'reset':
        this.resetMainDatabase()
        return null
      case 'diff': {
        const result = await (await this.engine(needsMainDatabase)).diff(params)
        // The native engine prints the diff through the CLI; the WASM build returns it instead.
        if (result.stdout != null) await this.request('print', { content: result.stdout })
        return { exitCode: result.exitCode }
      }
      case 'evaluateDataLoss':
      case 'createMigration': {
        const engine = await this.engine()
        // The WASM engine hands these two no way to open a shadow database: they only find the
        // migrations' end state in a cache that `diagnoseMigrationHistory` fills for the
        // migrations applied at that moment. Once `migrate dev` has applied new ones the lookup
        // misses ("SQLite shadow DB must be provided through an external factory"): refill it.
        await engine.diagnoseMigrationHistory({
          migrationsList: params.migrationsList,
          optInToShadowDatabase: true,
          filters: params.filters ?? { externalTables: [], externalEnums: [] },
        })
        return engine[method](params)
      }
      default: {
        const engine = await this.engine(needsMainDatabase)
        if (typeof engine[method] !== 'function') {
          throw Object.assign(new Error(`Method not found: ${method}`), { rpcCode: -32601 })
        }
        const created = READS_MIGRATIONS_TABLE.has(method) && this.ensureMigrationsTable()
        try {
          return await engine[method](params)
        } finally {
          if (created && READ_ONLY.has(method)) this.dropMigrationsTableIfUnused()
        }
      }
    }
  }

  async handleRequest(message) {
    let reply
    try {
      const result = await this.call(message.method, message.params)
      reply = { jsonrpc: '2.0', id: message.id, result: result ?? null }
    } catch (error) {
      reply = { jsonrpc: '2.0', id: message.id, error: rpcError(error) }
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`)
  }
}

function forwardLog(log) {
  const text = typeof log === 'string' ? log : JSON.stringify(log)
  for (const line of text.split('\n')) if (line.trim()) process.stderr.write(`${line}\n`)
}

/**
 * An error as the native engine reports it: the CLI shows `data.message`, prefixed with
 * `data.error_code` when there is one. The WASM engine rejects with a plain Error whose message is
 * the connector's (it carries no Prisma error code).
 */
function rpcError(error) {
  if (error?.rpcCode) return { code: error.rpcCode, message: error.message }
  const message = error instanceof Error ? error.message : String(error)
  const errorCode = error?.errorCode ?? null
  logLine('ERROR', { is_panic: false, message, error_code: errorCode ?? undefined })
  return {
    code: 4466,
    message: 'An error happened. Check the data field for details.',
    data: { is_panic: false, message, meta: null, error_code: errorCode },
  }
}

async function serve(args) {
  // A Rust panic surfaces as an uncaught `unreachable` from an async WASM closure: report it the
  // way the native engine does (an ERROR line, exit code 101) so the CLI shows its message.
  process.on('uncaughtException', (error) => {
    logLine('ERROR', {
      is_panic: true,
      message: panicRegistry.message ?? String(error?.stack ?? error),
    })
    process.exit(101)
  })
  const server = new Server(args)
  let queue = Promise.resolve()
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
  lines.on('line', (line) => {
    if (!line.trim()) return
    let message
    try {
      message = JSON.parse(line)
    } catch {
      logLine('ERROR', { message: `Could not parse JSON-RPC message: ${line.slice(0, 200)}` })
      return
    }
    if (message.method) queue = queue.then(() => server.handleRequest(message))
    else server.handleResponse(message)
  })
  // The CLI ends stdin and then terminates the engine at once: close the database either way so
  // SQLite releases its locks and journal cleanly.
  process.on('SIGTERM', () => {
    server.closeConnections()
    process.exit(0)
  })
  await new Promise((resolve) => lines.on('close', resolve))
  server.abandonRequests()
  await queue
  server.closeConnections()
}

// ---------------------------------------------------------------------------------------------

const args = parseArgs(process.argv.slice(2))
if (args.version) {
  const engineDir = path.dirname(requireFromApi.resolve('@prisma/schema-engine-wasm'))
  const { version } = JSON.parse(fs.readFileSync(path.join(engineDir, 'package.json'), 'utf8'))
  process.stdout.write(`schema-engine-cli ${version} (offline stand-in)\n`)
} else if (args.cli) {
  try {
    process.stdout.write(`${runCliCommand(args.cli, args.datasource)}\n`)
  } catch (error) {
    logLine('INFO', { message: `Starting schema engine CLI: ${args.cli.join(' ')}` })
    logLine('ERROR', { is_panic: false, error_code: error.errorCode, message: error.message })
    process.exitCode = 1
  }
} else {
  await serve(args)
}
