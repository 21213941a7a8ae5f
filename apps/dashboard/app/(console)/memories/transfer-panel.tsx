'use client'

import { useRouter } from 'next/navigation'
import { useState } from 'react'
import { ConfirmActions } from '../../../components/confirm-actions'
import { formatBytes } from '../../../lib/format'
import { exportFileName, type ImportReport } from '../../../lib/memories'

type ExportStatus =
  | { step: 'idle' }
  | { step: 'preparing' }
  | { step: 'downloading'; received: number; total: number | null }
  | { step: 'saved'; fileName: string; bytes: number; counts: Record<string, number> }
  | { step: 'failed'; error: string }

const IMPORT_STEPS = [
  ['reading', 'Reading file'],
  ['uploading', 'Uploading'],
  ['importing', 'Importing'],
  ['done', 'Done'],
] as const
type ImportStep = (typeof IMPORT_STEPS)[number][0]

type ImportStatus =
  | { step: 'idle' }
  | { step: ImportStep; sent?: number; size?: number; report?: ImportReport }
  | { step: 'failed'; at: ImportStep; error: string }

/** Reads a response body chunk by chunk, reporting how much has arrived. */
async function readWithProgress(response: Response, onProgress: (received: number) => void): Promise<Blob> {
  if (!response.body) return response.blob()
  const reader = response.body.getReader()
  const chunks: Uint8Array<ArrayBuffer>[] = []
  let received = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value as Uint8Array<ArrayBuffer>)
    received += value.byteLength
    onProgress(received)
  }
  return new Blob(chunks, { type: 'application/json' })
}

/** POSTs with XMLHttpRequest: fetch cannot report upload progress. */
function upload(
  url: string,
  body: Blob,
  onSent: (sent: number) => void,
  onUploaded: () => void,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest()
    request.open('POST', url)
    request.setRequestHeader('content-type', 'application/json')
    request.upload.onprogress = (event) => onSent(event.loaded)
    request.upload.onload = onUploaded
    request.onload = () => resolve({ status: request.status, body: request.responseText })
    request.onerror = () => reject(new Error('the dashboard could not be reached'))
    request.send(body)
  })
}

