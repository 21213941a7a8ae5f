import { randomUUID } from 'node:crypto'
import type { StoredMessage } from '@engram/core'
import type { EpisodicStore, Logger } from '@engram/engine'
import type { Redis } from 'ioredis'
import { failingFast } from './redis-connection.ts'
import { agentKeyPatterns, episodicKey, episodicMetaKey, keyNamesAgent } from './redis-keys.ts'

/** Spec 002's TTL of the L2 layer: a conversation untouched for a day is read from the database again. */
export const DEFAULT_EPISODIC_TTL_MS = 24 * 60 * 60 * 1000
/** The newest messages a conversation's set holds: memoryContext reads 200, a context window all of a short one. */
export const DEFAULT_EPISODIC_MAX_MESSAGES = 500
/**
 * How long an announced write may take before readers stop waiting for it: past this the writer is
 * taken for dead (between its commit and its update) and the conversation's set is dropped.
 */
export const DEFAULT_EPISODIC_WRITE_LEASE_MS = 30_000
/** A command slower than this is given up (the database answers); Redis answers in well under 1 ms. */
export const DEFAULT_EPISODIC_COMMAND_TIMEOUT_MS = 1_000
/** Conversations written while Redis was unreachable, dropped when it returns; past this, all are. */
const MAX_REMEMBERED_MISSED_WRITES = 10_000

export interface RedisEpisodicStoreOptions {
  url: string
  prefix: string
  log: Logger
  /** How long a conversation's set lives after its last write (ms). */
  ttlMs?: number
  maxMessages?: number
  writeLeaseMs?: number
  reconnectMaxDelayMs?: number
  /** How long one command may take before the database answers instead (ms). */
  commandTimeoutMs?: number
}

// The scripts share one check: is the set usable? Not when it or its meta hash is missing, nor while a
// write is announced; a write whose lease passed (its writer died between commit and update) drops
// the set, since it may lack a committed message.
const USABLE = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function usable(set, meta)
  if redis.call('EXISTS', meta) == 0 or redis.call('EXISTS', set) == 0 then return false end
  local fields = redis.call('HGETALL', meta)
  local now = now_ms()
  local blocked, stale = false, {}
  for i = 1, #fields, 2 do
    local name = fields[i]
    if string.sub(name, 1, 2) == 'w:' then
      if tonumber(fields[i + 1]) < now then table.insert(stale, name) else blocked = true end
    end
  end
  if #stale > 0 then
    redis.call('DEL', set)
    redis.call('HDEL', meta, unpack(stale))
    redis.call('HINCRBY', meta, 'version', 1)
    return false
  end
  return not blocked
end
`

/**
 * KEYS set, meta; ARGV ttl, token, lease: announces a write, unless the writer already withdrew
 * it (the command timed out there and ran here late, e.g. resent after NOSCRIPT).
 */
const WRITING = `${USABLE}
if redis.call('HEXISTS', KEYS[2], 'x:' .. ARGV[2]) == 1 then return 0 end
redis.call('HSET', KEYS[2], 'w:' .. ARGV[2], now_ms() + tonumber(ARGV[3]))
redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
`

/**
 * KEYS set, meta; ARGV ttl, token, mode ('append' | 'drop'), max, then (score, id, member) triples:
 * settles an announced write. An append joins a held set where it belongs: anywhere in a whole set,
 * above its lowest member otherwise (below it the set makes no claim). Trimming removes the lowest
 * members, the "whole" marker (scored -inf) first.
 */
const SETTLE = `${USABLE}
local set, meta = KEYS[1], KEYS[2]
if redis.call('EXISTS', meta) == 0 then
  redis.call('DEL', set)
  return 0
end
local mine = redis.call('HDEL', meta, 'w:' .. ARGV[2])
redis.call('HINCRBY', meta, 'version', 1)
if ARGV[3] == 'drop' or mine == 0 then
  redis.call('DEL', set)
