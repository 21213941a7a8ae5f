import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const HERE = path.dirname(fileURLToPath(import.meta.url))

/** The harness as a user runs it, stopped by its own checks before any suite starts. */
function run(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(HERE, 'run.ts'), ...args], {
    cwd: HERE,
    encoding: 'utf8',
    timeout: 60_000,
  })
  return { status: result.status, stderr: result.stderr }
}

// Each case starts node with tsx (about 1.5 s on an idle machine, several under a parallel suite):
// the test's own time limit allows for that, the assertions are on what the harness prints.
describe('pnpm bench options', { timeout: 120_000 }, () => {
  it('refuses a repetition count that is not a whole number from 1 to 100, naming the limit', () => {
    for (const reps of ['abc', '0', '2.5', '101']) {
      const { status, stderr } = run('--reps', reps, '--only', 'core')
      expect(status).toBe(2)
      expect(stderr).toContain(`--reps must be a whole number from 1 to 100 (got ${reps})`)
    }
  })

  it('refuses an unknown suite and lists the known ones', () => {
    const { status, stderr } = run('--only', 'nope')
    expect(status).toBe(2)
    expect(stderr).toContain(
      'unknown suite(s) nope; known: core, vector, redundancy, lexical, append-statements, api, context-window, backends, backends-scale, replicas, trajectories, load, quality, quality-scale, formation, peers',
    )
  })

  it('refuses a model endpoint without its model name, and the other way round', () => {
    for (const args of [
      ['--llm-url', 'http://127.0.0.1:11434/v1'],
      ['--llm-model', 'llama3'],
    ]) {
      const { status, stderr } = run(...args, '--only', 'formation')
      expect(status).toBe(2)
      expect(stderr).toContain('--llm-url and --llm-model go together')
    }
  })
})
