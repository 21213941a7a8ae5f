import fs from 'node:fs'
import path from 'node:path'
import { ValidationError } from '@engram/core'
import type { BackupInfo } from '@engram/engine'

/**
 * The folder a backup store keeps its files in, one file a backup named
 * `engram-<ISO time, ':' and '.' as '-'>[-n]<extension>` (SQLite's copies `.db`, Postgres's logical
 * exports `.pg.jsonl.gz`). Names are checked against that pattern before they become paths, so a
 * name given to restore never reaches outside the folder; files of another kind are not listed.
 */
export class BackupFolder {
  private readonly pattern: RegExp
  private readonly suffix: RegExp

  constructor(
    readonly directory: string,
    private readonly extension: string,
  ) {
    const escaped = extension.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    this.pattern = new RegExp(`^engram-[0-9TZ-]+${escaped}$`)
    this.suffix = new RegExp(`(-\\d+)?${escaped}$`)
  }

  /**
   * A name no backup has yet for one made at `at` (a second backup of the same millisecond gets
   * `-1`, then `-2`…), and its path; the folder is created if missing.
   */
  allocate(at: Date): { name: string; file: string } {
    fs.mkdirSync(this.directory, { recursive: true })
    let name = `engram-${at.toISOString().replace(/[:.]/g, '-')}${this.extension}`
    for (let n = 1; fs.existsSync(path.join(this.directory, name)); n++)
      name = name.replace(this.suffix, `-${n}${this.extension}`)
    return { name, file: path.join(this.directory, name) }
  }

  /** The backup just written under `name`, as listed. */
  info(name: string, createdAt: Date): BackupInfo {
    return { name, bytes: fs.statSync(path.join(this.directory, name)).size, createdAt }
  }

  /** The folder's backups, newest name first (names sort by time). */
  list(): BackupInfo[] {
    if (!fs.existsSync(this.directory)) return []
    return fs
      .readdirSync(this.directory)
      .filter((name) => this.pattern.test(name))
      .map((name) => {
        const stat = fs.statSync(path.join(this.directory, name))
        return { name, bytes: stat.size, createdAt: stat.mtime }
      })
      .sort((a, b) => b.name.localeCompare(a.name))
  }

  /** The path of the backup named `name`; a ValidationError naming `name` when the folder has none such. */
  existing(name: string): string {
    const file = path.join(this.directory, name)
    if (!this.pattern.test(name) || !fs.existsSync(file))
      throw new ValidationError([{ field: 'name', message: `no backup named ${name} in the backup folder` }])
    return file
  }
}