export function TransferPanel({ agentId }: { agentId: string }) {
  const router = useRouter()
  const [exportStatus, setExportStatus] = useState<ExportStatus>({ step: 'idle' })
  const [importStatus, setImportStatus] = useState<ImportStatus>({ step: 'idle' })
  const [file, setFile] = useState<File | null>(null)
  const [mode, setMode] = useState<'REPLACE' | 'MERGE'>('MERGE')
  const [confirmReplace, setConfirmReplace] = useState(false)

  const runExport = async () => {
    setExportStatus({ step: 'preparing' })
    try {
      const response = await fetch(`/api/memories/export?agent=${encodeURIComponent(agentId)}`, {
        cache: 'no-store',
      })
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as { error?: string }
        throw new Error(body.error ?? `the export failed (${response.status})`)
      }
      const total = Number(response.headers.get('content-length')) || null
      setExportStatus({ step: 'downloading', received: 0, total })
      const blob = await readWithProgress(response, (received) =>
        setExportStatus({ step: 'downloading', received, total }),
      )
      const fileName =
        /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ??
        exportFileName(agentId, new Date())
      const url = URL.createObjectURL(blob)
      const link = document.createElement('a')
      link.href = url
      link.download = fileName
      document.body.append(link)
      link.click()
      link.remove()
      setTimeout(() => URL.revokeObjectURL(url), 60_000)
      setExportStatus({
        step: 'saved',
        fileName,
        bytes: blob.size,
        counts: JSON.parse(response.headers.get('x-engram-export-counts') ?? '{}') as Record<string, number>,
      })
    } catch (error) {
      setExportStatus({ step: 'failed', error: error instanceof Error ? error.message : String(error) })
    }
  }

  const runImport = async () => {
    if (!file) return
    setConfirmReplace(false)
    setImportStatus({ step: 'reading', size: file.size })
    let text: string
    try {
      text = await file.text()
      const document = JSON.parse(text) as { format?: unknown; version?: unknown }
      if (document?.format !== 'engram.export')
        throw new Error(
          `${file.name} is not an Engram export (its "format" is ${JSON.stringify(document?.format ?? null)}, not "engram.export").`,
        )
    } catch (error) {
      const message =
        error instanceof SyntaxError ? `${file.name} is not JSON: ${error.message}` : (error as Error).message
      setImportStatus({ step: 'failed', at: 'reading', error: message })
      return
    }
    const size = new Blob([text]).size
    setImportStatus({ step: 'uploading', sent: 0, size })
    try {
      const response = await upload(
        `/api/memories/import?agent=${encodeURIComponent(agentId)}&mode=${mode}`,
        new Blob([text], { type: 'application/json' }),
        (sent) => setImportStatus({ step: 'uploading', sent, size }),
        () => setImportStatus({ step: 'importing', size }),
      )
      const body = JSON.parse(response.body || '{}') as { report?: ImportReport; error?: string }
      if (!body.report) {
        setImportStatus({
          step: 'failed',
          at: 'importing',
          error: body.error ?? `the import failed (${response.status})`,
        })
        return
      }
      setImportStatus({ step: 'done', size, report: body.report })
      router.refresh()
    } catch (error) {
      setImportStatus({
        step: 'failed',
        at: 'uploading',
        error: error instanceof Error ? error.message : String(error),
      })
    }
  }

  const importing =
    importStatus.step !== 'idle' && importStatus.step !== 'done' && importStatus.step !== 'failed'
  const reached = (step: ImportStep): 'done' | 'current' | 'failed' | 'todo' => {
    if (importStatus.step === 'idle') return 'todo'
    const order = IMPORT_STEPS.map(([s]) => s)
    const at = importStatus.step === 'failed' ? importStatus.at : importStatus.step
    const index = order.indexOf(step)
    const current = order.indexOf(at)
    if (index < current || (importStatus.step === 'done' && step === 'done')) return 'done'
    if (index === current) return importStatus.step === 'failed' ? 'failed' : 'current'
    return 'todo'
  }

  return (
    <section className="card transfer" aria-labelledby="transfer-heading">
      <h2 id="transfer-heading">Export and import</h2>
      <div className="transfer-grid">
        <div>
          <h3>Export</h3>
          <p className="muted">
            The agent&apos;s memories, knowledge, sessions and vectors as one JSON document (format
            engram.export).
          </p>
          <button
            type="button"
            onClick={runExport}
            disabled={exportStatus.step === 'preparing' || exportStatus.step === 'downloading'}
          >
            Export JSON
          </button>
          <p role="status" data-testid="export-status" data-step={exportStatus.step}>
            {exportStatus.step === 'preparing' && 'Preparing the export…'}
            {exportStatus.step === 'downloading' &&
              `Downloading ${formatBytes(exportStatus.received)}${exportStatus.total ? ` of ${formatBytes(exportStatus.total)}` : ''}…`}
            {exportStatus.step === 'saved' && (
              <span className="ok">
                Saved {exportStatus.fileName} ({formatBytes(exportStatus.bytes)}):{' '}
                {exportStatus.counts.memories ?? 0} memories, {exportStatus.counts.knowledge ?? 0} knowledge,{' '}
                {exportStatus.counts.sessions ?? 0} sessions ({exportStatus.counts.messages ?? 0} messages),{' '}
                {exportStatus.counts.vectors ?? 0} vectors.
              </span>
            )}
            {exportStatus.step === 'failed' && <span className="field-error">{exportStatus.error}</span>}
          </p>
        </div>
        <form
          aria-label="Import memories"
          onSubmit={(event) => {
            event.preventDefault()
            if (mode === 'REPLACE') setConfirmReplace(true)
            else void runImport()
          }}
        >
          <h3>Import</h3>
          <div className="filters">
            <label>
              Export file
              <input
                type="file"
                accept="application/json,.json"
                onChange={(event) => {
                  setFile(event.target.files?.[0] ?? null)
                  setImportStatus({ step: 'idle' })
                }}
              />
            </label>
            <label>
              Mode
              <select value={mode} onChange={(event) => setMode(event.target.value as 'REPLACE' | 'MERGE')}>
                <option value="MERGE">Merge (add to what is there)</option>
                <option value="REPLACE">Replace (clear first, then import)</option>
              </select>
            </label>
            <button type="submit" disabled={!file || importing}>
              {importing ? 'Importing…' : 'Import'}
            </button>
          </div>
          {confirmReplace && (
            <p role="alertdialog" aria-label="Confirm replace">
              <ConfirmActions
                prompt={`Replace clears ${agentId}'s memories, knowledge and sessions first.`}
                confirmLabel="Confirm replace"
                onConfirm={() => void runImport()}
                onCancel={() => setConfirmReplace(false)}
              />
            </p>
          )}
          {importStatus.step !== 'idle' && (
            <ol className="steps" aria-label="Import progress" data-testid="import-progress">
              {IMPORT_STEPS.map(([step, label]) => (
                <li key={step} data-step={step} data-state={reached(step)}>
                  {label}
                  {step === 'uploading' &&
                    importStatus.step === 'uploading' &&
                    importStatus.size != null &&
                    ` ${formatBytes(importStatus.sent ?? 0)} of ${formatBytes(importStatus.size)}`}
                </li>
              ))}
            </ol>
          )}
          {importStatus.step === 'done' && importStatus.report && (
            <p className="ok" role="status" data-testid="import-report">
              Imported {importStatus.report.memories} memories, {importStatus.report.knowledge} knowledge,{' '}
              {importStatus.report.sessions} sessions ({importStatus.report.messages} messages),{' '}
              {importStatus.report.vectors} vectors
              {importStatus.report.reembedded ? '; embedded again with this server’s model' : ''}.
            </p>
          )}
          {importStatus.step === 'failed' && (
            <p className="field-error" role="alert" data-testid="import-error">
              {importStatus.error}
            </p>
          )}
        </form>
      </div>
    </section>
  )
}
