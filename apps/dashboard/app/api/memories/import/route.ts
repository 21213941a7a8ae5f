import { NextResponse } from 'next/server'
import { adminKeyOrNull, ERROR_FIELDS, type ErrorPayload, forwardGql } from '../../../../lib/api'
import type { ImportReport } from '../../../../lib/memories'

/**
 * Imports an export document into an agent. The browser uploads the file here (so it can show
 * upload progress without holding the admin key); this forwards it to importMemory as the operator.
 * The API's ENGRAM_MAX_REQUEST_BYTES bounds the size.
 */
export async function POST(request: Request) {
  const key = await adminKeyOrNull()
  if (!key) return NextResponse.json({ error: 'Signed out: sign in again.' }, { status: 401 })
  // A cross-site form cannot send JSON without a preflight: one more guard besides the SameSite cookie.
  if (!request.headers.get('content-type')?.startsWith('application/json'))
    return NextResponse.json({ error: 'send the document as application/json' }, { status: 415 })
  const params = new URL(request.url).searchParams
  const agentId = params.get('agent')
  const mode = params.get('mode') === 'REPLACE' ? 'REPLACE' : 'MERGE'
  if (!agentId) return NextResponse.json({ error: 'choose an agent' }, { status: 400 })
  let document: unknown
  try {
    document = JSON.parse(await request.text())
  } catch (error) {
    return NextResponse.json(
      { error: `The file is not JSON: ${error instanceof Error ? error.message.slice(0, 200) : ''}` },
      { status: 400 },
    )
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    return NextResponse.json(
      { error: 'The file is not an Engram export (not a JSON object).' },
      { status: 400 },
    )
  const result = await forwardGql<{ importMemory: ErrorPayload & Partial<ImportReport> }>(
    key,
    JSON.stringify({
      query: `mutation($a: ID, $d: JSON!, $m: ImportMode) { importMemory(agentId: $a, document: $d, mode: $m) { __typename
        ... on ImportReport { memories knowledge sessions messages vectors reembedded } ${ERROR_FIELDS} } }`,
      variables: { a: agentId, d: document, m: mode },
    }),
  )
  if (!result.ok) return NextResponse.json({ error: result.error }, { status: result.status })
  const report = result.data.importMemory
  if (report.__typename !== 'ImportReport')
    return NextResponse.json(
      { error: report.message ?? 'the import failed', issues: report.issues ?? [] },
      { status: 422 },
    )
  const { __typename, ...counts } = report
  return NextResponse.json({ report: counts })
}
