import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository's root: prisma/ (schema and migrations) and tools/ live there, see docs/architecture.md. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
