import { AgentService } from '@engram/engine'
import { agentsIn, type Database, sqliteApiKeys } from '@engram/store-sqlite'

/**
 * Start-up: makes sure an admin key exists. A key given in ENGRAM_ADMIN_KEY is registered (hashed);
 * with none configured and none stored, one is generated and returned so the caller can print it
 * once. It runs before the app is built, on the database the app will open.
 */
export async function ensureAdminKey(
  db: Database,
  configuredKey: string | undefined,
): Promise<string | null> {
  return new AgentService(agentsIn(db), sqliteApiKeys(db)).ensureAdminKey(configuredKey)
}
