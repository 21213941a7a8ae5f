import type { EngramClient } from '@engram/contract'
import { Engram } from '@engram/sdk'

// Apart from main.ts because tsx cannot lex a file that has both a shebang and a dynamic import.

/**
 * Embedded when a database file is named (flag, then ENGRAM_DB), else remote. The embedded module
 * is imported only then: remote use never loads the native modules it needs.
 */
export async function clientFor(values: {
  url?: string
  'api-key'?: string
  db?: string
  agent?: string
}): Promise<{ client: EngramClient; target: string }> {
  const db = values.db ?? process.env.ENGRAM_DB
  if (db) {
    if (values.url || values['api-key'])
      throw new Error('--db (embedded) and --url/--api-key (remote) exclude each other')
    const { open } = await import('@engram/sdk/embedded')
    const agentId = values.agent ?? process.env.ENGRAM_AGENT ?? 'default'
    return { client: await open({ path: db, agentId }), target: `${db} (embedded, agent ${agentId})` }
  }
  const url = values.url ?? process.env.ENGRAM_URL ?? 'http://localhost:4000'
  const apiKey = values['api-key'] ?? process.env.ENGRAM_API_KEY
  if (!apiKey)
    throw new Error('an agent key is needed (--api-key KEY or ENGRAM_API_KEY), or a file: --db PATH')
  return { client: Engram.connect({ url, apiKey }), target: url }
}
