// In-process probe: the session repository's appends on real SQLite, two databases opened with
// different write-path settings, driven alternately in one process; CPU per append.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Clock, MessageToStore, Session } from '@engram/core'
import { createDatabase, type DatabaseOptions } from './src/db/client.ts'
import { applyMigrations, migrationsDirectory } from './src/db/migrate.ts'
import { createSqliteStorage } from './src/storage.ts'

const quiet = { info() {}, warn() {}, error() {}, log() {} } as unknown as Console
const clock: Clock = { now: () => new Date() }
const concurrency = Number(process.argv[2] ?? 16)
const rounds = Number(process.argv[3] ?? 8)
const perRound = Number(process.argv[4] ?? 3000)
const sides: [string, DatabaseOptions][] = JSON.parse(process.argv[5] ?? '[["per-commit plain",{}],["per-append checked",{"appendInserts":"per-append","newRowJobs":"checked"}]]')
const words = 'berlin lena sister apartment coffee morning project deadline weekend hiking music dinner friends travel book garden'.split(' ')
let n = 0
const message = (): MessageToStore => {
  n++
  const content = Array.from({ length: 14 }, (_, i) => words[(n * 7 + i * 3) % words.length] + (i % 4 === 0 ? String(n % 500) : '')).join(' ')
  return { role: 'user', speaker: 'john', content, tokenCount: 20, timestamp: new Date(), metadata: {}, isCompressed: false, initialRelevance: 1 }
}
async function open(options: DatabaseOptions) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'append-probe-'))
  const file = path.join(dir, 'e.db')
  applyMigrations(file, migrationsDirectory())
  const storage = createSqliteStorage({ db: createDatabase(file, options), clock, log: quiet,
    messageJobs: (scope, ids) => ids.map((id) => ({ kind: 'embed', agentId: scope, key: `message:${id}`, ofNewRow: true })) })
  await storage.repositories.agents.upsert('a', null)
  const sessions: Session[] = []
  for (let c = 0; c < 64; c++) sessions.push(await storage.sessions.createSession('a', `c${c}`, new Date()))
  return { storage, sessions }
}
const opened = await Promise.all(sides.map(([, o]) => open(o)))
const results: number[][] = sides.map(() => [])
let turn = 0
async function drive(side: number, count: number) {
  const { storage, sessions } = opened[side]!
  let next = 0
  const worker = async () => { while (next < count) { next++; await storage.sessions.appendMessages(sessions[turn++ % 64]!, [message()]) } }
  await Promise.all(Array.from({ length: concurrency }, worker))
}
for (let s = 0; s < sides.length; s++) await drive(s, 2000) // warm
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? sides.map((_, i) => i) : sides.map((_, i) => i).reverse()
  for (const s of order) {
    const t0 = process.cpuUsage()
    await drive(s, perRound)
    const u = process.cpuUsage(t0)
    results[s]!.push((u.user + u.system) / perRound)
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
sides.forEach(([name], s) => console.log(`c=${concurrency} ${name.padEnd(22)} µs CPU per append: median ${med(results[s]!).toFixed(1)} [${results[s]!.map((x) => x.toFixed(0)).join(' ')}]`))
console.log('ratio', (med(results[0]!) / med(results[1]!)).toFixed(3))
for (const { storage } of opened) await storage.close()
