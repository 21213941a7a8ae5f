import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Builds dist/engram.js once before the test files run (in parallel, they would race on it). */
export default function setup() {
  execFileSync('pnpm', ['run', 'build'], {
    cwd: path.dirname(path.dirname(fileURLToPath(import.meta.url))),
    stdio: 'ignore',
  })
}
