import pg from 'pg'

/** The channel every replica listens on; a payload names one (agent, kind, model) index. */
export const VECTOR_CHANNEL = 'engram_vectors'

/** Payload of a TRUNCATE of the table: every index is stale. */
const EVERY_INDEX = '*'

/**
 * The tables whose rows own vectors, with the kind their vectors are stored under, in the order an
 * agent's deletion cascades into them (their foreign keys' creation order). A deleted row's
 * *_embedding_delete trigger then deletes from "Embedding": a delete takes the owner's table
 * before "Embedding" (the cascade reaches "Embedding" before "Summary", so no one order fits
 * every path: see vector-schema.ts for why the setup cannot deadlock anyway).
 */
export const VECTOR_OWNER_TABLES = {
  Message: 'message',
  Knowledge: 'knowledge',
  MemoryItem: 'memory',
  Summary: 'summary',
} as const

/** The triggers NOTIFY_STATEMENTS install (the setup checks they are all there). */
export const VECTOR_TRIGGERS = [
  'Embedding_notify',
  'Embedding_notify_truncate',
  ...Object.keys(VECTOR_OWNER_TABLES).map((table) => `${table}_vector_owner_notify`),
]

/**
 * Every change to `Embedding` rows notifies in its own transaction, whatever wrote it: the
 * store's upserts and removals, the triggers that delete an owner's vectors with it, an agent's
 * cascade, an import or restore. Postgres delivers a notification only on commit, in commit
 * order, never for a rollback, and sends one per distinct payload per transaction (a batch of
 * 256 vectors of one index is one notification). The payload names the index, not the ids:
 * NOTIFY payloads stop at 8,000 bytes.
 */
const NOTIFY_STATEMENTS = [
  `CREATE OR REPLACE FUNCTION engram_vectors_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('${VECTOR_CHANNEL}', '${EVERY_INDEX}');
    RETURN NULL;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('${VECTOR_CHANNEL}', NEW."agentId" || E'\\t' || NEW."kind" || E'\\t' || NEW."model");
  END IF;
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('${VECTOR_CHANNEL}', OLD."agentId" || E'\\t' || OLD."kind" || E'\\t' || OLD."model");
  END IF;
  RETURN NULL;
END
$fn$`,
  `CREATE OR REPLACE TRIGGER "Embedding_notify" AFTER INSERT OR UPDATE OR DELETE ON "Embedding"
  FOR EACH ROW EXECUTE FUNCTION engram_vectors_notify()`,
  `CREATE OR REPLACE TRIGGER "Embedding_notify_truncate" AFTER TRUNCATE ON "Embedding"
  FOR EACH STATEMENT EXECUTE FUNCTION engram_vectors_notify()`,
  // A new owner row (a memory, message, knowledge or summary written by any process) has no
  // vector yet: the agent's indexes of that kind, of every model, catch it up at their next
  // search, as SQLite's do when another connection commits (its data_version).
  `CREATE OR REPLACE FUNCTION engram_vector_owner_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('${VECTOR_CHANNEL}', NEW."agentId" || E'\t' || TG_ARGV[0] || E'\t' || '${EVERY_INDEX}');
  RETURN NULL;
END
$fn$`,
  ...Object.entries(VECTOR_OWNER_TABLES).map(
    ([table, kind]) => `CREATE OR REPLACE TRIGGER "${table}_vector_owner_notify" AFTER INSERT ON "${table}"
  FOR EACH ROW EXECUTE FUNCTION engram_vector_owner_notify('${kind}')`,
  ),
]

/** Serialises replicas changing the vector schema at once (concurrent CREATE OR REPLACE conflict). */
export const VECTOR_SCHEMA_LOCK = 7_314_201_414

/** The statements installing (or refreshing) the notifying triggers: idempotent. */
export function vectorNotificationStatements(): string[] {
  return [...NOTIFY_STATEMENTS]
}

export function indexName(agentId: string, kind: string, model: string): string {
  return `${agentId}\t${kind}\t${model}`
}

export interface VectorChangeListenerOptions {
  /** Where to listen: the same server and database as the pool. */
  url: string
  /** Reconnection backoff after the connection drops: doubles from `minDelayMs` up to `maxDelayMs`. */
  reconnect?: { minDelayMs?: number; maxDelayMs?: number }
  log?: Pick<Console, 'warn' | 'info'>
}

