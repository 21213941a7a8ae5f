import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { TOOLS } from '@engram/mcp'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer } from '../../../packages/sdk/test/server.ts'

const appDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const bin = path.join(appDir, 'dist', 'engram.js')
// The built command must list what the MCP package's sources define (apps/mcp's own test pins
// the exact names).
const MEMORY_TOOLS = TOOLS.map((tool) => tool.name).sort()

/** A LoCoMo-format conversation made here (the real set is never copied into the repository). */
function locomoFixture(file: string) {
  const turns = [
    ['Caroline', 'I went to the LGBTQ support group yesterday and it was so powerful.'],
    ['Melanie', 'That sounds great! I painted a lake at sunrise last weekend.'],
    ['Caroline', 'I am researching adoption agencies because I want to be a mother.'],
    ['Melanie', 'My kids love pottery, we made bowls together.'],
  ]
  const sample = {
    sample_id: 'conv-fixture',
    conversation: {
      speaker_a: 'Caroline',
      speaker_b: 'Melanie',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: turns.slice(0, 2).map(([speaker, text], i) => ({ speaker, dia_id: `D1:${i + 1}`, text })),
      session_2_date_time: '1:14 pm on 25 May, 2023',
      session_2: turns.slice(2).map(([speaker, text], i) => ({ speaker, dia_id: `D2:${i + 1}`, text })),
    },
    qa: [
      { question: 'When did Caroline go to the support group?', evidence: ['D1:1'], category: 2 },
      { question: 'What did Melanie paint?', evidence: ['D1:2'], category: 1 },
      { question: 'What is Caroline researching?', evidence: ['D2:1'], category: 1 },
      { question: 'What do Melanie’s kids like?', evidence: ['D2:2'], category: 1 },
    ],
  }
  fs.writeFileSync(file, JSON.stringify([sample]))
}

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

describe('the built engram command starts the servers and the eval harness', () => {
  let work: string
  const children: ChildProcess[] = []

  const engram = (args: string[], env: Record<string, string> = {}) =>
    new Promise<Run>((resolve) => {
      const child = spawn(process.execPath, [bin, ...args], { cwd: work, env: { ...process.env, ...env } })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (c) => (stdout += c))
      child.stderr.on('data', (c) => (stderr += c))
      child.on('close', (code) => resolve({ code, stdout, stderr }))
    })

  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-cli-servers-'))
  }, 120_000)
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
    if (work) fs.rmSync(work, { recursive: true, force: true })
  })

  it('eval --dataset runs the quality harness; --json prints its report; a bad file exits 1', async () => {
    const dataset = path.join(work, 'locomo-fixture.json')
    locomoFixture(dataset)
    const run = await engram(['--json', 'eval', '--dataset', dataset, '--quick'])
    expect(run.code, run.stderr).toBe(0)
    const report = JSON.parse(run.stdout) as {
      title: string
      rows: { name: string; value: number; unit: string }[]
    }
    expect(report.title).toContain('conv-fixture')
    const recall = report.rows.filter((r) => /R@10/i.test(r.name) || /recall/i.test(r.name))
    expect(recall.length).toBeGreaterThan(0)
    for (const row of recall) expect(row.value).toBeGreaterThanOrEqual(0)
    const broken = path.join(work, 'broken.json')
    fs.writeFileSync(broken, '{ not json')
    const failed = await engram(['eval', '--dataset', broken])
    expect(failed.code).toBe(1)
    expect(failed.stderr.trim().split('\n').at(-1)).toMatch(/^engram: quality\.ts exited with \d+$/)
  }, 300_000)

  it('serve starts the API on a file; it answers a query with the admin key', async () => {
    const adminKey = 'cli-serve-admin-key-0123456789abcdef'
    const database = path.join(work, 'serve.db')
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--database', `file:${database}`], {
      cwd: work,
      env: { ...process.env, ENGRAM_ADMIN_KEY: adminKey, API_HOST: '127.0.0.1', OPTIMIZER_INTERVAL_MS: '0' },
    })
    children.push(child)
    const url = await new Promise<string>((resolve, reject) => {
      let output = ''
      const timer = setTimeout(() => reject(new Error(`no address in: ${output}`)), 120_000)
      const look = (chunk: Buffer) => {
        output += chunk.toString()
        const match = /(http:\/\/localhost:\d+\/graphql)/.exec(output)
        if (match) {
          clearTimeout(timer)
          resolve(match[1] as string)
        }
      }
      child.stdout.on('data', look)
      child.stderr.on('data', look)
    })
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminKey}` },
      body: JSON.stringify({
        query: 'mutation { createAgent(id: "served") { __typename ... on Agent { id } } }',
      }),
    })
    expect(await response.json()).toEqual({ data: { createAgent: { __typename: 'Agent', id: 'served' } } })
    const stopped = new Promise((resolve) => child.on('close', resolve))
    child.kill('SIGTERM')
    await stopped
    expect(fs.existsSync(database)).toBe(true)
  }, 180_000)

  it('mcp starts the MCP server (remote, then embedded); the MCP SDK client lists its tools', async () => {
    const api = await startServer()
    try {
      const key = await api.agentKey('cli-mcp')
      for (const args of [
        ['mcp', '--url', api.url],
        ['mcp', '--db', path.join(work, 'mcp.db'), '--agent', 'cli-mcp'],
      ]) {
        const env: Record<string, string> = {}
        for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value
        delete env.ENGRAM_DB
        if (args.includes('--url')) env.ENGRAM_API_KEY = key
        else delete env.ENGRAM_API_KEY
        const mcp = new Client({ name: 'engram-cli-test', version: '1.0.0' })
        await mcp.connect(
          new StdioClientTransport({
            command: process.execPath,
            args: [bin, ...args],
            cwd: work,
            env,
            stderr: 'ignore',
          }),
        )
        const { tools } = await mcp.listTools()
        expect(tools.map((t) => t.name).sort(), args.join(' ')).toEqual(MEMORY_TOOLS)
        const remembered = (await mcp.callTool({
          name: 'remember',
          arguments: { text: 'Remember that the CLI started me' },
        })) as { isError?: boolean; content: { text: string }[] }
        expect(remembered.isError ?? false, remembered.content[0]?.text).toBe(false)
        await mcp.close()
      }
    } finally {
      await api.close()
    }
  }, 180_000)

  it('mcp without a key or a file: one clear line, exit 1', async () => {
    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(process.env))
      if (value !== undefined && name !== 'ENGRAM_API_KEY' && name !== 'ENGRAM_DB') env[name] = value
    const child = spawn(process.execPath, [bin, 'mcp'], { cwd: work, env })
    let stderr = ''
    child.stderr.on('data', (c) => (stderr += c))
    const code = await new Promise((resolve) => child.on('close', resolve))
    expect(code).toBe(1)
    expect(stderr).toBe('engram: no key: pass --api-key KEY or set ENGRAM_API_KEY (or --db FILE)\n')
  })
})
