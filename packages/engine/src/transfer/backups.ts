import { ValidationError } from '@engram/core'
import type { BackupInfo, BackupStore, RestoreResult } from '../ports/backup-store.ts'
import type { Storage } from '../ports/storage.ts'

/**
 * Whole-store backups where the adapter can take them. Without the capability (an in-memory store,
 * SQLite opened without a file or backup folder) every call is the same ValidationError naming
 * `backup`, so operators see one answer whatever the store.
 */
export class Backups {
  constructor(private readonly storage: Pick<Storage, 'capabilities' | 'backups'>) {}

  private store(): BackupStore {
    const store = this.storage.capabilities.backup ? this.storage.backups : undefined
    if (!store)
      throw new ValidationError([
        { field: 'backup', message: 'backups need a database file and ENGRAM_BACKUP_DIR' },
      ])
    return store
  }

  async create(): Promise<BackupInfo> {
    return this.store().create()
  }

  async list(): Promise<BackupInfo[]> {
    return this.store().list()
  }

  async restore(name: string): Promise<RestoreResult> {
    return this.store().restore(name)
  }
}
