/**
 * dist/engram.js: the CLI with the workspace packages it is built on (@engram/sdk, the catalog)
 * bundled, since Node cannot run their TypeScript sources; npm packages stay imports.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
fs.rmSync(path.join(root, 'dist'), { recursive: true, force: true })
await build({
  entryPoints: [path.join(root, 'src/main.ts')],
  outfile: path.join(root, 'dist/engram.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  banner: { js: '#!/usr/bin/env node' },
  plugins: [
    {
      name: 'npm-packages-external',
      setup(context) {
        context.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@engram/') ? undefined : { path: args.path, external: true },
        )
      },
    },
  ],
})
fs.chmodSync(path.join(root, 'dist/engram.js'), 0o755)
