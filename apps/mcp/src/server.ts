import { createServer, type Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { EngramClient } from '@engram/contract'
import { catalog, describeFailure, ERROR_CODES } from '@engram/contract'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode as McpErrorCode,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { parseToolInput, TOOLS, toolError, toolResult } from './tools.ts'

/** The tools, for a door that starts this server and checks what it lists (the CLI's tests). */
export { TOOLS } from './tools.ts'

export const SERVER_NAME = 'engram'
export const SERVER_VERSION = '0.1.0'
/** How many memories the recent-memories resource lists. */
export const RECENT_MEMORIES = 20

const RESOURCES = [
  {
    uri: 'engram://profile',
    name: 'profile',
    title: 'User profile',
    description:
      'What is remembered about the user, as text: the generated profile when there is one, else the profile section of the memory context.',
    mimeType: 'text/plain',
  },
  {
    uri: 'engram://memories/recent',
    name: 'recent-memories',
    title: 'Recent memories',
    description: `The ${RECENT_MEMORIES} newest long-term memories, as JSON.`,
    mimeType: 'application/json',
  },
]

/**
 * The MCP server of one agent: every tool and resource goes through the client, whose key fixes
 * the agent. Tool input is checked against the catalog's schemas here, so a bad argument is
 * answered as a typed tool error (VALIDATION, the field and the limit), never a protocol failure.
 */
export function createMemoryServer(client: EngramClient): Server {
  const server = new Server(
    { name: SERVER_NAME, version: SERVER_VERSION },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Long-term memory for this assistant. Call recall (or get_context) before answering questions that may depend on earlier conversations; call remember when the user states a lasting fact or preference; record conversation turns with add_messages.',
    },
  )

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((tool) => {
      const spec = catalog[tool.operation]
      return {
        name: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as {
          type: 'object'
          [key: string]: unknown
        },
        annotations: {
          title: tool.title,
          readOnlyHint: spec.readOnly,
          destructiveHint: spec.destructive,
          // The same call twice does not do twice as much (forget, update) — except writes that add.
          idempotentHint: tool.name === 'forget' || tool.name === 'update_memory' || spec.readOnly,
          openWorldHint: false,
        },
      }
    }),
  }))

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOLS.find((t) => t.name === request.params.name)
    if (!tool)
      return toolError({
        code: ERROR_CODES.NOT_FOUND,
        message: `no tool named ${request.params.name}; the tools are ${TOOLS.map((t) => t.name).join(', ')}`,
        resource: 'Tool',
        id: request.params.name,
      })
    const input = parseToolInput(tool, request.params.arguments)
    if (!input.ok) return toolError(input.error)
    return toolResult(await tool.run(client, input.data as never))
  })

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }))

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params
    if (uri === 'engram://profile') {
      // The generated profile (issue 13 §4) when one exists; before that, the context's profile section.
      const generated = await client.userProfile({})
      if (!generated.ok) throw new McpError(McpErrorCode.InternalError, describeFailure(generated.error))
      if (generated.data.current)
        return { contents: [{ uri, mimeType: 'text/plain', text: generated.data.current.content }] }
      const profile = await client.profile()
      if (!profile.ok) throw new McpError(McpErrorCode.InternalError, describeFailure(profile.error))
      return { contents: [{ uri, mimeType: 'text/plain', text: profile.data.text }] }
    }
    if (uri === 'engram://memories/recent') {
      const page = await client.memories({ first: RECENT_MEMORIES, orderBy: 'NEWEST' })
      if (!page.ok) throw new McpError(McpErrorCode.InternalError, describeFailure(page.error))
      return {
        contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(page.data.memories, null, 2) }],
      }
    }
    throw new McpError(
      McpErrorCode.InvalidParams,
      `no resource ${uri}; the resources are ${RESOURCES.map((r) => r.uri).join(', ')}`,
    )
  })

  return server
}

export interface HttpMcpServer {
  server: HttpServer
  url: string
  close(): Promise<void>
}

/**
 * Streamable HTTP at /mcp, stateless: every request gets its own protocol server and transport,
 * so nothing is kept between requests and any number of clients can call at once.
 */
export function listenHttp(client: EngramClient, port: number, host = '127.0.0.1'): Promise<HttpMcpServer> {
  const server = createServer(async (req, res) => {
    if (new URL(req.url ?? '/', 'http://mcp').pathname !== '/mcp') {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'not found: use /mcp' }))
      return
    }
    const mcp = createMemoryServer(client)
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    })
    res.on('close', () => {
      void transport.close()
      void mcp.close()
    })
    try {
      await mcp.connect(transport)
      await transport.handleRequest(req, res)
    } catch (error) {
      if (!res.headersSent)
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: String(error) }, id: null }))
    }
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      resolve({
        server,
        url: `http://${host}:${address.port}/mcp`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          }),
      })
    })
  })
}
