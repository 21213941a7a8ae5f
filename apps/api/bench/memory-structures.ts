// Bytes per memory of each in-process structure a MEMORIES search loads (issue 18, memopt18): the
// exact vector index (the raw vectors, the baseline), the slot postings (the ANN of the offline
// embedder's vectors, a second copy of the vectors plus its lists and stamps), the lexical index
// and the optimizer's kept entries are measured apart, each built alone over the same memories as
// the load bench seeds (`memory i: ...` sentences, the server's own embedder).
//
//   node --expose-gc --import tsx apps/api/bench/memory-structures.ts [count=100000]
//
// Heap and external bytes are read after a full GC before and after each build (RSS is printed
// too, but the allocator keeps freed pages, so it only grows through a run).
import { createHashingEmbedder, ExactVectorIndex, LexicalIndex, SlotPostingsIndex } from '@engram/core'
import { contentHash, OptimizerEntries, type OptimizerRepository, type StampedEntry } from '@engram/engine'
import { loadWordNetLexicon } from '@engram/providers'
import { seededRandom } from '../../../packages/core/bench/report.ts'
import { textMaker } from './load.ts'

const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc')

const count = Number(process.argv[2] ?? 100_000)
const text = textMaker(seededRandom(5))
const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })

const ids: string[] = []
const contents: string[] = []
const stamps: string[] = []
const vectors: Float32Array[] = []
for (let i = 0; i < count; i++) {
  const content = `memory ${i}: ${text.sentence(8, 24)}`
  ids.push(String(i + 1))
  contents.push(content)
  stamps.push(contentHash(content))
  vectors.push(embedder.embedOne(content))
}
// FTS5's unicode61 tokenizer as far as these texts need: lower case, split on what is not a letter or digit.
const terms = contents.map((content) =>
  content
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean),
)

interface Usage {
  heap: number
  external: number
  rss: number
}
function usage(): Usage {
  gc?.()
  gc?.()
  const u = process.memoryUsage()
  return { heap: u.heapUsed, external: u.external, rss: u.rss }
}

const rows: { structure: string; heap: number; external: number; rss: number; note: string }[] = []
function measure<T>(structure: string, build: () => T, note: (built: T) => string): T {
  const before = usage()
  const built = build()
  const after = usage()
  rows.push({
    structure,
    heap: (after.heap - before.heap) / count,
    external: (after.external - before.external) / count,
    rss: (after.rss - before.rss) / count,
    note: note(built),
  })
  return built
}

let kept: unknown[] = []
kept.push(
  measure(
    'exact vector index (the raw vectors)',
    () => {
      const index = new ExactVectorIndex()
      for (let i = 0; i < count; i++) index.upsert(ids[i] as string, vectors[i] as Float32Array)
      return index
    },
    () => `raw ${384 * 4} B a vector`,
  ),
)
kept.push(
  measure(
    'slot postings (vectors, lists, stamps)',
    () => {
      const index = new SlotPostingsIndex()
      for (let i = 0; i < count; i++)
        index.upsert(ids[i] as string, vectors[i] as Float32Array, stamps[i] as string)
      // What a build does once filled (AdaptiveVectorIndex).
      index.trim?.()
      return index
    },
    (index) => `${(index.postingCount / count).toFixed(1)} list entries a vector`,
  ),
)
kept.push(
  measure(
    'lexical index (memories)',
    () => {
      const index = new LexicalIndex()
      for (let i = 0; i < count; i++)
        index.add({ id: ids[i] as string, sessionId: null, summary: false, terms: terms[i] as string[] })
      index.trim()
      return index
    },
    (index) =>
      `${(index.postingsHeld / count).toFixed(1)} postings a memory; estimate ${(index.bytes() / count).toFixed(0)} B a memory`,
  ),
)

// The optimizer's kept entries (ENGRAM_OPTIMIZER_CACHED_ENTRIES): not loaded by a search (so not
// in the load bench's RSS row), kept by the optimizer between runs over an agent's entries. Here
// over conversation turns of the same text, as rows come from the store.
let turns: StampedEntry[] = []
const rowsStore = {
  stampedEntries: async () => turns,
  entryStamps: async () => [],
  entriesByIds: async () => [],
} as unknown as OptimizerRepository
{
  const before = usage()
  turns = Array.from({ length: count }, (_, i) => {
    const content = text.turn()
    return {
      entry: {
        id: String(i + 1),
        type: 'long_term',
        role: 'user',
        content,
        tokenCount: Math.ceil(content.length / 4),
        relevance: 1,
        isCompressed: false,
        timestamp: new Date(1_700_000_000_000 + i * 1_000),
        sessionId: `c${Math.floor(i / 100)}`,
      },
      version: new Date(1_700_000_000_000 + i * 1_000).toISOString(),
      contentLength: content.length,
    }
  })
  const entries = new OptimizerEntries(rowsStore, count)
  await entries.load('agent', null)
  // Everything the rows were is the kept entries' now (the text, the entry, its stamp).
  turns = []
  const after = usage()
  rows.push({
    structure: 'optimizer kept entries (with their text)',
    heap: (after.heap - before.heap) / count,
    external: (after.external - before.external) / count,
    rss: (after.rss - before.rss) / count,
    note: `${entries.size} kept`,
  })
  kept.push(entries)
}

const pad = (s: string, n: number) => s.padEnd(n)
console.log(`${count.toLocaleString('en-US')} memories, bytes per memory (heap / external / rss growth)`)
for (const row of rows)
  console.log(
    `${pad(row.structure, 42)} heap ${row.heap.toFixed(0).padStart(6)}  external ${row.external.toFixed(0).padStart(6)}  total ${(row.heap + row.external).toFixed(0).padStart(6)}  rss ${row.rss.toFixed(0).padStart(6)}  ${row.note}`,
  )
kept = []
