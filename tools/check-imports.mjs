#!/usr/bin/env node
import fs from 'node:fs'
// The house's import rules (docs/architecture.md), checked on every source file of the packages
// they govern: `node tools/check-imports.mjs` prints each import a package may not make and exits
// non-zero. Run by `pnpm test`. A regular expression reads the import specifiers (static, dynamic,
// re-exports, require): the files are our own TypeScript, formatted by Biome, so no parser is needed.
import { builtinModules } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** Modules that reach disks, sockets, processes or threads. */
const IO = [
  'node:fs',
  'node:fs/*',
  'node:net',
  'node:http',
  'node:https',
  'node:http2',
  'node:dgram',
  'node:child_process',
  'node:worker_threads',
  'node:cluster',
  'node:sqlite',
]
/** Database and index drivers, and the ORM: only adapters load them. */
const DRIVERS = ['@prisma/*', 'prisma', 'better-sqlite3', 'hnswlib-node', 'usearch', 'pg', 'ioredis', 'redis']
/** Test infrastructure (throwaway servers): tests use it, nothing that ships does. */
const TEST_ONLY = ['@engram/test-servers']
/** The GraphQL door's libraries: only apps/api loads them. */
const DOORS = ['graphql', 'graphql-*', '@graphql-*/*', '@pothos/*', '@escape.tech/*', 'ws']

export const RULES = [
  {
    package: 'packages/core',
    why: 'core is pure: algorithms and domain types, no I/O (the clock, random and embedder are injected)',
    forbid: [...IO, 'node:os', 'node:crypto', ...DRIVERS, ...DOORS, '@engram/*', ...TEST_ONLY],
  },
  {
    package: 'packages/engine',
    why: 'the engine is written against its ports: no ORM, no driver, no adapter, no door, no files',
    forbid: [
      ...IO,
      ...DRIVERS,
      ...DOORS,
      '@engram/store-*',
      '@engram/api',
      '@engram/conformance',
      '*generated/prisma*',
      ...TEST_ONLY,
    ],
  },
  {
    package: 'packages/store-sqlite',
    why: "an adapter implements the engine's ports and knows nothing of the doors",
    forbid: [...DOORS, '@engram/api', '@engram/conformance', ...TEST_ONLY],
  },
  {
    package: 'packages/store-postgres',
    why: "an adapter implements the engine's ports and knows nothing of the doors",
    forbid: [...DOORS, '@engram/api', '@engram/conformance', ...TEST_ONLY],
  },
  {
    package: 'packages/bus-redis',
    why: "an adapter implements the engine's ports and knows nothing of the doors",
    forbid: [...DOORS, '@engram/store-*', '@engram/api', '@engram/conformance', ...TEST_ONLY],
  },
  {
    package: 'packages/providers',
    why: 'model-service adapters reach endpoints and files, never the storage or the doors',
    forbid: [
      ...DRIVERS,
      ...DOORS,
      '@engram/store-*',
      '@engram/engine',
      '@engram/api',
      '@engram/conformance',
      ...TEST_ONLY,
    ],
  },
  {
    package: 'packages/sdk',
    why: 'the SDK reaches a server over GraphQL or runs the engine in process: it never bundles the GraphQL door',
    forbid: ['@engram/api', '@engram/conformance', ...TEST_ONLY],
  },
  {
    package: 'apps/api',
    why: 'the GraphQL door calls the engine; only start-up code chooses and opens the storage adapter',
    forbid: [
      ...DRIVERS,
      '@engram/store-*',
      '@engram/bus-*',
      '@engram/conformance',
      '*generated/prisma*',
      ...TEST_ONLY,
    ],
    // The composition root and start-up: open the database, apply migrations, register the admin
    // key, start the checkpointer, build the storage (SQLite or Postgres) for the engine, connect the Redis bus.
    startup: ['src/server.ts', 'src/store.ts', 'src/yoga.ts', 'src/admin-key.ts', 'src/services/services.ts'],
  },
]

const SOURCE = /\.(ts|mts|cts|tsx|js|mjs)$/
const SPECIFIER =
  /(?:^|[\s;}])(?:import|export)\s[^'"`]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/gm

function matches(specifier, pattern) {
  const regex = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)
  return regex.test(specifier)
}

/** `fs` and `node:fs` are the same module; rules are written with the prefix. */
function normalise(specifier) {
  const bare = specifier.split('/')[0]
  return builtinModules.includes(bare) && !specifier.startsWith('node:') ? `node:${specifier}` : specifier
}

function* sourceFiles(dir) {
  if (!fs.existsSync(dir)) return
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'generated') continue
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) yield* sourceFiles(full)
    else if (SOURCE.test(entry.name)) yield full
  }
}

/** Every import specifier in a source text. */
export function importsOf(text) {
  const out = []
  for (const match of text.matchAll(SPECIFIER)) out.push(match[1] ?? match[2] ?? match[3])
  return out
}

/** The rule broken by one import of a file in `packageDir`, or null. */
export function violation(rule, packageDir, file, specifier) {
  if (specifier.startsWith('.')) {
    // A relative path out of the package reaches code the rules cannot see (apps/, another package).
    const target = path.resolve(path.dirname(file), specifier)
    return target.startsWith(packageDir + path.sep) ? null : 'a relative import out of the package'
  }
  const name = normalise(specifier)
  const own = JSON.parse(fs.readFileSync(path.join(packageDir, 'package.json'), 'utf8')).name
  if (name === own || name.startsWith(`${own}/`)) return null
  const pattern = rule.forbid.find((p) => matches(name, p))
  return pattern ? `'${specifier}' (forbidden: ${pattern})` : null
}

export function checkImports(root = ROOT, rules = RULES) {
  const problems = []
  for (const rule of rules) {
    const packageDir = path.join(root, rule.package)
    if (!fs.existsSync(packageDir)) continue
    for (const dir of ['src', 'bench']) {
      for (const file of sourceFiles(path.join(packageDir, dir))) {
        // Tests may use files and fixtures; the rules are about what the package ships.
        if (/\.test\.[a-z]+$/.test(file) || dir === 'bench') continue
        if (rule.startup?.includes(path.relative(packageDir, file))) continue
        for (const specifier of importsOf(fs.readFileSync(file, 'utf8'))) {
          const broken = violation(rule, packageDir, file, specifier)
          if (broken) problems.push({ file: path.relative(root, file), import: broken, why: rule.why })
        }
      }
    }
  }
  return problems
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const problems = checkImports()
  for (const p of problems) console.error(`${p.file}: ${p.import}\n  ${p.why}`)
  if (problems.length > 0) {
    console.error(`import rules: ${problems.length} forbidden import(s); see docs/architecture.md`)
    process.exit(1)
  }
  console.info(`import rules: ${RULES.map((r) => r.package).join(', ')} import only what they may`)
}
