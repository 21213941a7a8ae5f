import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AgentMemoryFile } from '@engram/core'
import { AgentMemoryTransfer } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

// The `.agent-memory/` fixture in the documented system's formats (see the engine's
// agent-memory-transfer.test.ts): the round trip must hold on every adapter, since the export reads
// back what the adapter stored (extra, dates, steps, order).
const FIXTURE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../engine/test/fixtures/agent-memory',
)
const SUITE_SUMMARY = 'runs/run_1764000000000_ab12.json'

function readFixture(dir = FIXTURE, prefix = ''): AgentMemoryFile[] {
  const files: AgentMemoryFile[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) files.push(...readFixture(path.join(dir, entry.name), relative))
    else files.push({ path: relative, content: fs.readFileSync(path.join(dir, entry.name), 'utf8') })
  }
  return files
}
const parsedByPath = (files: readonly AgentMemoryFile[]) =>
  Object.fromEntries(files.map((f) => [f.path, JSON.parse(f.content)]))

export function describeAgentMemoryTransfer(initializer: StorageInitializer): void {
  describe(`${initializer.name}: the .agent-memory migration`, () => {
    const fixture = useFixture(initializer)
    const files = readFixture()

    it('imports a directory and exports the same files, each agent apart', async () => {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const transfer = new AgentMemoryTransfer({ repository: storage.trajectories, clock })
      const report = await transfer.importFiles('agent-a', files)
      expect(report).toMatchObject({
        runs: 5,
        trajectories: 4,
        runSessions: 3,
        facts: 6,
        selectors: 5,
        hints: 1,
      })
      expect(report.skipped.map((s) => s.path)).toEqual([SUITE_SUMMARY])
      const expected = parsedByPath(files.filter((f) => f.path !== SUITE_SUMMARY))
      expect(parsedByPath((await transfer.exportFiles('agent-a')).files)).toStrictEqual(expected)
      // The same directory for B: its own records; A's export unchanged, B's equal.
      expect((await transfer.exportFiles('agent-b')).files).toEqual([])
      await transfer.importFiles('agent-b', files, 'track-b')
      expect(parsedByPath((await transfer.exportFiles('agent-b', 'track-b')).files)).toStrictEqual(expected)
      expect(parsedByPath((await transfer.exportFiles('agent-a')).files)).toStrictEqual(expected)
      expect((await transfer.exportFiles('agent-a', 'track-b')).files).toEqual([])
    })
  })
}
