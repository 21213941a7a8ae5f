import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { readAgentMemoryDirectory, writeAgentMemoryDirectory } from '../src/node.ts'

const FIXTURE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../engine/test/fixtures/agent-memory',
)

const made: string[] = []
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-agent-memory-'))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

describe('a .agent-memory directory on disk', () => {
  it('reads every JSON file with its relative posix path, skipping other files', async () => {
    const files = await readAgentMemoryDirectory(FIXTURE)
    expect(files.map((f) => f.path)).toContain(
      'domains/localhost_5173/trajectories/traj_1763800000000_a1b2c3.json',
    )
    expect(files.map((f) => f.path)).toContain('hints.json')
    expect(files).toHaveLength(15)
    const copy = tempDir()
    fs.cpSync(FIXTURE, copy, { recursive: true })
    fs.writeFileSync(path.join(copy, 'README.md'), '# notes')
    fs.writeFileSync(path.join(copy, 'domains', '.DS_Store'), 'x')
    expect(await readAgentMemoryDirectory(copy)).toEqual(files)
  })

  it('writes files back, creating folders, so reading the directory again gives the same files', async () => {
    const files = await readAgentMemoryDirectory(FIXTURE)
    const out = path.join(tempDir(), 'exported', '.agent-memory')
    await writeAgentMemoryDirectory(out, files)
    expect(await readAgentMemoryDirectory(out)).toEqual(files)
    // Writing again replaces the files of the same name.
    await writeAgentMemoryDirectory(out, [{ path: 'hints.json', content: '{"hints":"new"}' }])
    expect(fs.readFileSync(path.join(out, 'hints.json'), 'utf8')).toBe('{"hints":"new"}')
  })

  it('refuses paths that escape the directory, before writing anything', async () => {
    const parent = tempDir()
    const out = path.join(parent, 'memory')
    for (const bad of [
      '../escaped.json',
      '/tmp/escaped.json',
      'domains/../../escaped.json',
      'a\\..\\..\\x.json',
      'C:\\x.json',
      '',
    ]) {
      await expect(
        writeAgentMemoryDirectory(out, [
          { path: 'hints.json', content: '{}' },
          { path: bad, content: '{}' },
        ]),
        bad,
      ).rejects.toMatchObject({ code: 'VALIDATION', issues: [{ field: 'files.1.path' }] })
    }
    expect(fs.existsSync(path.join(parent, 'escaped.json'))).toBe(false)
    expect(fs.existsSync(out)).toBe(false)
  })

  it('refuses to write through a folder that links out of the directory', async () => {
    const outside = tempDir()
    const out = tempDir()
    fs.symlinkSync(outside, path.join(out, 'domains'))
    await expect(
      writeAgentMemoryDirectory(out, [{ path: 'domains/x/knowledge.json', content: '{}' }]),
    ).rejects.toMatchObject({ code: 'VALIDATION', issues: [{ field: 'files.0.path' }] })
    expect(fs.readdirSync(outside).filter((n) => n.endsWith('.json'))).toEqual([])
    // And reading does not follow the link either.
    fs.writeFileSync(path.join(outside, 'secret.json'), '{}')
    expect(await readAgentMemoryDirectory(out)).toEqual([])
  })
})
