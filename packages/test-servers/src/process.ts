import { type ChildProcess, spawn } from 'node:child_process'

export class ServerStartError extends Error {
  override name = 'ServerStartError'
}

export interface StartedProcess {
  child: ChildProcess
  /** Everything the process printed so far (for error messages). */
  output(): string
  /** Resolves when the process has exited (at once if it already has). */
  exited: Promise<number | null>
}

/**
 * Spawns a server and resolves once it prints `ready` (its own "accepting connections" line),
 * rejects with its output when it exits first or `timeoutMs` passes. The timeout guards a hung
 * start-up of a real process; nothing waits on it when the server is healthy.
 */
export function spawnUntilReady(
  command: string,
  args: string[],
  ready: RegExp,
  what: string,
  timeoutMs: number,
): Promise<StartedProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    child.once('exit', (code) => resolve(code))
    child.once('error', () => resolve(null))
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new ServerStartError(`${what} did not become ready within ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (ready.test(output)) {
        clearTimeout(timer)
        resolve({ child, output: () => output, exited })
      }
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(new ServerStartError(`${what} could not be started (${command}): ${error.message}`))
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new ServerStartError(`${what} exited with code ${code} before it was ready:\n${output}`))
    })
  })
}

/** Runs a command to completion; rejects with its output when it fails. */
export function run(command: string, args: string[], what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.once('error', (error) => reject(new ServerStartError(`${what} (${command}): ${error.message}`)))
    child.once('exit', (code) =>
      code === 0
        ? resolve(output)
        : reject(new ServerStartError(`${what} failed (exit ${code}):\n${output}`)),
    )
  })
}
