import { isSummaryText } from '@engram/core'
import { stemmer } from 'stemmer'
import {
  type CorpusFigures,
  type DocumentCursor,
  type DocumentSet,
  type FullTextCollection,
  type FullTextDocument,
  type FullTextIndex,
  frequencyTerms,
  INDEXED_DOCUMENT_BATCH,
  type IndexedDocumentBatch,
  type Posting,
} from '../ports/full-text.ts'

interface IndexedDocument {
  agentId: string
  sessionId: string | null
  time: number | null
  /** undefined when the writer gave none (the stream then leaves it out: not known). */
  speaker: string | null | undefined
  summary: boolean
  /** Index terms and their counts. */
  terms: Map<string, number>
  /** Its index terms in order. */
  tokens: string[]
  length: number
  /** When it was written: the document stream's cursor. */
  sequence: number
}

/**
 * The FullTextIndex port in memory. Tokenises like SQLite's `porter unicode61 remove_diacritics`
 * for ordinary words (lower case, accents dropped, Porter stems), which is what the conformance
 * specs use; the SQLite adapter stays the reference for exotic text.
 */
export class InMemoryFullTextIndex implements FullTextIndex {
  private readonly collections = new Map<FullTextCollection, Map<string, IndexedDocument>>()
  private sequence = 0

  terms(word: string): string[] {
    return word
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((token) => token.length > 0)
      .map((token) => stemmer(token))
  }

  /** The writer side: the SQLite store indexes rows by trigger, in the row's own transaction. */
  index(collection: FullTextCollection, documents: readonly FullTextDocument[]): void {
    const store = this.collection(collection)
    for (const document of documents) {
      const terms = new Map<string, number>()
      const tokens = this.terms(document.text)
      for (const term of tokens) terms.set(term, (terms.get(term) ?? 0) + 1)
      store.set(document.id, {
        agentId: document.agentId,
        sessionId: document.sessionId ?? null,
        time: document.time ?? null,
        speaker: document.speaker,
        summary: isSummaryText(document.text),
        terms,
        tokens,
        length: tokens.length,
        sequence: ++this.sequence,
      })
    }
  }

  remove(collection: FullTextCollection, agentId: string, ids: readonly string[]): number {
    const store = this.collection(collection)
    let removed = 0
    for (const id of ids) if (store.get(id)?.agentId === agentId && store.delete(id)) removed++
    return removed
  }

  async corpus(collection: FullTextCollection, agentId: string, set: DocumentSet): Promise<CorpusFigures> {
    const documents = this.documents(collection, agentId, set)
    const total = documents.reduce((sum, [, d]) => sum + d.length, 0)
    return {
      documents: documents.length,
      averageLength: documents.length > 0 ? total / documents.length : 0,
    }
  }

  async postings(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    term: string,
  ): Promise<Map<string, Posting>> {
    const out = new Map<string, Posting>()
    for (const [id, d] of this.documents(collection, agentId, set)) {
      const frequency = d.terms.get(term)
      if (frequency) out.set(id, { frequency, length: d.length, sessionId: d.sessionId })
    }
    return out
  }

  async documentFrequencies(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    terms: readonly string[],
  ): Promise<Map<string, number>> {
    const out = new Map<string, number>()
    const documents = this.documents(collection, agentId, set)
    for (const term of frequencyTerms(terms)) {
      const n = documents.filter(([, d]) => d.terms.has(term)).length
      if (n > 0) out.set(term, n)
    }
    return out
  }

  invalidate(): void {
    // Nothing cached: every figure is computed from the documents.
  }

  async *indexedDocuments(
    collection: FullTextCollection,
    agentId: string,
    cursor: DocumentCursor | null,
  ): AsyncIterable<IndexedDocumentBatch> {
    const after = cursor === null ? 0 : Number(cursor)
    const written = this.documents(collection, agentId, 'all')
      .filter(([, d]) => d.sequence > after)
      .sort((a, b) => a[1].sequence - b[1].sequence)
    let reached = after
    for (let i = 0; i < written.length || i === 0; i += INDEXED_DOCUMENT_BATCH) {
      const batch = written.slice(i, i + INDEXED_DOCUMENT_BATCH)
      for (const [, d] of batch) reached = Math.max(reached, d.sequence)
      yield {
        documents: batch.map(([id, d]) => ({
          id,
          sessionId: d.sessionId,
          time: d.time,
          ...(d.speaker === undefined ? {} : { speaker: d.speaker }),
          summary: d.summary,
          terms: [...d.tokens],
        })),
        cursor: String(reached),
      }
    }
  }

  async documentCount(collection: FullTextCollection, agentId: string): Promise<number> {
    return this.documents(collection, agentId, 'all').length
  }

  async documentIds(collection: FullTextCollection, agentId: string): Promise<string[]> {
    return this.documents(collection, agentId, 'all').map(([id]) => id)
  }

  async changeVersion(): Promise<string | null> {
    // One process: the agents' write versions say everything.
    return null
  }

  private collection(collection: FullTextCollection): Map<string, IndexedDocument> {
    let store = this.collections.get(collection)
    if (!store) {
      store = new Map()
      this.collections.set(collection, store)
    }
    return store
  }

  private documents(collection: FullTextCollection, agentId: string, set: DocumentSet) {
    return [...this.collection(collection)].filter(
      ([, d]) => d.agentId === agentId && (set === 'all' || d.summary === (set === 'summaries')),
    )
  }
}
