import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { checkImports, importsOf, RULES } from '../../../tools/check-imports.mjs'

/** A throwaway repository with one file in a governed package. */
function repoWith(packageDir: string, file: string, text: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-rules-'))
  const dir = path.join(root, packageDir)
  fs.mkdirSync(path.join(dir, path.dirname(file)), { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `@engram/${path.basename(dir)}` }))
  fs.writeFileSync(path.join(dir, file), text)
  return root
}

describe('the import rules (tools/check-imports.mjs, run by pnpm test)', () => {
  it('pass on this repository', () => {
    expect(checkImports()).toEqual([])
  })

  it('catch the engine importing Prisma, GraphQL, an adapter or apps/, statically or dynamically', () => {
    const root = repoWith(
      'packages/engine',
      'src/use-case.ts',
      [
        "import { PrismaClient } from '@prisma/client'",
        "import type { Database } from '@engram/store-sqlite'",
        "export { createApp } from '../../../apps/api/src/yoga.ts'",
        "const graphql = await import('graphql')",
        "import { stemmer } from 'stemmer'",
        "import type { Clock } from '@engram/core'",
      ].join('\n'),
    )
    const problems = checkImports(root).map((p) => p.import)
    expect(problems).toEqual([
      "'@prisma/client' (forbidden: @prisma/*)",
      "'@engram/store-sqlite' (forbidden: @engram/store-*)",
      'a relative import out of the package',
      "'graphql' (forbidden: graphql)",
    ])
  })

  it('catch core doing I/O, with or without the node: prefix, but not in its tests', () => {
    const root = repoWith('packages/core', 'src/x.ts', "import fs from 'fs'\nimport { z } from 'zod'")
    fs.writeFileSync(path.join(root, 'packages/core/src/x.test.ts'), "import fs from 'node:fs'")
    expect(checkImports(root).map((p) => [p.file, p.import])).toEqual([
      ['packages/core/src/x.ts', "'fs' (forbidden: node:fs)"],
    ])
  })

  it('catch a resolver of the API reaching the SQLite adapter, but not its start-up code', () => {
    const root = repoWith(
      'apps/api',
      'src/schema/session.ts',
      "import { toSession } from '@engram/store-sqlite'",
    )
    fs.writeFileSync(
      path.join(root, 'apps/api/src/server.ts'),
      "import { createDatabase } from '@engram/store-sqlite'",
    )
    expect(checkImports(root).map((p) => [p.file, p.import])).toEqual([
      ['apps/api/src/schema/session.ts', "'@engram/store-sqlite' (forbidden: @engram/store-*)"],
    ])
  })

  it('keep ioredis in the Redis adapter: not in the engine, not in a resolver; the API opens it at start-up', () => {
    const root = repoWith('packages/engine', 'src/events/bus.ts', "import { Redis } from 'ioredis'")
    const files: [file: string, text: string][] = [
      ['apps/api/src/schema/optimizer.ts', "import { RedisEventTarget } from '@engram/bus-redis'"],
      ['apps/api/src/pubsub.ts', "import { Redis } from 'ioredis'"],
      ['apps/api/src/yoga.ts', "import { RedisEventTarget } from '@engram/bus-redis'"],
    ]
    for (const [file, text] of files) {
      fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true })
      fs.writeFileSync(path.join(root, file), text)
    }
    fs.writeFileSync(path.join(root, 'apps/api/package.json'), JSON.stringify({ name: '@engram/api' }))
    fs.mkdirSync(path.join(root, 'packages/bus-redis/src'), { recursive: true })
    fs.writeFileSync(
      path.join(root, 'packages/bus-redis/package.json'),
      JSON.stringify({ name: '@engram/bus-redis' }),
    )
    fs.writeFileSync(
      path.join(root, 'packages/bus-redis/src/target.ts'),
      "import { Redis } from 'ioredis'\nimport { createPubSub } from 'graphql-yoga'",
    )
    expect(checkImports(root).map((p) => [p.file, p.import])).toEqual([
      ['packages/engine/src/events/bus.ts', "'ioredis' (forbidden: ioredis)"],
      ['packages/bus-redis/src/target.ts', "'graphql-yoga' (forbidden: graphql-*)"],
      ['apps/api/src/pubsub.ts', "'ioredis' (forbidden: ioredis)"],
      ['apps/api/src/schema/optimizer.ts', "'@engram/bus-redis' (forbidden: @engram/bus-*)"],
    ])
  })

  it('keep the model-service adapters away from storage and doors', () => {
    const root = repoWith('packages/providers', 'src/llm.ts', "import { createEngine } from '@engram/engine'")
    expect(checkImports(root).map((p) => [p.file, p.import])).toEqual([
      ['packages/providers/src/llm.ts', "'@engram/engine' (forbidden: @engram/engine)"],
    ])
  })

  it('keep the SDK from the GraphQL door: no @engram/api, no relative path into apps/', () => {
    const root = repoWith(
      'packages/sdk',
      'src/embedded/runtime.ts',
      [
        "import { createApp } from '@engram/api'",
        "import { schema } from '../../../../apps/api/src/schema/index.ts'",
        "import { createOperations } from '@engram/engine'",
        "import { client } from '../remote.ts'",
      ].join('\n'),
    )
    fs.writeFileSync(
      path.join(root, 'packages/sdk/src/embedded/runtime.test.ts'),
      "import { startServer } from '../../../../apps/api/src/server.ts'",
    )
    expect(checkImports(root).map((p) => [p.file, p.import])).toEqual([
      ['packages/sdk/src/embedded/runtime.ts', "'@engram/api' (forbidden: @engram/api)"],
      ['packages/sdk/src/embedded/runtime.ts', 'a relative import out of the package'],
    ])
  })

  it('keep the throwaway test servers out of what an adapter ships, but not out of its tests', () => {
    const root = repoWith(
      'packages/store-postgres',
      'src/storage.ts',
      "import { startPostgres } from '@engram/test-servers'",
    )
    fs.writeFileSync(
      path.join(root, 'packages/store-postgres/src/storage.test.ts'),
      "import { startPostgres } from '@engram/test-servers'",
    )
    expect(checkImports(root).map((p) => [p.file, p.import])).toEqual([
      ['packages/store-postgres/src/storage.ts', "'@engram/test-servers' (forbidden: @engram/test-servers)"],
    ])
  })

  it('read every form of import specifier', () => {
    expect(
      importsOf(
        "import a from 'a'\nimport 'b'\nexport * from 'c'\nimport {\n  d,\n} from 'd'\nconst e = await import('e')\nrequire('f')",
      ),
    ).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    expect(RULES.map((r) => r.package)).toEqual([
      'packages/core',
      'packages/engine',
      'packages/store-sqlite',
      'packages/store-postgres',
      'packages/bus-redis',
      'packages/providers',
      'packages/sdk',
      'apps/api',
    ])
  })
})