/**
 * One dedicated `LISTEN` connection (outside the pool, which must not hold a session open; not
 * through a transaction-mode pooler, which drops LISTEN). Each notification bumps the named
 * index's counter, so `version()` changes and the next search of that index checks the table.
 * While the connection is down nothing can be trusted: `version()` is null for every index (each
 * search checks the table) until it is back and listening again, when the epoch moves on so
 * every index is checked once more (what was missed meanwhile is unknown).
 *
 * The reconnection delays are the transport's own timers, not the engine's clock: no record's
 * lifetime depends on them, only how soon searches stop checking the table.
 */
export class VectorChangeListener {
  private client: pg.Client | null = null
  private listening = false
  private epoch = 0
  private readonly counters = new Map<string, number>()
  private closed = false
  private retryDelay: number
  /** The connection was lost since it last listened (so its return is worth a line in the log). */
  private lost = false
  private retryTimer: NodeJS.Timeout | null = null
  private readonly log: Pick<Console, 'warn' | 'info'>
  /** Resolves once the first LISTEN succeeded or failed (tests wait for it). */
  readonly ready: Promise<void>

  constructor(private readonly options: VectorChangeListenerOptions) {
    this.log = options.log ?? console
    this.retryDelay = this.minDelay
    this.ready = this.connect()
  }

  private get minDelay(): number {
    return this.options.reconnect?.minDelayMs ?? 50
  }

  /**
   * Null while not listening; otherwise changes whenever the index may have changed. Only the
   * indexes asked about are counted (the rest of the deployment's agents cost this replica no
   * memory): asking starts the count, before the caller reads the table.
   */
  version(agentId: string, kind: string, model: string): string | null {
    if (!this.listening) return null
    const name = indexName(agentId, kind, model)
    let count = this.counters.get(name)
    if (count === undefined) {
      count = 0
      this.counters.set(name, count)
    }
    return `${this.epoch}:${count}`
  }

  /** Whether notifications are arriving now. */
  get connected(): boolean {
    return this.listening
  }

  /** The listening connection's backend pid (to test a dropped listener), null when down. */
  async backendPid(): Promise<number | null> {
    if (!this.client || !this.listening) return null
    const { rows } = await this.client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    return rows[0]?.pid ?? null
  }

  private async connect(): Promise<void> {
    if (this.closed) return
    const client = new pg.Client({ connectionString: this.options.url })
    this.client = client
    client.on('notification', (message) => {
      if (message.channel !== VECTOR_CHANNEL) return
      if (message.payload === EVERY_INDEX) {
        this.epoch++
        return
      }
      const name = message.payload ?? ''
      // `<agent>\t<kind>\t*`: a new owner row, whichever model will embed it.
      if (name.endsWith(`\t${EVERY_INDEX}`)) {
        const prefix = name.slice(0, -EVERY_INDEX.length)
        for (const [index, count] of this.counters)
          if (index.startsWith(prefix)) this.counters.set(index, count + 1)
        return
      }
      const count = this.counters.get(name)
      if (count !== undefined) this.counters.set(name, count + 1)
    })
    // A dropped connection ('error' first when the server ends it, then 'end'): down until back.
    client.on('error', () => this.dropped(client))
    client.on('end', () => this.dropped(client))
    try {
      await client.connect()
      await client.query(`LISTEN ${VECTOR_CHANNEL}`)
      if (this.client !== client || this.closed) return
      // Whatever was written while nobody listened is unknown: every index is checked once.
      this.epoch++
      this.listening = true
      if (this.lost) this.log.info('[vectors] change notifications are back')
      this.lost = false
      this.retryDelay = this.minDelay
    } catch (error) {
      if (this.client === client && !this.closed)
        this.log.warn(`[vectors] listening for vector changes failed (searches check the table):`, error)
      this.dropped(client)
    }
  }

  private dropped(client: pg.Client): void {
    if (this.client !== client) return
    const wasListening = this.listening
    this.listening = false
    this.client = null
    client.removeAllListeners('end')
    client.on('error', () => {})
    client.end().catch(() => {})
    if (this.closed) return
    if (wasListening) this.lost = true
    if (wasListening)
      this.log.warn('[vectors] change notifications lost; searches check the table until they are back')
    const delay = this.retryDelay
    this.retryDelay = Math.min(this.retryDelay * 2, this.options.reconnect?.maxDelayMs ?? 2000)
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null
      void this.connect()
    }, delay)
    this.retryTimer.unref()
  }

  async close(): Promise<void> {
    this.closed = true
    this.listening = false
    if (this.retryTimer) clearTimeout(this.retryTimer)
    const client = this.client
    this.client = null
    if (client) {
      client.removeAllListeners('end')
      client.on('error', () => {})
      await client.end().catch(() => {})
    }
  }
}
