import { execFileSync, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer } from './server.ts'

const sdkDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const pnpm = (args: string[], cwd: string) =>
  execFileSync('pnpm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

describe('the published package', () => {
  let server: Awaited<ReturnType<typeof startServer>>
  let project: string

  beforeAll(async () => {
    server = await startServer()
    pnpm(['run', 'build'], sdkDir)
    // Outside the monorepo, so nothing resolves through the workspace.
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-sdk-user-'))
    const tarball = pnpm(['pack', '--pack-destination', project], sdkDir).trim().split('\n').pop()!
    fs.writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({
        name: 'sdk-user',
        private: true,
        type: 'module',
        dependencies: { '@engram/sdk': `file:${tarball}` },
        // pnpm 10 builds no dependency's native module unless told (npm builds them unasked);
        // the README says so too.
        pnpm: { onlyBuiltDependencies: ['better-sqlite3', 'hnswlib-node'] },
      }),
    )
    // From the local store the workspace was installed from. Prefer-offline, not offline: a
    // frozen-lockfile install fills the store but not pnpm's metadata cache, so on a new machine
    // the packages' metadata comes from the registry once. The native modules compile against the
    // installed Node headers (nodedir), as in the workspace.
    const store = pnpm(['store', 'path'], sdkDir).trim()
    execFileSync('pnpm', ['install', '--prefer-offline', '--store-dir', store, '--ignore-workspace'], {
      cwd: project,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr' },
    })
  }, 600_000)
  afterAll(async () => {
    await server?.close()
    if (project) fs.rmSync(project, { recursive: true, force: true })
  })

  it('ships built ESM and declarations, and no TypeScript sources or workspace dependencies', () => {
    const installed = path.join(project, 'node_modules', '@engram', 'sdk')
    const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'))
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', default: './dist/index.js' })
    expect(manifest.exports['./embedded']).toEqual({
      types: './dist/embedded.d.ts',
      default: './dist/embedded.js',
    })
    expect(manifest.exports['./node']).toEqual({ types: './dist/node.d.ts', default: './dist/node.js' })
    // npm packages only: the internal @engram/* ones are bundled.
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@engram/'))).toEqual([])
    expect(manifest.peerDependenciesMeta['@huggingface/transformers']).toEqual({ optional: true })
    expect(fs.existsSync(path.join(installed, 'src'))).toBe(false)
    for (const file of ['index.js', 'embedded.js', 'node.js']) {
      const bundle = fs.readFileSync(path.join(installed, 'dist', file), 'utf8')
      expect(bundle, file).not.toMatch(/from ["']@engram\//)
    }
    // Remote users load no native code: the remote bundle names none of the native modules.
    const remote = fs.readFileSync(path.join(installed, 'dist', 'index.js'), 'utf8')
    expect(remote).not.toMatch(/better-sqlite3|hnswlib-node|@prisma\//)
    // The embedded bundle calls the engine's operations: no GraphQL schema, server or executor.
    const embedded = fs.readFileSync(path.join(installed, 'dist', 'embedded.js'), 'utf8')
    expect(embedded).not.toMatch(/graphql-yoga|@pothos\/|new GraphQLSchema|function executeOperation/)
  })

  it('runs the embedded README example on a file under plain Node 20: no server', async () => {
    const readme = fs.readFileSync(path.join(sdkDir, 'README.md'), 'utf8')
    const example = /<!-- embedded-example:start -->\s*```js\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(example?.split('\n').filter(Boolean).length).toBeLessThanOrEqual(11)
    fs.writeFileSync(path.join(project, 'embedded.mjs'), example!)
    const child = await runExample(project, {}, 'embedded.mjs')
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('Lena moved to Berlin')
    expect(child.stdout).toContain('tabs')
    expect(fs.existsSync(path.join(project, 'memory.db'))).toBe(true)
  })

  it('runs the README example against a server under plain Node 20', async () => {
    const readme = fs.readFileSync(path.join(sdkDir, 'README.md'), 'utf8')
    const example = /<!-- example:start -->\s*```js\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(example?.split('\n').filter(Boolean).length).toBeLessThanOrEqual(11)
    fs.writeFileSync(path.join(project, 'example.mjs'), example!)
    const key = await server.agentKey('readme-agent')
    // A child process, not execFileSync: the server answering it lives in this process.
    const child = await runExample(project, { ENGRAM_URL: server.url, ENGRAM_API_KEY: key })
    expect(child.stderr).toBe('')
    expect(child.status).toBe(0)
    expect(child.stdout).toContain('Lena moved to Berlin')
    expect(child.stdout).toContain('tabs')
  })

  it('type-checks a TypeScript user of the package with the shipped declarations', () => {
    fs.writeFileSync(
      path.join(project, 'check.ts'),
      `import { Engram, type EngramClient, type Result } from '@engram/sdk'
import { Engram as Embedded, type EmbeddedEngram } from '@engram/sdk/embedded'
const client: EngramClient = Engram.connect({ url: 'http://localhost:4000', apiKey: 'k' })
export async function local(): Promise<EngramClient> {
  const engram: EmbeddedEngram = await Embedded.open({ path: './memory.db', agentId: 'me' })
  // @ts-expect-error: path is required
  void Embedded.open({ agentId: 'me' })
  return engram.forAgent('other')
}
export async function firstHit(): Promise<string | undefined> {
  const result: Result<{ hits: { text: string }[] }> = await client.search({ query: 'q', scopes: ['MEMORIES'] })
  // @ts-expect-error: not a scope
  void client.search({ query: 'q', scopes: ['EVERYTHING'] })
  return result.ok ? result.data.hits[0]?.text : result.error.code
}
`,
    )
    const tsc = path.join(
      path.dirname(fileURLToPath(import.meta.resolve('typescript/package.json'))),
      'bin',
      'tsc',
    )
    const result = spawnSync(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        '',
        'check.ts',
      ],
      { cwd: project, encoding: 'utf8' },
    )
    expect(result.stdout + result.stderr).toBe('')
    expect(result.status).toBe(0)
  })
})

function runExample(cwd: string, env: Record<string, string>, file = 'example.mjs') {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('close', (status) => resolve({ status, stdout, stderr }))
  })
}
