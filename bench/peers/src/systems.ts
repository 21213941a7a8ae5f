// The systems compared, each behind the same two calls: add turns (one call per turn, or one per
// session for batched variants) and search one question for its top-k turn ids. Opening a store
// (app, agents, settings, instances) and closing it are setup, never timed.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Embedder } from '@engram/core'
import { type EmbeddedEngram, Engram } from '@engram/sdk/embedded'
import { Embeddings } from '@langchain/core/embeddings'
import { createAgentKey, createTestApp, type TestApp } from '../../../apps/api/test/helpers.ts'
import type { Question, Turn } from './dataset.ts'

export interface Store {
  add(turns: readonly Turn[]): Promise<void>
  /**
   * Makes everything added searchable, inside the timed add window: the peers embed inside add,
   * Engram embeds messages (and, with a remote embedder, anything that failed) after the write.
   */
  ready?(): Promise<void>
  /** The dialog ids of the top `limit` hits, best first. */
  search(question: Question, limit: number): Promise<string[]>
  close(): Promise<void>
}

export type SystemFamily = 'Engram' | 'mem0' | 'LangGraph' | 'Orama'

export interface System {
  /** Unique label in the report. */
  name: string
  family: SystemFamily
  /** How vectors reach the system: a call into Engram's embedder, or its HTTP endpoint. */
  embedding: 'in-process' | 'HTTP'
  /** `single`: one add call per memory; `batch`: one call per LoCoMo session (~20 turns). */
  addMode: 'single' | 'batch'
  /** What was called and configured, for the report. */
  setup: string
  open(conversations: readonly string[]): Promise<Store>
}

/**
 * A LangChain Embeddings over Engram's embedder: LangGraph's index and mem0's `langchain`
 * provider call it in-process. LangChain wants number[], so each vector is copied once out of
 * its Float32Array (a cost Engram, which keeps Float32Array, does not pay).
 */
export class EngramEmbeddings extends Embeddings {
  readonly embedder: Embedder
  constructor(embedder: Embedder) {
    super({})
    this.embedder = embedder
  }
  async embedQuery(text: string): Promise<number[]> {
    return Array.from((await this.embedder.embed([text]))[0] as Float32Array)
  }
  async embedDocuments(texts: string[]): Promise<number[][]> {
    return (await this.embedder.embed(texts)).map((v) => Array.from(v))
  }
}

// --- Engram -------------------------------------------------------------------------------------

