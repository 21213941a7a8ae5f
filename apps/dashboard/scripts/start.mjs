// Starts the built dashboard on DASHBOARD_PORT (default 3000).
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const port = process.env.DASHBOARD_PORT || '3000'
const nextBin = require.resolve('next/dist/bin/next')
const child = spawn(
  process.execPath,
  [nextBin, 'start', '-p', port, '-H', process.env.DASHBOARD_HOST || '0.0.0.0'],
  {
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  },
)
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal))
child.on('exit', (code) => process.exit(code ?? 0))
