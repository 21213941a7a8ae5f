import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database3 from 'better-sqlite3'
import { afterEach, expect, it } from 'vitest'
import { startCheckpointer } from './checkpointer.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

it('checkpoints the WAL from its own thread, and stops', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-checkpoint-'))
  dirs.push(dir)
  const file = path.join(dir, 'test.db')
  const db = new Database3(file)
  db.pragma('journal_mode = WAL')
  db.pragma('wal_autocheckpoint = 0') // only the worker checkpoints here
  db.exec('CREATE TABLE t (x TEXT)')
  const insert = db.prepare('INSERT INTO t VALUES (?)')
  for (let i = 0; i < 200; i++) insert.run('x'.repeat(1_000))
  // Until a checkpoint, the rows live in the WAL only: the database file stays a few pages.
  expect(fs.statSync(file).size).toBeLessThan(50_000)
  const checkpointer = startCheckpointer(file, 5)
  for (let attempt = 0; attempt < 200 && fs.statSync(file).size < 200_000; attempt++)
    await new Promise((resolve) => setTimeout(resolve, 10))
  expect(fs.statSync(file).size).toBeGreaterThan(200_000)
  await checkpointer.stop()
  db.close()
})
