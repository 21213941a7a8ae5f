import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const script = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../scripts/ensure-services.sh',
)

describe('scripts/ensure-services.sh', () => {
  it('passes at once when both servers are installed', () => {
    const result = spawnSync('bash', [script], { encoding: 'utf8' })
    expect(result.status, result.stderr).toBe(0)
    expect(result.stdout + result.stderr).toBe('')
  })

  it('fails and says what to install when a server is missing and it cannot install (not root)', () => {
    // Not root: as root, run it as the postgres user, which cannot use apt-get.
    const env = {
      ...process.env,
      POSTGRES_BIN_DIR: '/nonexistent/bin',
      REDIS_SERVER_PATH: '/nonexistent/redis',
    }
    const [command, args] =
      process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', 'bash', script]] : ['bash', [script]]
    const result = spawnSync(command, args, { encoding: 'utf8', env })
    expect(result.status).toBe(1)
    expect(result.stderr).toMatch(/missing: postgresql-15 redis-server/)
    expect(result.stderr).toMatch(/apt-get install -y postgresql-15 redis-server/)
  })
})