const CREATE_MEMORY = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) { __typename ... on MemoryWrite { outcome } } }`
const ADD_MESSAGE = `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename } }`
const ADD_MESSAGES = `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename } }`
const SEARCH_MEMORIES = `query($q: String!, $l: Int!) { search(input: { query: $q, scopes: [MEMORIES], limit: $l }) { __typename ... on SearchResult { hits { memory { metadata } } } } }`
const SEARCH_MESSAGES = `query($q: String!, $l: Int!) { search(input: { query: $q, scopes: [MESSAGES], limit: $l }) { __typename ... on SearchResult { hits { message { metadata } } } } }`
const SETTINGS = `mutation { updateMemorySettings(settings: { verificationEnabled: false, maxEntriesPerAgent: 0 }) { __typename } }`

export type EngramScope = 'MEMORIES' | 'MESSAGES'

/**
 * Engram through its real GraphQL API (yoga.fetch on a migrated SQLite file, as the API tests
 * and apps/api/bench do): one agent per conversation, so scoping matches the peers'.
 * MEMORIES: createMemory (category FACT, verification off, no entry cap), search scopes [MEMORIES].
 * MESSAGES: addMessage / addMessages with the session's time, search scopes [MESSAGES].
 * addMessage stores no vector: Engram embeds messages on the next search (in-process embedder)
 * or in the background (remote one). The add window therefore ends with EmbeddingService.fill for
 * every agent, so Engram's adds, like the peers', end with every memory searchable by vector.
 */
export function engramSystem(options: {
  scope: EngramScope
  addMode: 'single' | 'batch'
  embedding: 'in-process' | 'HTTP'
  /** Made per store: the HTTP embedder holds its own circuit breaker. */
  embedder: () => Promise<Embedder>
}): System {
  const { scope, addMode } = options
  if (scope === 'MEMORIES' && addMode === 'batch') throw new Error('Engram has no batched createMemory')
  const call =
    scope === 'MEMORIES'
      ? 'createMemory'
      : addMode === 'single'
        ? 'addMessage'
        : 'addMessages (one per session)'
  return {
    name: `Engram ${scope.toLowerCase()}, ${call}${options.embedding === 'HTTP' ? ', HTTP embedder' : ''}`,
    family: 'Engram',
    embedding: options.embedding,
    addMode,
    setup: `GraphQL through yoga.fetch, SQLite file; ${call}; search(scopes: [${scope}], limit 10, default HYBRID)${
      scope === 'MEMORIES' ? '; updateMemorySettings(verificationEnabled: false, maxEntriesPerAgent: 0)' : ''
    }`,
    async open(conversations) {
      const t: TestApp = await createTestApp({ embedder: await options.embedder() })
      const keys = new Map<string, string>()
      for (const conversation of conversations) {
        const key = await createAgentKey(t, conversation)
        keys.set(conversation, key)
        if (scope === 'MEMORIES')
          expectType(await t.gql(SETTINGS, {}, key), 'updateMemorySettings', 'MemorySettings')
      }
      const keyOf = (conversation: string) => keys.get(conversation) as string
      return {
        async add(turns) {
          const first = turns[0] as Turn
          if (scope === 'MEMORIES') {
            for (const turn of turns) {
              const result = await t.gql(
                CREATE_MEMORY,
                { input: { content: turn.content, category: 'FACT', metadata: { dia_id: turn.diaId } } },
                keyOf(turn.conversation),
              )
              expectType(result, 'createMemory', 'MemoryWrite')
            }
          } else if (addMode === 'single') {
            for (const turn of turns) {
              const input = { conversationId: turn.conversation, ...messageOf(turn) }
              expectType(
                await t.gql(ADD_MESSAGE, { input }, keyOf(turn.conversation)),
                'addMessage',
                'Message',
              )
            }
          } else {
            const input = { conversationId: first.conversation, messages: turns.map(messageOf) }
            const result = await t.gql(ADD_MESSAGES, { input }, keyOf(first.conversation))
            expectType(result, 'addMessages', 'AddMessagesPayload')
          }
        },
        async ready() {
          // What the first search would otherwise do (a local embedder) or a background fill
          // would (a remote one): every message of every agent gets its vector, in batches.
          for (const agentId of conversations)
            await t.app.services.embeddings.fill(agentId, scope === 'MEMORIES' ? 'memory' : 'message')
          await t.app.services.embeddings.settled()
        },
        async search(question, limit) {
          const result = await t.gql(
            scope === 'MEMORIES' ? SEARCH_MEMORIES : SEARCH_MESSAGES,
            { q: question.question, l: limit },
            keyOf(question.conversation),
          )
          expectType(result, 'search', 'SearchResult')
          const hits = result.data.search.hits as {
            memory?: { metadata: { dia_id?: string } }
            message?: { metadata: { dia_id?: string } }
          }[]
          return hits.map((h) => String((h.memory ?? h.message)?.metadata.dia_id))
        },
        close: () => t.close(),
      }
    },
  }
}

/**
 * The floor under every Engram call: an authenticated `{ __typename }` through yoga.fetch
 * (request parsing, key lookup, armor plugins, execution) with no resolver work. Per-call times.
 */
export async function engramGraphqlFloor(embedder: Embedder, calls: number): Promise<number[]> {
  const t = await createTestApp({ embedder })
  try {
    const key = await createAgentKey(t, 'floor')
    for (let i = 0; i < 50; i++) await t.gql('{ __typename }', {}, key)
    const latencies: number[] = []
    for (let i = 0; i < calls; i++) {
      const start = performance.now()
      await t.gql('{ __typename }', {}, key)
      latencies.push(performance.now() - start)
    }
    return latencies
  } finally {
    await t.close()
  }
}

const messageOf = (turn: Turn) => ({
  role: 'USER',
  content: turn.content,
  timestamp: turn.timestamp.toISOString(),
  metadata: { dia_id: turn.diaId },
})

function expectType(
  result: { data: Record<string, { __typename?: string } | null> | null; errors?: unknown },
  field: string,
  typename: string,
) {
  if (result.data?.[field]?.__typename !== typename)
    throw new Error(`${field} failed: ${JSON.stringify(result).slice(0, 500)}`)
}

/**
 * Engram embedded (`Engram.open` of `@engram/sdk/embedded`): the engine in this process on a
 * SQLite file (WAL, each add committed before its promise resolves), no server, no GraphQL over
 * HTTP. One agent per conversation (`forAgent`), as above. MESSAGES only: turning verification off
 * (what the MEMORIES variant does through updateMemorySettings) is not an operation of the
 * catalog. The add window ends with `settled()`: every message of every agent has its vector.
 */
export function engramEmbeddedSystem(options: { addMode: 'single' | 'batch'; embedder: Embedder }): System {
  const { addMode } = options
  const call = addMode === 'single' ? 'addMessage' : 'addMessages (one per session)'
  return {
    name: `Engram embedded messages, ${call}`,
    family: 'Engram',
    embedding: 'in-process',
    addMode,
    setup: `Engram.open({ path: <temp>/peers.db, embedder }) (@engram/sdk/embedded), forAgent per conversation; ${call}; search(scopes: [MESSAGES], limit 10, default HYBRID); SQLite file, WAL`,
    async open(conversations) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-peers-'))
      const engram = await Engram.open({
        path: path.join(dir, 'peers.db'),
        operator: true,
        embedder: options.embedder,
        optimizerIntervalMs: 0,
      })
      const clients = new Map(conversations.map((c) => [c, engram.forAgent(c)]))
      const clientOf = (conversation: string) => clients.get(conversation) as EmbeddedEngram
      return {
        async add(turns) {
          const first = turns[0] as Turn
          if (addMode === 'single') {
            for (const turn of turns) {
              const added = await clientOf(turn.conversation).addMessage({
                conversationId: turn.conversation,
                ...(messageOf(turn) as { role: 'USER'; content: string }),
              })
              if (!added.ok) throw new Error(`addMessage failed: ${JSON.stringify(added.error)}`)
            }
          } else {
            const added = await clientOf(first.conversation).addMessages({
              conversationId: first.conversation,
              messages: turns.map(messageOf) as { role: 'USER'; content: string }[],
            })
            if (!added.ok) throw new Error(`addMessages failed: ${JSON.stringify(added.error)}`)
          }
        },
        ready: () => engram.settled(),
        async search(question, limit) {
          const found = await clientOf(question.conversation).search({
            query: question.question,
            scopes: ['MESSAGES'],
            limit,
          })
          if (!found.ok) throw new Error(`search failed: ${JSON.stringify(found.error)}`)
          return found.data.hits.map((h) => String(h.message?.metadata.dia_id))
        },
        async close() {
          await Promise.all([...clients.values()].map((c) => c.close()))
          await engram.close()
          fs.rmSync(dir, { recursive: true, force: true })
        },
      }
    },
  }
}

// --- mem0 ---------------------------------------------------------------------------------------

/**
 * mem0's open-source TypeScript `Memory` (mem0ai/oss) with infer: false: each add embeds and
 * stores the text as given, no LLM call. Its `memory` vector store is better-sqlite3 (here
 * `:memory:`); history is disabled (its default is a SQLite file). The LLM must still be
 * configured (the constructor builds a client): it points at the local server, which answers
 * 404 to anything but embeddings and counts the requests, so a call would show.
 */
export function mem0System(options: {
  embedding: 'in-process' | 'HTTP'
  embedder: Embedder
  /** The local OpenAI-compatible endpoint (for HTTP embeddings and the never-called LLM). */
  baseUrl: string
  /** mem0 drops hits scoring below it; its default is 0.1. */
  threshold: number
}): System {
  const embedderConfig =
    options.embedding === 'HTTP'
      ? `embedder openai (baseURL ${options.baseUrl}, apiKey "local", embeddingDims ${options.embedder.dimensions})`
      : 'embedder langchain (model: an object with embedQuery/embedDocuments over Engram’s embedder)'
  return {
    name: `mem0 Memory.add(infer: false)${options.embedding === 'HTTP' ? ', HTTP embedder' : ''}`,
    family: 'mem0',
    embedding: options.embedding,
    addMode: 'single',
    setup: `${embedderConfig}; vectorStore memory (dbPath ":memory:", dimension ${options.embedder.dimensions}); disableHistory: true; llm openai at the local server (never called); MEM0_TELEMETRY=false; search(filters: { user_id }, topK 10, threshold ${options.threshold})`,
    async open() {
      // mem0 reads MEM0_TELEMETRY once, when the module loads; otherwise it posts usage events.
      process.env.MEM0_TELEMETRY = 'false'
      const { Memory } = await import('mem0ai/oss')
      const memory = new Memory({
        embedder:
          options.embedding === 'HTTP'
            ? {
                provider: 'openai',
                config: {
                  apiKey: 'local',
                  baseURL: options.baseUrl,
                  model: 'engram-hashing-wordnet',
                  embeddingDims: options.embedder.dimensions,
                },
              }
            : {
                provider: 'langchain',
                config: {
                  model: new EngramEmbeddings(options.embedder),
                  embeddingDims: options.embedder.dimensions,
                },
              },
        vectorStore: {
          provider: 'memory',
          config: { collectionName: 'locomo', dimension: options.embedder.dimensions, dbPath: ':memory:' },
        },
        llm: { provider: 'openai', config: { apiKey: 'local', baseURL: options.baseUrl, model: 'none' } },
        disableHistory: true,
      })
      return {
        async add(turns) {
          for (const turn of turns) {
            await memory.add(turn.content, {
              userId: turn.conversation,
              infer: false,
              metadata: { dia_id: turn.diaId },
            })
          }
        },
        async search(question, limit) {
          const result = await memory.search(question.question, {
            filters: { user_id: question.conversation },
            topK: limit,
            threshold: options.threshold,
          })
          return result.results.map((r) => String(r.metadata?.dia_id))
        },
        async close() {},
      }
    },
  }
}

// --- LangGraph ----------------------------------------------------------------------------------

/**
 * LangGraph's InMemoryStore with a semantic index over the `text` field: put() embeds through
 * the index's `embeddings`, search() ranks by cosine (vector only, no lexical side).
 * Namespace ["locomo", conversation]. Batched: one store.batch() of puts per session, which
 * embeds the whole session in one embedDocuments call.
 */
export function langGraphSystem(options: { embedder: Embedder; addMode: 'single' | 'batch' }): System {
  return {
    name: `LangGraph InMemoryStore ${options.addMode === 'single' ? 'put' : 'batch (one per session)'}`,
    family: 'LangGraph',
    embedding: 'in-process',
    addMode: options.addMode,
    setup: `new InMemoryStore({ index: { dims: ${options.embedder.dimensions}, embeddings: {embedQuery, embedDocuments} over Engram’s embedder, fields: ["text"] } }); ${
      options.addMode === 'single' ? 'put' : 'batch([PutOperation…])'
    }; search(["locomo", conversation], { query, limit: 10 })`,
    async open() {
      const { InMemoryStore } = await import('@langchain/langgraph')
      const store = new InMemoryStore({
        index: {
          dims: options.embedder.dimensions,
          embeddings: new EngramEmbeddings(options.embedder),
          fields: ['text'],
        },
      })
      return {
        async add(turns) {
          if (options.addMode === 'single') {
            for (const turn of turns)
              await store.put(['locomo', turn.conversation], turn.diaId, {
                text: turn.content,
                dia_id: turn.diaId,
              })
          } else {
            await store.batch(
              turns.map((turn) => ({
                namespace: ['locomo', turn.conversation],
                key: turn.diaId,
                value: { text: turn.content, dia_id: turn.diaId },
              })),
            )
          }
        },
        async search(question, limit) {
          const items = await store.search(['locomo', question.conversation], {
            query: question.question,
            limit,
          })
          return items.map((item) => String(item.value.dia_id))
        },
        async close() {},
      }
    },
  }
}

// --- Orama --------------------------------------------------------------------------------------

/**
 * Orama with a string field (BM25), a vector field filled with Engram's vectors and an enum field
 * for the conversation; search mode "hybrid" (its default weights 0.5 text / 0.5 vector), where
 * conversation eq. Batched: insertMultiple per session.
 */
export function oramaSystem(options: {
  embedder: Embedder
  addMode: 'single' | 'batch'
  similarity: number
}): System {
  const dims = options.embedder.dimensions
  return {
    name: `Orama ${options.addMode === 'single' ? 'insert' : 'insertMultiple (one per session)'}`,
    family: 'Orama',
    embedding: 'in-process',
    addMode: options.addMode,
    setup: `create({ schema: { text: string, diaId: string, conversation: enum, embedding: vector[${dims}] } }); vectors computed by Engram’s embedder before ${
      options.addMode === 'single' ? 'insert' : 'insertMultiple'
    }; search({ mode: hybrid, term, vector, similarity ${options.similarity}, where: { conversation: { eq } }, limit 10 })`,
    async open() {
      const { create, insert, insertMultiple, search } = await import('@orama/orama')
      const db = create({
        schema: {
          text: 'string',
          diaId: 'string',
          conversation: 'enum',
          embedding: `vector[${dims}]`,
        } as const,
      })
      const documentOf = (turn: Turn, vector: Float32Array) => ({
        text: turn.content,
        diaId: turn.diaId,
        conversation: turn.conversation,
        embedding: Array.from(vector),
      })
      return {
        async add(turns) {
          const vectors = await options.embedder.embed(turns.map((t) => t.content))
          if (options.addMode === 'single') {
            for (const [i, turn] of turns.entries())
              await insert(db, documentOf(turn, vectors[i] as Float32Array))
          } else {
            await insertMultiple(
              db,
              turns.map((turn, i) => documentOf(turn, vectors[i] as Float32Array)),
            )
          }
        },
        async search(question, limit) {
          const [vector] = await options.embedder.embed([question.question])
          const result = await search(db, {
            mode: 'hybrid',
            term: question.question,
            vector: { value: Array.from(vector as Float32Array), property: 'embedding' },
            similarity: options.similarity,
            where: { conversation: { eq: question.conversation } },
            limit,
          })
          return result.hits.map((hit) => String(hit.document.diaId))
        },
        async close() {},
      }
    },
  }
}