elseif redis.call('EXISTS', set) == 1 then
  local whole = redis.call('ZSCORE', set, '!whole') ~= false
  local lowest = nil
  if not whole then lowest = redis.call('ZRANGE', set, 0, 0, 'WITHSCORES') end
  for i = 5, #ARGV, 3 do
    local score, id, member = tonumber(ARGV[i]), ARGV[i + 1], ARGV[i + 2]
    for _, held in ipairs(redis.call('ZRANGEBYSCORE', set, score, score)) do
      if string.sub(held, 1, #id + 1) == id .. '|' then redis.call('ZREM', set, held) end
    end
    local above = whole or score > tonumber(lowest[2]) or (score == tonumber(lowest[2]) and member > lowest[1])
    if above then redis.call('ZADD', set, score, member) end
  end
  local max = tonumber(ARGV[4])
  local marker = 0
  if redis.call('ZSCORE', set, '!whole') ~= false then marker = 1 end
  local count = redis.call('ZCARD', set)
  if count - marker > max then redis.call('ZREMRANGEBYRANK', set, 0, count - max - 1) end
  redis.call('PEXPIRE', set, ARGV[1])
end
redis.call('PEXPIRE', meta, ARGV[1])
return 1
`

/** KEYS set, meta; ARGV limit: the newest members, or false when the set cannot answer exactly. */
const NEWEST = `${USABLE}
if not usable(KEYS[1], KEYS[2]) then return false end
local limit = tonumber(ARGV[1])
local whole = redis.call('ZSCORE', KEYS[1], '!whole') ~= false
local held = redis.call('ZCARD', KEYS[1])
if whole then held = held - 1 end
if limit > held and not whole then return false end
return redis.call('ZREVRANGEBYSCORE', KEYS[1], '(+inf', '(-inf', 'LIMIT', 0, limit)
`

/** KEYS set, meta: every member, oldest first, when the set holds the whole conversation. */
const WHOLE = `${USABLE}
if not usable(KEYS[1], KEYS[2]) then return false end
if redis.call('ZSCORE', KEYS[1], '!whole') == false then return false end
return redis.call('ZRANGEBYSCORE', KEYS[1], '(-inf', '(+inf')
`

/** KEYS meta; ARGV ttl: the version a fill must still find (the meta hash is made if missing). */
const TICKET = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'version', 0)
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return redis.call('HGET', KEYS[1], 'version')
`

/**
 * KEYS set, meta; ARGV ttl, ticket, whole, then (score, member) pairs: replaces the set, unless a
 * write was announced or settled, or the agent's keys were removed, since the ticket.
 */
const FILL = `
local set, meta = KEYS[1], KEYS[2]
if redis.call('HGET', meta, 'version') ~= ARGV[2] then return 0 end
local fields = redis.call('HKEYS', meta)
for _, name in ipairs(fields) do
  if string.sub(name, 1, 2) == 'w:' then return 0 end
end
redis.call('DEL', set)
for i = 4, #ARGV, 2 do redis.call('ZADD', set, ARGV[i], ARGV[i + 1]) end
if ARGV[3] == '1' then redis.call('ZADD', set, '-inf', '!whole') end
redis.call('PEXPIRE', set, ARGV[1])
redis.call('PEXPIRE', meta, ARGV[1])
return 1
`

type ScriptResult = string[] | null

interface EpisodicCommands {
  engramWriting(set: string, meta: string, ttl: number, token: string, lease: number): Promise<number>
  engramSettle(set: string, meta: string, ...args: (string | number)[]): Promise<number>
  engramNewest(set: string, meta: string, limit: number): Promise<ScriptResult>
  engramWhole(set: string, meta: string): Promise<ScriptResult>
  engramTicket(meta: string, ttl: number): Promise<string>
  engramFill(set: string, meta: string, ...args: (string | number)[]): Promise<number>
}

/**
 * Spec 002's L2 episodic layer on Redis: per agent and conversation, a sorted set
 * `<prefix>:l2:<agent>:<conversation>` of its newest uncompressed messages (score: the timestamp in
 * ms; member: the id, zero-padded so equal times order by id as the database does, then the
 * message as JSON) and a hash `<prefix>:l2meta:<agent>:<conversation>` (a version bumped by every
 * write, the writes under way). Both expire `ttlMs` after the last write. Every command runs as one
 * Lua script, so each check and change is atomic on the server. Redis down: every read is a miss
 * and every write nothing (the engine reads the database), logged once per outage.
 */
export class RedisEpisodicStore implements EpisodicStore {
  readonly maxMessages: number
  private readonly redis: Redis & EpisodicCommands
  private readonly prefix: string
  private readonly log: Logger
  private readonly ttlMs: number
  private readonly writeLeaseMs: number
  private outage = false
  /** Writes Redis did not answer (agent, conversation, token): their sets may lack them once it does. */
  private readonly missed = new Set<string>()
  private missedTooMany = false

  constructor(options: RedisEpisodicStoreOptions) {
    this.prefix = options.prefix
    this.log = options.log
    this.ttlMs = options.ttlMs ?? DEFAULT_EPISODIC_TTL_MS
    this.maxMessages = options.maxMessages ?? DEFAULT_EPISODIC_MAX_MESSAGES
    this.writeLeaseMs = options.writeLeaseMs ?? DEFAULT_EPISODIC_WRITE_LEASE_MS
    // Fails at once while disconnected (the database answers instead) rather than queueing, and a
    // Redis that stops answering must not hold requests: past the command timeout the database answers.
    this.redis = failingFast(options.url, {
      reconnectMaxDelayMs: options.reconnectMaxDelayMs,
      commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_EPISODIC_COMMAND_TIMEOUT_MS,
    }) as Redis & EpisodicCommands
    this.redis.defineCommand('engramWriting', { numberOfKeys: 2, lua: WRITING })
    this.redis.defineCommand('engramSettle', { numberOfKeys: 2, lua: SETTLE })
    this.redis.defineCommand('engramNewest', { numberOfKeys: 2, lua: NEWEST })
    this.redis.defineCommand('engramWhole', { numberOfKeys: 2, lua: WHOLE })
    this.redis.defineCommand('engramTicket', { numberOfKeys: 1, lua: TICKET })
    this.redis.defineCommand('engramFill', { numberOfKeys: 2, lua: FILL })
    this.redis.on('error', (error) => this.down(error))
    // Back after an outage: what was missed is dropped now rather than at the next read.
    this.redis.on('ready', () => void this.attempt(async () => undefined))
  }

  /** `up` when the connection is ready. */
  status(): 'up' | 'down' {
    return this.redis.status === 'ready' ? 'up' : 'down'
  }

  close(): void {
    this.redis.disconnect()
  }

  async writing(agentId: string, conversationId: string): Promise<string | null> {
    const token = randomUUID()
    const ok = await this.attempt(() =>
      this.redis.engramWriting(
        this.setKey(agentId, conversationId),
        this.metaKey(agentId, conversationId),
        this.ttlMs,
        token,
        this.writeLeaseMs,
      ),
    )
    if (ok !== undefined) return token
    // Timed out, it may still run on the server: the token is withdrawn with the set.
    this.remember(agentId, conversationId, token)
    return null
  }

  async appended(
    agentId: string,
    conversationId: string,
    token: string | null,
    messages: readonly StoredMessage[],
  ): Promise<void> {
    if (token === null) return
    const triples = messages.flatMap((message) => {
      const member = memberOf(message)
      return member ? [message.timestamp.getTime(), `${member.split('|')[0]}`, member] : []
    })
    // A message the set cannot order (an id that is not a row number) makes it drop instead.
    const mode = triples.length === messages.length * 3 ? 'append' : 'drop'
    await this.settle(agentId, conversationId, token, mode, triples)
  }

  async changed(agentId: string, conversationId: string, token: string | null): Promise<void> {
    if (token === null) return
    await this.settle(agentId, conversationId, token, 'drop', [])
  }

  async newest(agentId: string, conversationId: string, limit: number): Promise<StoredMessage[] | null> {
    const members = await this.attempt(() =>
      this.redis.engramNewest(
        this.setKey(agentId, conversationId),
        this.metaKey(agentId, conversationId),
        limit,
      ),
    )
    return members ? members.map(messageOf) : null
  }

  async whole(agentId: string, conversationId: string): Promise<StoredMessage[] | null> {
    const members = await this.attempt(() =>
      this.redis.engramWhole(this.setKey(agentId, conversationId), this.metaKey(agentId, conversationId)),
    )
    return members ? members.map(messageOf) : null
  }

  async ticket(agentId: string, conversationId: string): Promise<string | null> {
    const version = await this.attempt(() =>
      this.redis.engramTicket(this.metaKey(agentId, conversationId), this.ttlMs),
    )
    return version ?? null
  }

  async fill(
    agentId: string,
    conversationId: string,
    ticket: string,
    newestFirst: readonly StoredMessage[],
    whole: boolean,
  ): Promise<void> {
    const pairs: (string | number)[] = []
    for (const message of newestFirst) {
      const member = memberOf(message)
      if (!member) return
      pairs.push(message.timestamp.getTime(), member)
    }
    await this.attempt(() =>
      this.redis.engramFill(
        this.setKey(agentId, conversationId),
        this.metaKey(agentId, conversationId),
        this.ttlMs,
        ticket,
        whole ? '1' : '0',
        ...pairs,
      ),
    )
  }

  async forgetAgent(agentId: string | null): Promise<void> {
    await this.attempt(() => this.removeKeys(agentId))
  }

  async keysOf(agentId: string): Promise<number | null> {
    const keys = await this.attempt(() => this.scanAgentKeys(agentId))
    return keys === undefined ? null : keys.length
  }

  /** Every key naming the agent under the prefix (SCAN, never KEYS: it would block the server). */
  async scanAgentKeys(agentId: string): Promise<string[]> {
    const found: string[] = []
    for (const pattern of agentKeyPatterns(this.prefix, agentId)) {
      let cursor = '0'
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500)
        cursor = next
        found.push(...keys.filter((key) => keyNamesAgent(this.prefix, key, agentId)))
      } while (cursor !== '0')
    }
    return found
  }

  /**
   * Every key naming the agent under the prefix (SCAN, never KEYS: it would block the server on a
   * large keyspace), whoever wrote it; every agent's episodic keys when none is named.
   */
  async removeKeys(agentId: string | null): Promise<number> {
    let removed = 0
    for (const pattern of agentKeyPatterns(this.prefix, agentId)) {
      let cursor = '0'
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500)
        cursor = next
        const doomed =
          agentId === null ? keys : keys.filter((key) => keyNamesAgent(this.prefix, key, agentId))
        if (doomed.length > 0) removed += await this.redis.unlink(...doomed)
      } while (cursor !== '0')
    }
    return removed
  }

  private async settle(
    agentId: string,
    conversationId: string,
    token: string,
    mode: 'append' | 'drop',
    triples: (string | number)[],
  ): Promise<void> {
    const ok = await this.attempt(() =>
      this.redis.engramSettle(
        this.setKey(agentId, conversationId),
        this.metaKey(agentId, conversationId),
        this.ttlMs,
        token,
        mode,
        this.maxMessages,
        ...triples,
      ),
    )
    // The write stays announced, so the set is not read; it is dropped when its lease passes.
    if (ok === undefined) this.remember(agentId, conversationId, token)
  }

  private setKey(agentId: string, conversationId: string): string {
    return episodicKey(this.prefix, agentId, conversationId)
  }

  private metaKey(agentId: string, conversationId: string): string {
    return episodicMetaKey(this.prefix, agentId, conversationId)
  }

  /** Runs one command; undefined when Redis did not answer (the caller reads the database). */
  private async attempt<T>(command: () => Promise<T>): Promise<T | undefined> {
    if (this.redis.status !== 'ready') {
      this.down(new Error(`connection ${this.redis.status}`))
      return undefined
    }
    try {
      // Writes Redis missed come first: their conversations' sets may lack a committed message.
      if (this.missed.size > 0 || this.missedTooMany) await this.dropMissed()
      const result = await command()
      if (this.outage) {
        this.outage = false
        this.log.info('[redis] the L2 episodic layer answers again')
      }
      return result
    } catch (error) {
      this.down(error)
      return undefined
    }
  }

  private remember(agentId: string, conversationId: string, token: string): void {
    if (this.missed.size >= MAX_REMEMBERED_MISSED_WRITES) this.missedTooMany = true
    else this.missed.add(`${agentId}\u0000${conversationId}\u0000${token}`)
  }

  /**
   * Drops the sets of conversations written while Redis did not answer (it may have kept them, or
   * run a command that timed out here), and bumps their versions so a fill racing this is ignored.
   */
  private async dropMissed(): Promise<void> {
    if (this.missedTooMany) {
      await this.removeKeys(null)
      this.missedTooMany = false
      this.missed.clear()
      return
    }
    for (const entry of [...this.missed]) {
      const [agentId, conversationId, token] = entry.split('\u0000') as [string, string, string]
      const meta = this.metaKey(agentId, conversationId)
      // Sent after the missed command on the same connection, so Redis runs it after that one;
      // should the missed announcement run later still (resent after NOSCRIPT), it finds itself
      // withdrawn (WRITING checks x:<token>).
      await this.redis
        .multi()
        .unlink(this.setKey(agentId, conversationId))
        .hdel(meta, `w:${token}`)
        .hset(meta, `x:${token}`, 1)
        .hincrby(meta, 'version', 1)
        .pexpire(meta, this.ttlMs)
        .exec()
      this.missed.delete(entry)
    }
  }

  /** Logged once per outage. */
  private down(error: unknown): void {
    if (this.outage) return
    this.outage = true
    this.log.warn(
      `[redis] the L2 episodic layer is unavailable (${error instanceof Error ? error.message : String(error)}): conversations are read from the database until it returns`,
    )
  }
}

const ID_WIDTH = 20

/** `<id padded to 20 digits>|<message as JSON>`; null for an id that is not a row number. */
function memberOf(message: StoredMessage): string | null {
  if (!/^\d{1,20}$/.test(message.id)) return null
  return `${message.id.padStart(ID_WIDTH, '0')}|${JSON.stringify(message)}`
}

function messageOf(member: string): StoredMessage {
  const parsed = JSON.parse(member.slice(member.indexOf('|') + 1)) as StoredMessage & { timestamp: string }
  return { ...parsed, timestamp: new Date(parsed.timestamp) }
}
