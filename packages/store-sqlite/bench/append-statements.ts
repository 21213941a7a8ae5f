// The statements of an append (issue 18, branch wfts18): the session repository on real SQLite,
// one process, two databases opened with the write path of before (each append's own statements,
// embed jobs through INSERT … WHERE NOT EXISTS) and the default (one INSERT for a group commit's
// messages, plain VALUES for new rows' jobs), driven alternately round by round so the machine's
// noise falls on both alike. Rows: CPU per append at 1, 16 and 64 appends in flight, and the
// full-text segment leaves each commit writes. Run on its own: `tsx packages/store-sqlite/bench/append-statements.ts [--quick]`.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Clock, MessageToStore, Session } from '@engram/core'
import { type BenchRow, median, writeReport } from '../../core/bench/report.ts'
import { createDatabase, type DatabaseOptions, directSqlite } from '../src/db/client.ts'
import { applyMigrations, migrationsDirectory } from '../src/db/migrate.ts'
import { createSqliteStorage, type SqliteStorage } from '../src/storage.ts'

const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const clock: Clock = { now: () => new Date() }
const CONVERSATIONS = 64
const WORDS =
  'berlin lena sister apartment coffee morning project deadline weekend hiking music dinner friends travel book garden'.split(
    ' ',
  )

const SIDES: { label: string; options: DatabaseOptions }[] = [
  { label: 'default (per-commit, plain)', options: {} },
  {
    label: 'before (per-append, checked)',
    options: { appendInserts: 'per-append', newRowJobs: 'checked' },
  },
]

interface Opened {
  storage: SqliteStorage
  sessions: Session[]
  dir: string
}

async function open(options: DatabaseOptions): Promise<Opened> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-append-statements-'))
  const file = path.join(dir, 'engram.db')
  applyMigrations(file, migrationsDirectory())
  const storage = createSqliteStorage({
    db: createDatabase(file, options),
    clock,
    log: quiet,
    messageJobs: (scope, ids) =>
      ids.map((id) => ({ kind: 'embed', agentId: scope, key: `message:${id}`, ofNewRow: true })),
  })
  await storage.repositories.agents.upsert('a', null)
  const sessions: Session[] = []
  for (let c = 0; c < CONVERSATIONS; c++)
    sessions.push(await storage.sessions.createSession('a', `c${c}`, new Date()))
  return { storage, sessions, dir }
}

export async function appendStatementBenchmarks(options: { quick: boolean }): Promise<BenchRow[]> {
  const rounds = options.quick ? 4 : 8
  const perRound = options.quick ? 600 : 2_000
  let written = 0
  const message = (): MessageToStore => {
    written++
    const content = Array.from(
      { length: 14 },
      (_, i) => `${WORDS[(written * 7 + i * 3) % WORDS.length]}${i % 4 === 0 ? written % 500 : ''}`,
    ).join(' ')
    return {
      role: 'user',
      speaker: 'john',
      content,
      tokenCount: 20,
      timestamp: new Date(),
      metadata: {},
      isCompressed: false,
      initialRelevance: 1,
    }
  }
  const opened = await Promise.all(SIDES.map((side) => open(side.options)))
  const rows: BenchRow[] = []
  try {
    const drive = async (side: Opened, concurrency: number, count: number) => {
      let next = 0
      const writer = async () => {
        while (next < count) {
          const session = side.sessions[next++ % CONVERSATIONS] as Session
          await side.storage.sessions.appendMessages(session, [message()])
        }
      }
      await Promise.all(Array.from({ length: concurrency }, writer))
    }
    for (const side of opened) await drive(side, 16, perRound) // JIT, statement caches
    for (const concurrency of [1, 16, 64]) {
      const cpu: number[][] = SIDES.map(() => [])
      const leaves: number[][] = SIDES.map(() => [])
      const count = concurrency === 1 ? Math.round(perRound / 3) : perRound
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? [0, 1] : [1, 0]
        for (const s of order) {
          const side = opened[s] as Opened
          const direct = directSqlite(side.storage.db)
          const commitsBefore = direct?.committed.commits ?? 0
          const leavesBefore = await leavesWritten(side)
          const started = process.cpuUsage()
          await drive(side, concurrency, count)
          const used = process.cpuUsage(started)
          ;(cpu[s] as number[]).push((used.user + used.system) / count)
          const commits = (direct?.committed.commits ?? 0) - commitsBefore
          if (commits > 0)
            (leaves[s] as number[]).push(((await leavesWritten(side)) - leavesBefore) / commits)
        }
      }
      SIDES.forEach((side, s) => {
        const name = (what: string) => `append at ${concurrency} in flight: ${what}, ${side.label}, same run`
        rows.push({
          name: name('CPU per append'),
          value: median(cpu[s] as number[]),
          samples: cpu[s] as number[],
          unit: 'µs',
          better: 'lower',
          ...(s > 0
            ? {}
            : {
                baseline: `append at ${concurrency} in flight: CPU per append, ${SIDES[1]?.label}, same run`,
              }),
        })
        rows.push({
          name: name('full-text segment leaves written per commit'),
          value: median(leaves[s] as number[]),
          samples: leaves[s] as number[],
          unit: 'leaves',
          better: 'lower',
        })
      })
    }
  } finally {
    for (const side of opened) {
      await side.storage.close()
      fs.rmSync(side.dir, { recursive: true, force: true })
    }
  }
  return rows
}

/**
 * Leaves FTS5 has written to level 0 (new segments) so far: the write counter of its structure
 * record (row 10 of MessageSearch_data; see fts5StructureDecode in SQLite's source: a 4-byte
 * cookie, an optional 4-byte V2 marker, varints nLevel and nSegment, then the counter). Unlike the
 * table's row count, merges do not take from it.
 */
async function leavesWritten(side: Opened): Promise<number> {
  const rows = (await side.storage.db.$queryRawUnsafe(
    `SELECT "block" FROM "MessageSearch_data" WHERE "id" = 10`,
  )) as { block: Uint8Array }[]
  const block = rows[0]?.block
  if (!block) return 0
  let at = 4
  if (block[4] === 0xff && block[5] === 0 && block[6] === 0 && block[7] === 1) at += 4
  const varint = (): number => {
    let value = 0
    for (let i = 0; i < 9; i++) {
      const byte = block[at++] as number
      if (i === 8) return value * 256 + byte
      value = value * 128 + (byte & 0x7f)
      if ((byte & 0x80) === 0) return value
    }
    return value
  }
  varint() // levels
  varint() // segments
  return varint()
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await appendStatementBenchmarks({ quick: process.argv.includes('--quick') })
  writeReport('append-statements', 'The statements of an append (store-sqlite), same run', rows)
}
