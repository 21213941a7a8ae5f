import { builder } from '../builder.ts'
import './agent.ts'
import './session.ts'
import './memory-entry.ts'
import './knowledge.ts'
import './optimizer.ts'
import './search.ts'

export const schema = builder.toSchema({ sortSchema: true })
