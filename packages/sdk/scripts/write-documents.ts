import fs from 'node:fs'
import { DOCUMENTS_FILE, renderDocuments } from './documents.ts'

fs.writeFileSync(DOCUMENTS_FILE, renderDocuments())
