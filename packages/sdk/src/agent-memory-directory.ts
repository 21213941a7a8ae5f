import fs from 'node:fs/promises'
import path from 'node:path'
import { CONTRACT_LIMITS, EngramError } from '@engram/contract'

/**
 * A `.agent-memory/` directory (spec 004's layout) on disk ⇄ the `{path, content}` files that
 * `importAgentMemory` takes and `exportAgentMemory` returns. Node only: the CLI's
 * `engram runs import|export <dir>` and scripts use it with either client.
 */
export interface AgentMemoryFile {
  /** The path inside the directory, relative and with "/" separators. */
  path: string
  content: string
}

const invalid = (field: string, message: string, limit?: number) =>
  new EngramError({
    code: 'VALIDATION',
    message: `${field}: ${message}`,
    issues: [{ field, message, ...(limit !== undefined ? { limit } : {}) }],
  })

/**
 * Every JSON file under `dir`, sorted by path. Other files are not read (the layout holds only JSON),
 * and symbolic links are not followed, so nothing outside the directory is read. Stops with a
 * VALIDATION error once the files pass the import's limits (count or bytes), before reading the rest.
 */
export async function readAgentMemoryDirectory(dir: string): Promise<AgentMemoryFile[]> {
  const root = path.resolve(dir)
  const files: AgentMemoryFile[] = []
  let bytes = 0
  const walk = async (folder: string): Promise<void> => {
    const entries = await fs.readdir(folder, { withFileTypes: true })
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) {
        await walk(full)
        continue
      }
      if (!entry.isFile() || !entry.name.endsWith('.json')) continue
      if (files.length >= CONTRACT_LIMITS.maxImportFiles)
        throw invalid(
          'files',
          `must be at most ${CONTRACT_LIMITS.maxImportFiles} files`,
          CONTRACT_LIMITS.maxImportFiles,
        )
      const content = await fs.readFile(full, 'utf8')
      bytes += Buffer.byteLength(content)
      if (bytes > CONTRACT_LIMITS.maxImportBytes)
        throw invalid(
          'files',
          `must hold at most ${CONTRACT_LIMITS.maxImportBytes} bytes in all`,
          CONTRACT_LIMITS.maxImportBytes,
        )
      files.push({ path: path.relative(root, full).split(path.sep).join('/'), content })
    }
  }
  await walk(root)
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * Writes the files under `dir`, creating folders as needed and replacing files of the same name.
 * Every path is checked before anything is written: an absolute path, a ".." that leaves the
 * directory, or a folder inside it that links elsewhere is refused (VALIDATION naming the file), so
 * an export from a server cannot write outside the directory it was given.
 */
export async function writeAgentMemoryDirectory(
  dir: string,
  files: readonly AgentMemoryFile[],
): Promise<void> {
  const root = path.resolve(dir)
  const targets = files.map((file, i) => {
    const field = `files.${i}.path`
    const segments = file.path.split('/')
    if (
      file.path.length === 0 ||
      path.posix.isAbsolute(file.path) ||
      path.win32.isAbsolute(file.path) ||
      file.path.includes('\\') ||
      file.path.includes('\0') ||
      segments.some((s) => s === '' || s === '.' || s === '..')
    )
      throw invalid(field, `"${file.path}" must be a relative path inside the directory`)
    const target = path.resolve(root, ...segments)
    if (!target.startsWith(root + path.sep))
      throw invalid(field, `"${file.path}" must be a relative path inside the directory`)
    return { field, target, file }
  })
  await fs.mkdir(root, { recursive: true })
  const realRoot = await fs.realpath(root)
  for (const { field, target, file } of targets) {
    const folder = path.dirname(target)
    await fs.mkdir(folder, { recursive: true })
    // A folder already there may be a link out of the directory: write only where it really is inside.
    const realFolder = await fs.realpath(folder)
    if (realFolder !== realRoot && !realFolder.startsWith(realRoot + path.sep))
      throw invalid(field, `"${file.path}" leads out of the directory through a link`)
    await fs.writeFile(target, file.content)
  }
}
