import { execFileSync } from 'node:child_process'
import os from 'node:os'
import { REPO_ROOT } from './suites.ts'

export interface Machine {
  cores: number
  cpu: string
  memoryGiB: number
  node: string
  platform: string
  commit: string | null
  /** Uncommitted changes when the figures were taken. */
  dirty: boolean
}

function git(...args: string[]): string | null {
  try {
    return execFileSync('git', args, {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    return null
  }
}

export function describeMachine(): Machine {
  const cpus = os.cpus()
  return {
    cores: os.availableParallelism?.() ?? cpus.length,
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    commit: git('rev-parse', '--short=12', 'HEAD'),
    dirty: (git('status', '--porcelain', '--untracked-files=no') ?? '') !== '',
  }
}
