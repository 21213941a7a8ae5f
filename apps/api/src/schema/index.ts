import { builder } from '../builder.ts'
import './agent.ts'
import './session.ts'
import './memory-entry.ts'
import './knowledge.ts'
import './optimizer.ts'
import './memory-item.ts'
import './search.ts'
import './memory-context.ts'
import './transfer.ts'
import './embedding.ts'
import './jobs.ts'

export const schema = builder.toSchema({ sortSchema: true })
