import { NextResponse } from 'next/server'
import { adminKeyOrNull, type ErrorPayload, forwardGql } from '../../../../lib/api'
import { exportFileName } from '../../../../lib/memories'

interface ExportResult extends ErrorPayload {
  document?: unknown
  exportedAt?: string
  memories?: number
  knowledge?: number
  sessions?: number
  messages?: number
  vectors?: number
}

/**
 * An agent's export as a file download (engram-<agent>-<date>.json). It goes through this
 * dashboard because the API needs the admin key, which the browser never holds.
 */
export async function GET(request: Request) {
  const key = await adminKeyOrNull()
  if (!key) return NextResponse.json({ error: 'Signed out: sign in again.' }, { status: 401 })
  const agentId = new URL(request.url).searchParams.get('agent')
  if (!agentId) return NextResponse.json({ error: 'choose an agent' }, { status: 400 })
  const result = await forwardGql<{ exportMemory: ExportResult }>(
    key,
    JSON.stringify({
      query: `query($a: ID) { exportMemory(agentId: $a) { __typename
        ... on MemoryExport { document exportedAt memories knowledge sessions messages vectors }
        ... on Error { message } } }`,
      variables: { a: agentId },
    }),
  )
  if (!result.ok) return NextResponse.json({ error: result.error }, { status: result.status })
  const exported = result.data.exportMemory
  if (exported.__typename !== 'MemoryExport' || !exported.exportedAt)
    return NextResponse.json(
      { error: exported.message ?? 'the export failed' },
      { status: exported.__typename === 'NotFoundError' ? 404 : 400 },
    )
  const text = JSON.stringify(exported.document)
  const { memories, knowledge, sessions, messages, vectors } = exported
  return new Response(text, {
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      'content-disposition': `attachment; filename="${exportFileName(agentId, exported.exportedAt)}"`,
      'cache-control': 'no-store',
      'x-engram-export-counts': JSON.stringify({ memories, knowledge, sessions, messages, vectors }),
    },
  })
}
