/**
 * The BackupStore port: whole-store backups an operator takes while the server runs, and restoring
 * one. Only adapters that declare `capabilities.backup` hand one out; where backups live (files, a
 * bucket) stays inside the adapter, so the engine names a backup and never a path.
 */
export interface BackupInfo {
  name: string
  bytes: number
  createdAt: Date
}

export interface RestoreResult {
  name: string
  /** How many tables the restore replaced. */
  tables: number
}

export interface BackupStore {
  /** A consistent copy of the whole store, taken while it serves. */
  create(): Promise<BackupInfo>
  /** The backups there are, newest first. */
  list(): Promise<BackupInfo[]>
  /**
   * Replaces the whole store's data with a backup's in one transaction. Access control (API keys)
   * stays as it is, so the operator restoring keeps access; keys of agents the backup lacks go.
   * A name that is no backup, or a backup of another schema, is a ValidationError naming `name`.
   */
  restore(name: string): Promise<RestoreResult>
}
