// `pnpm start` and `pnpm test` run through turbo, which hands a task only the environment
// variables turbo.json lists (strict mode, turbo 2's default): a setting it does not list is
// silently dropped, and the server starts on its default. Every variable the server's schema
// reads, and every one the dashboard reads, must be listed (a wildcard counts).

import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { EnvSchema, REPO_ROOT } from './env.ts'

interface TurboJson {
  globalEnv?: string[]
  globalPassThroughEnv?: string[]
}

const turbo = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'turbo.json'), 'utf8')) as TurboJson

const matches = (pattern: string, name: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(name)

/** Whether turbo gives a task `name`: a listed pattern admits it and no `!` pattern of that list takes it out. */
function reachesTasks(name: string): boolean {
  const admits = (list: string[] = []) =>
    list.some((p) => !p.startsWith('!') && matches(p, name)) &&
    !list.some((p) => p.startsWith('!') && matches(p.slice(1), name))
  return admits(turbo.globalEnv) || admits(turbo.globalPassThroughEnv)
}

/** `process.env.NAME` read anywhere in the dashboard's own sources. */
function dashboardVariables(): string[] {
  const found = new Set<string>()
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
      const at = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(at)
      else if (/\.(ts|tsx|mjs|js)$/.test(entry.name))
        for (const m of fs.readFileSync(at, 'utf8').matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g))
          found.add(m[1] as string)
    }
  }
  walk(path.join(REPO_ROOT, 'apps', 'dashboard'))
  return [...found]
}

describe('turbo.json passes every setting to the server and the dashboard', () => {
  it('lists every variable of the server’s schema', () => {
    const names = Object.keys(EnvSchema.shape)
    expect(names.length).toBeGreaterThan(50)
    expect(names.filter((name) => !reachesTasks(name))).toEqual([])
  })

  it('lists every variable the dashboard reads', () => {
    const names = dashboardVariables()
    expect(names).toContain('ENGRAM_API_URL')
    expect(names.filter((name) => !reachesTasks(name))).toEqual([])
  })

  it('reads the lists as turbo does: a wildcard admits, a `!` pattern takes out, pass-through admits', () => {
    expect(reachesTasks('ENGRAM_SEARCH_CANDIDATE_ROWS')).toBe(true)
    expect(reachesTasks('REDIS_URL')).toBe(true)
    // Secrets are passed through without entering the cache's hash.
    expect(turbo.globalEnv).toContain('!ENGRAM_LLM_API_KEY')
    expect(reachesTasks('ENGRAM_LLM_API_KEY')).toBe(true)
    expect(reachesTasks('SOME_UNLISTED_VARIABLE')).toBe(false)
  })
})
