// The search path's store reads before and after issue 18, side by side in one process over the
// same SQLite file (load.ts's seed: 100K turns, 100K memories; ENGRAM_SEARCH_READS_ENTRIES for
// fewer): each iteration runs the old read and the new one on the same inputs, alternating which
// goes first. `tsx apps/api/bench/search-reads.ts [--entries N]`. Not a harness suite: the old reads
// are kept here only to be measured against (they are the code the commits replaced).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createDatabase, memoryItemWhere, SqliteRecallSources, sqliteMemoryItems } from '@engram/store-sqlite'
import { median, seededRandom } from '../../../packages/core/bench/report.ts'
import { FULL, seed } from './load.ts'

const ROUNDS = 200
/** Candidates per search (limit 10 × CANDIDATE_FACTOR 3) and turns each side of each (contextTurns). */
const CANDIDATES = 30
const REACH = 2

const index = process.argv.indexOf('--entries')
const entries = index >= 0 ? Number(process.argv[index + 1]) : FULL.entries
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-search-reads-'))
const file = path.join(dir, 'reads.db')
seed(file, { ...FULL, entries, memories: entries, smallEntries: 0 }, seededRandom(23))
const db = createDatabase(file)
const recall = new SqliteRecallSources(db)
const memoryItems = sqliteMemoryItems(db)
const random = seededRandom(61)
const ids = (await db.message.findMany({ where: { agentId: 'load' }, select: { id: true } })).map((m) => m.id)
const memoryIds = (await db.memoryItem.findMany({ where: { agentId: 'mem' }, select: { id: true } })).map(
  (m) => m.id,
)

const timings = new Map<string, number[]>()
async function timed<T>(name: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const out = await run()
  timings.set(name, [...(timings.get(name) ?? []), performance.now() - started])
  return out
}

for (let round = 0; round < ROUNDS; round++) {
  const picked = Array.from({ length: CANDIDATES }, () => String(ids[Math.floor(random() * ids.length)]))
  const pickedMemories = Array.from(
    { length: CANDIDATES },
    () => memoryIds[Math.floor(random() * memoryIds.length)] as number,
  )
  const asOf = new Date()
  const turns = await recall.messages('load', picked, {
    set: 'messages',
    sessionId: null,
    since: null,
    until: null,
  })
  const near = await recall.turnsBeside(picked, REACH)
  // Each conversation's span from its earliest to its latest point (candidates and neighbours).
  const points = [
    ...turns.map((t) => ({ sessionId: t.message.sessionId, id: t.message.id, time: t.message.timestamp })),
    ...near.flatMap((n) => {
      const origin = turns.find((t) => t.message.id === n.origin)
      return origin && n.timestamp
        ? [{ sessionId: origin.message.sessionId, id: n.id, time: n.timestamp }]
        : []
    }),
  ]
  const spans = new Map<string, { from: (typeof points)[number]; to: (typeof points)[number] }>()
  for (const p of points) {
    const s = spans.get(p.sessionId)
    if (!s) spans.set(p.sessionId, { from: p, to: p })
    else {
      if (p.time < s.from.time) s.from = p
      if (p.time > s.to.time) s.to = p
    }
  }
  const sides = {
    // Before: a Prisma query per conversation (turnTimes), the turns through Prisma with their
    // session included, the settings through Prisma.
    before: async () => {
      for (const [sessionId, { from, to }] of spans)
        await timed('episode spans: before (a query per conversation)', () =>
          db.message.findMany({
            where: { sessionId, timestamp: { gte: from.time, lte: to.time } },
            orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
            select: { id: true, timestamp: true },
            take: 5_000,
          }),
        )
      await timed('turns by id: before (Prisma findMany + include)', () =>
        db.message.findMany({
          where: {
            agentId: 'load',
            id: { in: picked.map(Number) },
            content: { not: { startsWith: '[CONTEXT SUMMARY]' } },
          },
          include: { session: { select: { conversationId: true } } },
        }),
      )
      await timed('memory rows by id: before (Prisma findMany)', () =>
        db.memoryItem.findMany({
          where: { ...memoryItemWhere('mem', { validAt: asOf }), id: { in: pickedMemories } },
        }),
      )
      await timed('memory settings: before (Prisma findUnique)', () =>
        db.agent.findUnique({ where: { id: 'load' }, select: { memorySettings: true } }),
      )
    },
    after: async () => {
      await timed('episode spans: after (turnSpans, one statement)', () =>
        recall.turnSpans(
          [...spans].map(([sessionId, { from, to }]) => ({
            sessionId,
            fromTurnId: from.id,
            toTurnId: to.id,
          })),
          5_000,
        ),
      )
      await timed('turns by id: after (raw, cached statement)', () =>
        recall.messages('load', picked, { set: 'messages', sessionId: null, since: null, until: null }),
      )
      await timed('memory rows by id: after (raw, cached statement)', () =>
        recall.memoryItems('mem', pickedMemories.map(String), { asOf }),
      )
      await timed('memory settings: after (cached statement)', () => memoryItems.settings('load'))
    },
  }
  for (const side of round % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const))
    await sides[side]()
}

// Per search: the spans' figure sums the conversations' queries of one search.
const perSearch = (name: string) => {
  const values = timings.get(name) ?? []
  const calls = values.length / ROUNDS
  const total = values.reduce((a, b) => a + b, 0) / ROUNDS
  return { calls, total, median: median(values) }
}
console.info(
  `${entries.toLocaleString('en-US')} turns, ${ROUNDS} searches of ${CANDIDATES} candidates, reach ${REACH}`,
)
for (const what of ['episode spans', 'turns by id', 'memory rows by id', 'memory settings']) {
  const before = [...timings.keys()].find((k) => k.startsWith(`${what}: before`))
  const after = [...timings.keys()].find((k) => k.startsWith(`${what}: after`))
  if (!before || !after) continue
  const b = perSearch(before)
  const a = perSearch(after)
  console.info(
    `${what}: ${b.total.toFixed(3)} ms per search (${b.calls.toFixed(1)} reads) → ${a.total.toFixed(3)} ms (${a.calls.toFixed(1)}): ${(b.total / a.total).toFixed(1)}× less`,
  )
}
await db.$disconnect()
fs.rmSync(dir, { recursive: true, force: true })
