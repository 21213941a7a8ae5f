#!/usr/bin/env -S node --import tsx
import { parseArgs } from 'node:util'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { clientFor } from './client.ts'
import { createMemoryServer, listenHttp } from './server.ts'

const USAGE = `engram-mcp: Engram's memory as MCP tools (remember, recall, get_context, forget, add_messages,
list_memories, update_memory) and resources (profile, recent memories).

Remote (a running Engram API):
  --url URL           the Engram API (env ENGRAM_URL, default http://localhost:4000)
  --api-key KEY       an agent key (env ENGRAM_API_KEY): the agent every tool acts for
Embedded (the engine in this process on one SQLite file, no server):
  --db PATH           the database file, created when new (env ENGRAM_DB)
  --agent ID          the agent every tool acts for (env ENGRAM_AGENT, default "default")

  --transport T       stdio (default) or http (Streamable HTTP at /mcp)
  --port N            for http (env ENGRAM_MCP_PORT, default 4100; 0 picks a free port)
  --host H            for http (default 127.0.0.1)`

/** Starts the server as configured by flags, then the environment. Logs go to stderr: stdout is the protocol. */
export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      'api-key': { type: 'string' },
      db: { type: 'string' },
      agent: { type: 'string' },
      transport: { type: 'string', default: 'stdio' },
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    console.error(USAGE)
    return
  }
  const { client, target } = await clientFor(values)
  if (values.transport === 'stdio') {
    await createMemoryServer(client).connect(new StdioServerTransport())
    console.error(`[engram-mcp] serving over stdio for ${target}`)
    // An embedded engine holds the file: close it (checkpoint, flush) when the client goes away.
    const stop = async () => {
      await client.close()
      process.exit(0)
    }
    process.stdin.once('end', () => void stop())
    process.once('SIGINT', () => void stop())
    process.once('SIGTERM', () => void stop())
    return
  }
  if (values.transport !== 'http')
    throw new Error(`--transport must be stdio or http, not ${values.transport}`)
  const port = Number(values.port ?? process.env.ENGRAM_MCP_PORT ?? 4100)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`--port must be 0 to 65535, not ${values.port}`)
  const running = await listenHttp(client, port, values.host)
  // One line a parent process (the CLI, a test) can read the address from.
  console.error(`[engram-mcp] listening on ${running.url} for ${target}`)
  const stop = async () => {
    await running.close()
    await client.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void stop())
  process.once('SIGTERM', () => void stop())
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`engram-mcp: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  })
}
