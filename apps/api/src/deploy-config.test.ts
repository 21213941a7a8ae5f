import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { databaseBackend, EnvSchema, loadEnv, REPO_ROOT } from './env.ts'

// docker-compose.yml cannot be started on this machine (no Docker engine: see README), so what can
// be checked without one is checked here: the file parses, the API's configuration in it is one
// the server accepts, and the proxy, the replicas and the dashboard point at each other.

interface Service {
  image?: string
  build?: unknown
  command?: string[]
  environment?: Record<string, string>
  deploy?: { replicas?: number }
  depends_on?: Record<string, { condition: string }> | string[]
  ports?: string[]
  volumes?: string[]
}

const compose = parse(fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>
}
const services = compose.services
const service = (name: string): Service => {
  const found = services[name]
  if (!found) throw new Error(`docker-compose.yml has no service "${name}"`)
  return found
}

/** `${NAME:-default}` and `${NAME:?message}` as Compose expands them with nothing set. */
function expand(value: string, given: Record<string, string> = {}): string {
  return value.replace(
    /\$\{(\w+)(?::([-?])([^}]*))?\}/g,
    (_all, name: string, kind?: string, rest?: string) => {
      if (given[name] !== undefined) return given[name] as string
      if (kind === '-') return rest ?? ''
      throw new Error(`${name} must be set: ${rest}`)
    },
  )
}

describe('docker-compose.yml', () => {
  const api = service('api')
  const environment = api.environment ?? {}

  it('configures the API replicas with variables the server knows and accepts', () => {
    const known = new Set(Object.keys(EnvSchema.shape))
    expect(Object.keys(environment).filter((name) => !known.has(name))).toEqual([])
    const env = loadEnv(
      Object.fromEntries(
        Object.entries(environment).map(([k, v]) => [
          k,
          expand(String(v), { ENGRAM_ADMIN_KEY: 'k'.repeat(32) }),
        ]),
      ),
    )
    expect(databaseBackend(env.DATABASE_URL)).toBe('postgres')
    expect(new URL(env.DATABASE_URL).hostname).toBe('postgres')
    expect(new URL(env.REDIS_URL ?? '').hostname).toBe('redis')
    expect(env.ENGRAM_DB_POOL_SIZE).toBe(10)
  })

  it('refuses to start without a shared admin key', () => {
    expect(() => expand(String(environment.ENGRAM_ADMIN_KEY))).toThrow(/ENGRAM_ADMIN_KEY must be set/)
  })

  it('runs several replicas after Postgres (with pgvector) and Redis are healthy', () => {
    expect(api.deploy?.replicas).toBeGreaterThanOrEqual(2)
    expect(api.depends_on).toMatchObject({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    })
    expect(service('postgres').image).toMatch(/pgvector/)
    expect(service('redis').image).toMatch(/^redis:/)
  })

  it('puts the proxy in front of every replica on the API port, WebSockets included', () => {
    const port = environment.API_PORT
    const nginx = fs.readFileSync(path.join(REPO_ROOT, 'deploy', 'nginx.conf'), 'utf8')
    expect(nginx).toContain(`server api:${port};`)
    expect(nginx).toMatch(/proxy_set_header Upgrade \$http_upgrade;/)
    expect(service('proxy').ports).toContain(`${port}:${port}`)
    expect(service('proxy').volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro')
  })

  it('points the dashboard at the proxy, and browsers at its published port', () => {
    const dashboard = service('dashboard').environment ?? {}
    expect(new URL(String(dashboard.ENGRAM_API_URL)).host).toBe(`proxy:${environment.API_PORT}`)
    expect(new URL(String(dashboard.ENGRAM_PUBLIC_API_URL)).port).toBe(String(environment.API_PORT))
    expect(service('dashboard').image).toBe(api.image)
  })

  it('builds the image with the repository’s pnpm and Node 20', () => {
    const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8')
    const rootPackage = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'))
    expect(dockerfile).toMatch(/^FROM node:20-/m)
    expect(dockerfile).toContain(`npm install -g ${rootPackage.packageManager}`)
    expect(dockerfile).toContain('pnpm install --frozen-lockfile')
  })
})
