// CPU time of a Postgres server's processes, for backends-scale's "server CPU per search": the
// wall time of a search on a machine shared with other work measures the other work too, CPU time
// much less so. On Postgres a search's CPU is split between this Node process and the server's
// backends, so both are read. Linux only (/proc); elsewhere the server's share reads as null.
import fs from 'node:fs'
import pg from 'pg'

/** Linux's USER_HZ: /proc reports CPU time in these ticks (100 a second on every Linux port). */
const TICKS_PER_SECOND = 100

/** The pid of the server's postmaster: the parent of the backend a fresh connection gets. */
export async function postmasterPid(url: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    return rows[0] ? parentOf(rows[0].pid) : null
  } finally {
    await client.end()
  }
}

function stat(pid: number): { parent: number; ticks: number } | null {
  let text: string
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return null
  }
  // After the command's closing parenthesis: state, ppid, … utime (14th field), stime (15th).
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
  return { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) }
}

function parentOf(pid: number): number | null {
  return stat(pid)?.parent ?? null
}

/**
 * Reads the CPU time of a server's processes (its postmaster's children: backends, autovacuum,
 * WAL writer). `refresh` lists them again (a scan of /proc, milliseconds on a busy machine);
 * `ms` reads the listed ones only, cheap enough to read around every search. A process forked
 * after the last refresh is not counted until the next: refresh between rounds.
 */
export class ServerCpu {
  private pids: number[] = []
  constructor(private readonly postmaster: number) {}

  refresh(): void {
    this.pids = fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => parentOf(pid) === this.postmaster)
  }

  /** Per listed process, its CPU time so far in ms. */
  read(): Map<number, number> {
    const times = new Map<number, number>()
    for (const pid of this.pids) {
      const found = stat(pid)
      if (found && found.parent === this.postmaster) times.set(pid, (found.ticks * 1_000) / TICKS_PER_SECOND)
    }
    return times
  }

  /** CPU ms the processes used between two reads (one that exited in between counts nothing). */
  static between(before: Map<number, number>, after: Map<number, number>): number {
    let ms = 0
    for (const [pid, time] of after) ms += time - (before.get(pid) ?? time)
    return ms
  }
}
