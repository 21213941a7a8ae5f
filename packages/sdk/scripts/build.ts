/**
 * The published shape: one ESM file with the internal @engram/* packages bundled in (Node 20 cannot
 * run the TypeScript sources workspace packages export) and .d.ts files beside it. The declarations
 * come from tsc (the native compiler emits them; the bundlers' dts plugins need the old compiler
 * API), emitted for the SDK and the contract together and then pointed at each other by relative
 * paths, so a user's project resolves every type without any @engram/* package installed.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const dist = path.join(root, 'dist')
const packageJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  peerDependencies: Record<string, string>
}
const repository = path.resolve(root, '../..')

fs.rmSync(dist, { recursive: true, force: true })

await build({
  entryPoints: [path.join(root, 'src/index.ts')],
  outfile: path.join(dist, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Published dependencies stay imports; everything else (the catalog, graphql-ws's client, which
  // needs no graphql-js at run time) is bundled.
  external: Object.keys(packageJson.dependencies),
  sourcemap: true,
  legalComments: 'none',
})

// @engram/sdk/node: the file-system helpers (a `.agent-memory/` directory ⇄ files), on their own.
await build({
  entryPoints: [path.join(root, 'src/node.ts')],
  outfile: path.join(dist, 'node.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: Object.keys(packageJson.dependencies),
  sourcemap: true,
  legalComments: 'none',
})

// @engram/sdk/embedded: the engine, the SQLite adapter and the GraphQL schema it executes in
// process, bundled; native modules (better-sqlite3, hnswlib-node, Prisma's runtime) and the files
// read at run time (tokenizer tables, WordNet) stay dependencies, the ONNX embedder an optional peer.
await build({
  entryPoints: [path.join(root, 'src/embedded/index.ts')],
  outfile: path.join(dist, 'embedded.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: [...Object.keys(packageJson.dependencies), ...Object.keys(packageJson.peerDependencies)],
  // Bundled CommonJS libraries call require(): give the ESM bundle one.
  banner: {
    js: "import { createRequire as __engramRequire } from 'node:module'; const require = __engramRequire(import.meta.url);",
  },
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'error',
})
// What the bundle reads beside itself: the worker threads (looked up next to the module that
// starts them, now the bundle) and the migrations applied to a new or older file.
fs.copyFileSync(
  path.join(repository, 'packages/store-sqlite/src/db/checkpoint-worker.mjs'),
  path.join(dist, 'checkpoint-worker.mjs'),
)
// The source worker loads hnsw-build.ts through tsx; the published one is that file, bundled.
await build({
  stdin: {
    contents: `import { parentPort, workerData } from 'node:worker_threads'
import { buildGraphFile } from './hnsw-build.ts'
parentPort.postMessage(await buildGraphFile(workerData))
`,
    resolveDir: path.join(repository, 'packages/store-sqlite/src/vector'),
    loader: 'ts',
  },
  outfile: path.join(dist, 'hnsw-build-worker.mjs'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: Object.keys(packageJson.dependencies),
  logLevel: 'error',
})
fs.cpSync(path.join(repository, 'prisma/migrations'), path.join(dist, 'migrations'), { recursive: true })

const typesDir = path.join(dist, 'types')
execFileSync(
  process.execPath,
  [
    path.join(path.dirname(fileURLToPath(import.meta.resolve('typescript/package.json'))), 'bin', 'tsc'),
    '-p',
    path.join(root, 'tsconfig.build.json'),
    '--outDir',
    typesDir,
  ],
  { stdio: 'inherit' },
)

// tsc keeps the specifiers as written: `.ts` extensions and the workspace name of the contract.
const contractIndex = path.join(typesDir, 'contract', 'src', 'index.d.ts')
for (const file of walk(typesDir)) {
  const text = fs.readFileSync(file, 'utf8')
  const toContract = path.relative(path.dirname(file), contractIndex).replace(/\.d\.ts$/, '.js')
  const rewritten = text
    .replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g, '$1$2$3.js$2')
    .replace(
      /(['"])@engram\/contract\1/g,
      `$1${toContract.startsWith('.') ? toContract : `./${toContract}`}$1`,
    )
  fs.writeFileSync(file, rewritten)
}
// The generated documents are internal: no public declaration refers to them.
fs.rmSync(path.join(typesDir, 'sdk', 'src', 'generated'), { recursive: true, force: true })
fs.writeFileSync(path.join(dist, 'index.d.ts'), "export * from './types/sdk/src/index.js'\n")
fs.writeFileSync(path.join(dist, 'embedded.d.ts'), "export * from './types/sdk/src/embedded/public.js'\n")
fs.writeFileSync(path.join(dist, 'node.d.ts'), "export * from './types/sdk/src/node.js'\n")

function* walk(dir: string): Generator<string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(full)
    else if (entry.name.endsWith('.d.ts')) yield full
  }
}
