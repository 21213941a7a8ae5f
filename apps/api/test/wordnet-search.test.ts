import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const SEARCH = `query($input: SearchInput!) { search(input: $input) { ... on SearchResult { hits { components { vector } message { content } } } } }`
const TURNS = [
  'The automobile broke down on the highway',
  'We went camping by the lake last summer',
  'The quarterly report is due on Friday',
]

/** The app's search with a given embedder (undefined: the plain default), vector side only. */
async function vectorSearch(t: TestApp, key: string, query: string) {
  const r = await t.gql(
    SEARCH,
    { input: { query, strategy: 'HYBRID', weights: { bm25: 0, vector: 1, context: 0 } } },
    key,
  )
  return r.data.search.hits as { components: { vector: number }; message: { content: string } }[]
}

describe('search with the WordNet embedder (createApp → services → search)', () => {
  const apps: TestApp[] = []
  const keys: string[] = []
  beforeAll(async () => {
    for (const embedder of [createHashingEmbedder({ lexicon: loadWordNetLexicon() }), undefined]) {
      const t = await createTestApp({ embedder })
      const key = await createAgentKey(t, 'agent-wn')
      for (const content of TURNS) {
        await t.gql(
          `mutation($m: String!) { addMessage(input: { conversationId: "c", role: USER, content: $m }) { __typename } }`,
          { m: content },
          key,
        )
      }
      apps.push(t)
      keys.push(key)
    }
  })
  afterAll(() => Promise.all(apps.map((t) => t.close())))

  it('finds a turn by a synonym that shares no word with it', async () => {
    const [withSynonyms, plain] = await Promise.all(
      apps.map((t, i) => vectorSearch(t, keys[i] as string, 'my car stopped working')),
    )
    expect(withSynonyms?.[0]?.message.content).toBe(TURNS[0])
    expect(withSynonyms?.[0]?.components.vector).toBeGreaterThan(0.05)
    const plainScore = plain?.find((h) => h.message.content === TURNS[0])?.components.vector ?? 0
    expect(plainScore).toBeLessThan(0.05)
  })
})
