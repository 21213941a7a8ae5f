import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { CliError } from './errors.ts'

// Named apart from `require`: a bundler treats that name as its own CommonJS shim.
const resolveFrom = createRequire(import.meta.url)

/**
 * Progress on stderr while long work runs: a redrawn line on a terminal, nothing in a pipe (stdout
 * stays clean for --json and redirects).
 */
export function progress(label: string) {
  const started = Date.now()
  const tty = process.stderr.isTTY
  let detail = ''
  const draw = () => {
    if (tty)
      process.stderr.write(`\r\x1b[2K${label} ${((Date.now() - started) / 1000).toFixed(0)}s ${detail}`)
  }
  const timer = setInterval(draw, 250)
  draw()
  return {
    update(text: string) {
      detail = text.slice(0, 80)
      draw()
    },
    done() {
      clearInterval(timer)
      if (tty) process.stderr.write('\r\x1b[2K')
    },
  }
}

export function appDirectory(packageJson: string): string {
  return path.dirname(resolveFrom.resolve(packageJson))
}

/** Where a workspace package's entry point lies (resolved from the CLI, as Node would). */
export function entryPoint(specifier: string): string {
  return resolveFrom.resolve(specifier)
}

/**
 * Runs a TypeScript entry point of a workspace app under tsx, passing signals on; its exit code
 * becomes ours. With a label, its output lines feed the progress line and are kept for the end.
 */
export function runChild(
  label: string | null,
  cwd: string,
  args: string[],
  env: Record<string, string>,
  /** The child's stdout goes to our stderr (stdout is kept for --json). */
  { quiet = false }: { quiet?: boolean } = {},
) {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd,
      env: { ...process.env, INIT_CWD: process.cwd(), ...env },
      stdio: label ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    })
    const bar = label ? progress(label) : null
    for (const stream of [child.stdout, child.stderr])
      stream?.on('data', (chunk: Buffer) => {
        const text = chunk.toString()
        const last = text.trim().split('\n').pop()
        if (last) bar?.update(last)
        ;(stream === child.stdout && !quiet ? process.stdout : process.stderr).write(text)
      })
    const forward = (signal: NodeJS.Signals) => child.kill(signal)
    process.on('SIGINT', forward)
    process.on('SIGTERM', forward)
    child.on('error', (error) => reject(new CliError(`cannot start: ${error.message}`)))
    child.on('close', (code, signal) => {
      bar?.done()
      process.off('SIGINT', forward)
      process.off('SIGTERM', forward)
      if (code === 0 || signal === 'SIGINT' || signal === 'SIGTERM') resolve()
      else reject(new CliError(`${path.basename(args[0] ?? 'child')} exited with ${code ?? signal}`))
    })
  })
}
