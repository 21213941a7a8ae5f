import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { MAX_SPEAKER_CHARS, speakerOf } from '@engram/core'
import {
  applyMigrations,
  MAX_PARTICIPANTS,
  migrationsDirectory,
  PARTICIPANTS_SQL,
} from '@engram/store-sqlite'
import Database3 from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, TEST_BACKEND, type TestApp } from './helpers.ts'

const ERROR = `... on ValidationError { issues { field message limit } } ... on Error { message }`
const ADD = `mutation($input: AddMessageInput!) { addMessage(input: $input) {
  __typename ... on Message { id speaker metadata } ${ERROR}
} }`
const ADD_MANY = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) {
  __typename ... on AddMessagesPayload { messages { speaker } } ${ERROR}
} }`
const SESSION = `query($c: String!) { session(conversationId: $c) {
  ... on Session { messages(first: 50) { edges { node { content speaker } } } }
} }`
const EXPORT = `query($a: ID) { exportMemory(agentId: $a) { __typename ... on MemoryExport { document } ${ERROR} } }`
const IMPORT = `mutation($a: ID, $d: JSON!, $m: ImportMode) { importMemory(agentId: $a, document: $d, mode: $m) {
  __typename ... on ImportReport { messages } ${ERROR}
} }`

type Doc = Record<string, any>
const tooLong = 'x'.repeat(MAX_SPEAKER_CHARS + 1)

describe('speakers on the write and read paths', () => {
  let t: TestApp
  let key: string
  const add = (input: Record<string, unknown>, agentKey = key) =>
    t.gql(ADD, { input: { conversationId: 'c1', role: 'USER', content: 'hello', ...input } }, agentKey)

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-s')
  })
  afterAll(() => t.close())

  it('stores an explicit speaker trimmed and returns it, on the message and in its session', async () => {
    const r = await add({ speaker: '  Caroline ', content: 'I went to a support group yesterday' })
    expect(r.errors).toBeUndefined()
    expect(r.data.addMessage).toMatchObject({ __typename: 'Message', speaker: 'Caroline' })
    const row = await t.db.message.findUniqueOrThrow({ where: { id: Number(r.data.addMessage.id) } })
    expect(row.speaker).toBe('Caroline')
    const session = await t.gql(SESSION, { c: 'c1' }, key)
    expect(session.data.session.messages.edges.map((e: Doc) => e.node)).toEqual([
      { content: 'I went to a support group yesterday', speaker: 'Caroline' },
    ])
  })

  it('takes the speaker from metadata.speaker, else metadata.name; never from the role', async () => {
    const r = await t.gql(
      ADD_MANY,
      {
        c: 'c2',
        m: [
          { role: 'USER', content: 'a', metadata: { speaker: 'Melanie', name: 'not this' } },
          { role: 'ASSISTANT', content: 'b', metadata: { name: 'support-bot' } },
          { role: 'USER', content: 'c', speaker: 'Jon', metadata: { speaker: 'Gina' } },
          { role: 'USER', content: 'd', speaker: null, metadata: { speaker: 'Gina' } },
          { role: 'TOOL', content: 'e', metadata: { speaker: ['not', 'a', 'name'] } },
          { role: 'USER', content: 'f' },
        ],
      },
      key,
    )
    expect(r.errors).toBeUndefined()
    expect(r.data.addMessages.messages.map((m: Doc) => m.speaker)).toEqual([
      'Melanie',
      'support-bot',
      'Jon',
      'Gina',
      null,
      null,
    ])
  })

  it('refuses a blank or over-long speaker through variables, naming the field and the limit', async () => {
    const before = await t.db.message.count()
    const refusals: [Record<string, unknown>, string, number][] = [
      [{ speaker: tooLong }, 'message.speaker', MAX_SPEAKER_CHARS],
      [{ speaker: '   ' }, 'message.speaker', 1],
      [{ speaker: '' }, 'message.speaker', 1],
      [{ metadata: { speaker: tooLong } }, 'message.metadata.speaker', MAX_SPEAKER_CHARS],
      [{ metadata: { name: ` ${tooLong} ` } }, 'message.metadata.name', MAX_SPEAKER_CHARS],
    ]
    for (const [input, field, limit] of refusals) {
      const r = await add(input)
      expect(r.errors).toBeUndefined()
      expect(r.data.addMessage.__typename).toBe('ValidationError')
      expect(r.data.addMessage.issues).toEqual([{ field, limit: String(limit), message: expect.any(String) }])
    }
    const batch = await t.gql(
      ADD_MANY,
      {
        c: 'c3',
        m: [
          { role: 'USER', content: 'fine', speaker: 'Jon' },
          { role: 'USER', content: 'too long', speaker: tooLong },
        ],
      },
      key,
    )
    expect(batch.data.addMessages.issues).toEqual([
      { field: 'messages.1.speaker', limit: String(MAX_SPEAKER_CHARS), message: expect.any(String) },
    ])
    expect(await t.db.message.count()).toBe(before)
    expect(await t.db.session.count({ where: { conversationId: 'c3' } })).toBe(0)
    // The limit itself is allowed.
    const longest = 'y'.repeat(MAX_SPEAKER_CHARS)
    expect((await add({ speaker: longest })).data.addMessage.speaker).toBe(longest)
  })

  it('puts the speaker through the privacy policy like the content', async () => {
    const redacted = await add({ speaker: 'ssn 123-45-6789' })
    expect(redacted.data.addMessage.speaker).toBe('ssn [REDACTED:ssn]')
    const metadataOnly = await add({ metadata: { speaker: 'ssn 123-45-6789' } })
    expect(metadataOnly.data.addMessage.speaker).toBe('ssn [REDACTED:ssn]')
    expect(JSON.stringify(await t.db.message.findMany())).not.toContain('123-45-6789')

    const strictKey = await createAgentKey(t, 'agent-strict')
    await t.gql(`mutation { setPrivacyPolicy(agentId: "agent-strict", mode: REJECT) { __typename } }`)
    const refused = await add({ speaker: 'ssn 123-45-6789' }, strictKey)
    expect(refused.data.addMessage).toMatchObject({
      __typename: 'ValidationError',
      issues: [{ field: 'message.speaker', limit: 'ssn' }],
    })
    expect(await t.db.message.count({ where: { agentId: 'agent-strict' } })).toBe(0)
  })
})

describe('participants', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
    const keyA = await createAgentKey(t, 'agent-a')
    const keyB = await createAgentKey(t, 'agent-b')
    const say = (agentKey: string, speakers: (string | null)[]) =>
      t.gql(
        ADD_MANY,
        { c: 'talk', m: speakers.map((speaker, i) => ({ role: 'USER', content: `turn ${i}`, speaker })) },
        agentKey,
      )
    await say(keyA, ['Melanie', 'Caroline', 'Jon', null, 'Caroline', 'Jon', 'Melanie', 'Caroline', null])
    await say(keyB, ['Bob the secret keeper', 'Caroline'])
  })
  afterAll(() => t.close())

  it("lists the agent's distinct speakers, most messages first, ties by name", async () => {
    const repository = t.app.services.sessionRepository
    expect(await repository.participants('agent-a')).toEqual(['Caroline', 'Jon', 'Melanie'])
    expect(await repository.participants('agent-a', 2)).toEqual(['Caroline', 'Jon'])
    expect(await repository.participants('agent-a', 0)).toEqual([])
    expect(await repository.participants('nobody')).toEqual([])
  })

  it("never lists another agent's speakers", async () => {
    const repository = t.app.services.sessionRepository
    expect(await repository.participants('agent-a')).not.toContain('Bob the secret keeper')
    expect(await repository.participants('agent-b')).toEqual(['Bob the secret keeper', 'Caroline'])
  })

  it(`stops at ${MAX_PARTICIPANTS}, whatever limit is asked`, async () => {
    await t.db.agent.create({ data: { id: 'crowd', name: 'crowd' } })
    const session = await t.db.session.create({
      data: { id: 'crowd-s', agentId: 'crowd', conversationId: 'c' },
    })
    const at = new Date('2026-01-01T00:00:00.000Z')
    await t.db.message.createMany({
      data: Array.from({ length: MAX_PARTICIPANTS + 5 }, (_, i) => ({
        sessionId: session.id,
        agentId: 'crowd',
        role: 'user',
        speaker: `person ${String(i).padStart(4, '0')}`,
        content: 'hi',
        tokenCount: 1,
        timestamp: at,
      })),
    })
    const listed = await t.app.services.sessionRepository.participants('crowd', 5_000)
    expect(listed).toHaveLength(MAX_PARTICIPANTS)
    expect(listed[0]).toBe('person 0000')
  })

  // SQLite's EXPLAIN QUERY PLAN; on Postgres the same read's plan is checked by
  // packages/store-postgres/src/db/raw-read-plans.test.ts.
  it.skipIf(TEST_BACKEND === 'postgres')('reads the (agentId, speaker) index alone', () => {
    const connection = new Database3(t.databaseFile, { readonly: true })
    try {
      const plan = (
        connection.prepare(`EXPLAIN QUERY PLAN ${PARTICIPANTS_SQL}`).all('agent-a', 10) as {
          detail: string
        }[]
      ).map((row) => row.detail)
      expect(plan.join('; ')).toMatch(/COVERING INDEX "?Message_agentId_speaker_idx/)
    } finally {
      connection.close()
    }
  })
})

describe('export and import carry speakers', () => {
  let t: TestApp
  let original: Doc
  const exportOf = async (agentId: string) => {
    const r = await t.gql(EXPORT, { a: agentId })
    expect(r.data.exportMemory.__typename).toBe('MemoryExport')
    return r.data.exportMemory.document as Doc
  }
  const importInto = async (agentId: string, document: unknown) =>
    (await t.gql(IMPORT, { a: agentId, d: document, m: 'REPLACE' }, ADMIN_KEY)).data.importMemory
  const speakers = async (agentId: string) =>
    (await t.db.message.findMany({ where: { agentId }, orderBy: { id: 'asc' } })).map((m) => m.speaker)

  beforeAll(async () => {
    t = await createTestApp()
    const key = await createAgentKey(t, 'agent-src')
    await createAgentKey(t, 'agent-copy')
    const r = await t.gql(
      ADD_MANY,
      {
        c: 'c1',
        m: [
          { role: 'USER', content: 'explicit', speaker: 'Caroline' },
          { role: 'USER', content: 'from metadata', metadata: { speaker: 'Melanie' } },
          { role: 'ASSISTANT', content: 'no one named' },
        ],
      },
      key,
    )
    expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
    original = await exportOf('agent-src')
  })
  afterAll(() => t.close())

  it('exports each message with its speaker, and an import brings the same document back', async () => {
    expect(original.version).toBe(5)
    expect(original.sessions[0].messages.map((m: Doc) => m.speaker)).toEqual(['Caroline', 'Melanie', null])
    expect(await importInto('agent-copy', original)).toEqual({ __typename: 'ImportReport', messages: 3 })
    expect(await speakers('agent-copy')).toEqual(['Caroline', 'Melanie', null])
    const copy = await exportOf('agent-copy')
    expect({ ...copy, agent: null }).toEqual({ ...original, agent: null })
  })

  it('imports a document from before speakers, taking them from metadata as a write would', async () => {
    const old = structuredClone(original)
    old.version = 2
    for (const m of old.sessions[0].messages) delete m.speaker
    // An over-long name was a valid backup then: it is left out, not a reason to refuse the backup.
    old.sessions[0].messages[2].metadata = { speaker: tooLong, name: 'ignored' }
    expect(await importInto('agent-copy', old)).toEqual({ __typename: 'ImportReport', messages: 3 })
    expect(await speakers('agent-copy')).toEqual([null, 'Melanie', null])
  })

  it('refuses a document speaker a write would refuse, naming it, and changes nothing', async () => {
    await importInto('agent-copy', original)
    const before = await t.db.message.findMany({ where: { agentId: 'agent-copy' }, orderBy: { id: 'asc' } })
    for (const [speaker, limit] of [
      [tooLong, MAX_SPEAKER_CHARS],
      [' ', 1],
    ] as const) {
      const bad = structuredClone(original)
      bad.sessions[0].messages[1].speaker = speaker
      expect(await importInto('agent-copy', bad)).toMatchObject({
        __typename: 'ValidationError',
        issues: [{ field: 'document.sessions.0.messages.1.speaker', limit: String(limit) }],
      })
    }
    expect(await t.db.message.findMany({ where: { agentId: 'agent-copy' }, orderBy: { id: 'asc' } })).toEqual(
      before,
    )
  })
})

describe('the message_speaker migration', () => {
  it('fills in the speakers of existing messages from their metadata by the write rule', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-speaker-migration-'))
    try {
      const all = fs.readdirSync(migrationsDirectory()).filter((n) => !n.endsWith('.toml'))
      const speakerMigration = all.find((n) => n.endsWith('_message_speaker')) as string
      expect(speakerMigration).toBeTruthy()
      const earlier = path.join(dir, 'migrations')
      fs.mkdirSync(earlier)
      for (const name of all.filter((n) => n < speakerMigration))
        fs.cpSync(path.join(migrationsDirectory(), name), path.join(earlier, name), { recursive: true })
      const file = path.join(dir, 'old.db')
      applyMigrations(file, earlier)

      const metadata: string[] = [
        JSON.stringify({ speaker: '  Caroline ' }),
        JSON.stringify({ name: 'Melanie' }),
        JSON.stringify({ speaker: 'Jon', name: 'not this' }),
        JSON.stringify({ speaker: ' \t', name: 'Gina' }),
        JSON.stringify({ speaker: 42, name: 'Nate' }),
        JSON.stringify({ speaker: '\u00a0Zoë\u3000' }),
        JSON.stringify({ speaker: 'x'.repeat(MAX_SPEAKER_CHARS) }),
        JSON.stringify({ speaker: tooLong, name: 'not a fallback' }),
        // 64 emoji are 128 UTF-16 units (a write takes them), 65 are 130 (a write refuses them).
        JSON.stringify({ speaker: '😀'.repeat(64) }),
        JSON.stringify({ speaker: '😀'.repeat(65) }),
        JSON.stringify({ role: 'user' }),
        '{}',
      ]
      const db = new Database3(file)
      db.prepare(`INSERT INTO "Agent" ("id", "name") VALUES ('a', 'a')`).run()
      db.prepare(
        `INSERT INTO "Session" ("id", "agentId", "conversationId", "updatedAt") VALUES ('s', 'a', 'c', 0)`,
      ).run()
      const insert = db.prepare(
        `INSERT INTO "Message" ("sessionId", "agentId", "role", "content", "tokenCount", "metadata", "timestamp") VALUES ('s', 'a', 'user', 'x', 1, ?, 0)`,
      )
      for (const m of metadata) insert.run(m)
      db.close()

      expect(applyMigrations(file, migrationsDirectory()).applied).toContain(speakerMigration)
      const migrated = new Database3(file, { readonly: true })
      const stored = (
        migrated.prepare(`SELECT "speaker" FROM "Message" ORDER BY "id"`).all() as {
          speaker: string | null
        }[]
      ).map((r) => r.speaker)
      migrated.close()
      // The same speakers a write of that metadata stores (or would have refused: null).
      const written = metadata.map((m) => {
        const { speaker, issue } = speakerOf({ metadata: JSON.parse(m) })
        return issue ? null : speaker
      })
      expect(stored).toEqual(written)
      expect(stored.slice(0, 6)).toEqual(['Caroline', 'Melanie', 'Jon', 'Gina', 'Nate', 'Zoë'])
      expect(stored.slice(6, 10)).toEqual(['x'.repeat(MAX_SPEAKER_CHARS), null, '😀'.repeat(64), null])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
