import { ValidationError } from '../errors.ts'
import type {
  AppFactFields,
  HintFields,
  RunFields,
  RunSessionFields,
  SelectorFields,
  TrajectoryFields,
  TrajectoryStep,
} from './records.ts'

/**
 * A `.agent-memory/` directory (spec 004's on-disk layout, as the documented system writes it) and
 * Engram's records, both ways. This file holds the shapes and the bookkeeping both directions share;
 * `agent-memory-import.ts` reads files into an import plan, `agent-memory-export.ts` writes records
 * back into files. Pure: the directory arrives as `{path, content}` pairs.
 *
 * Keeping what Engram does not know. Every field of a file Engram has no place for is kept in its
 * record's `extra`, verbatim, under its own name, so the export writes it back. A known field whose
 * value Engram cannot hold (a `finalUrl` of "", a `ms` given as text) is kept there the same way
 * and Engram's field gets a stand-in. What the export needs beyond that to give back the very same
 * file sits under one reserved key, `$engram` (see {@link Bookkeeping}): the record's position in
 * its file, the file's own top-level fields, dates written in another ISO form, the fields whose
 * Engram value is a stand-in. A file that itself uses a field named `$engram` is refused.
 */

export const BOOKKEEPING_KEY = '$engram'

export type JsonObject = Record<string, unknown>

/** One file of the directory: its path inside it (posix, relative) and its text. */
export interface AgentMemoryFile {
  path: string
  content: string
}

/** A file (or part of one) that was not imported, and why. */
export interface SkippedAgentMemoryFile {
  path: string
  reason: string
}

/**
 * What the export needs to rebuild a record's file exactly. Absent on records Engram recorded
 * itself (their export is written from their fields).
 */
export interface Bookkeeping {
  /** The record's position in its file (facts and sessions of knowledge.json). */
  at?: number
  /** The file's name when the export would not derive it (a trajectory or manifest file). */
  name?: string
  /** The top-level fields of the record's file other than its records (knowledge.json, selectors.json). */
  file?: { fields: JsonObject; lists: string[] }
  /** Dates and names as the file wrote them, when Engram's form differs (same instant or same name). */
  raw?: Record<string, string>
  /** Fields whose Engram value is a stand-in: the export writes back what the file had, or nothing. */
  absent?: string[]
  /** A step's action fields Engram does not know. */
  action?: JsonObject
  /** A selector entry's key in `entries` when it is not the element, and which of its selectors this is. */
  key?: string
  role?: 'stable' | 'ref'
}

/** Unknown fields plus bookkeeping, as a record's `extra` holds them (null when there is nothing). */
export type AgentMemoryExtra = JsonObject | null

// --- the import plan: records without the ids and scope the engine gives them ------------------

export interface PlannedRun extends RunFields {
  /** The manifest's path in the directory (import only: reports name it). */
  path?: string
}

export type PlannedStep = TrajectoryStep

export type PlannedTrajectory = TrajectoryFields

export type PlannedRunSession = RunSessionFields

export type PlannedFact = AppFactFields

export type PlannedSelector = SelectorFields

export type PlannedHint = HintFields

export interface AgentMemoryImportPlan {
  runs: PlannedRun[]
  trajectories: PlannedTrajectory[]
  runSessions: PlannedRunSession[]
  facts: PlannedFact[]
  selectors: PlannedSelector[]
  hints: PlannedHint[]
  skipped: SkippedAgentMemoryFile[]
}

// --- where a file sits -------------------------------------------------------------------------

export type AgentMemoryPlace =
  | { kind: 'knowledge'; directory: string }
  | { kind: 'selectors'; directory: string }
  | { kind: 'trajectory'; directory: string; name: string }
  | { kind: 'run'; name: string }
  | { kind: 'hints' }
  | { kind: 'suiteSummary'; name: string }
  | { kind: 'unknown' }

const SEGMENT = /^[^/\\]+$/

/** Where a path sits in the layout. A leading "./" or ".agent-memory/" is allowed; ".." never. */
export function agentMemoryPlace(path: string): AgentMemoryPlace {
  let p = path.replace(/^\.\//, '')
  if (p.startsWith('.agent-memory/')) p = p.slice('.agent-memory/'.length)
  const parts = p.split('/')
  if (parts.some((s) => s === '' || s === '.' || s === '..' || !SEGMENT.test(s))) return { kind: 'unknown' }
  const json = (name: string | undefined) => (name?.length ?? 0) > 5 && (name as string).endsWith('.json')
  if (parts.length === 1 && parts[0] === 'hints.json') return { kind: 'hints' }
  if (parts.length === 2 && parts[0] === 'agent-runs' && json(parts[1]))
    return { kind: 'run', name: parts[1] as string }
  if (parts.length === 2 && parts[0] === 'runs' && json(parts[1]))
    return { kind: 'suiteSummary', name: parts[1] as string }
  if (parts[0] === 'domains' && parts.length === 3) {
    const directory = parts[1] as string
    if (parts[2] === 'knowledge.json') return { kind: 'knowledge', directory }
    if (parts[2] === 'selectors.json') return { kind: 'selectors', directory }
  }
  if (parts[0] === 'domains' && parts.length === 4 && parts[2] === 'trajectories' && json(parts[3]))
    return { kind: 'trajectory', directory: parts[1] as string, name: parts[3] as string }
  return { kind: 'unknown' }
}

/** A file name safe in any directory (the documented system's own sanitising of run ids). */
export const safeFileName = (id: string) => id.replace(/[^a-zA-Z0-9_.-]/g, '_').replace(/^\.+/, '_')

// --- bookkeeping in `extra` --------------------------------------------------------------------

/** A record's extra: unknown fields verbatim, plus bookkeeping when there is any. */
export function extraOf(unknown: JsonObject, bookkeeping: Bookkeeping): AgentMemoryExtra {
  const kept: Bookkeeping = {}
  for (const [k, v] of Object.entries(bookkeeping) as [keyof Bookkeeping, unknown][]) {
    const empty =
      v === undefined ||
      (Array.isArray(v) && v.length === 0) ||
      (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
    if (!empty) (kept as Record<string, unknown>)[k] = v
  }
  const extra: JsonObject = { ...unknown }
  if (Object.keys(kept).length > 0) extra[BOOKKEEPING_KEY] = kept
  return Object.keys(extra).length > 0 ? extra : null
}

export function bookkeepingOf(extra: AgentMemoryExtra | undefined): Bookkeeping {
  const b = extra?.[BOOKKEEPING_KEY]
  return b && typeof b === 'object' && !Array.isArray(b) ? (b as Bookkeeping) : {}
}

/** A record's unknown fields (its extra without the bookkeeping). */
export function unknownFieldsOf(extra: AgentMemoryExtra | undefined): JsonObject {
  if (!extra) return {}
  const { [BOOKKEEPING_KEY]: _bookkeeping, ...rest } = extra
  return rest
}

/**
 * A record's file object: its unknown fields, then the known ones Engram holds (null means "not
 * written"), minus those whose Engram value is a stand-in; dates as the file wrote them when the
 * instant is unchanged.
 */
export function writeObject(known: JsonObject, extra: AgentMemoryExtra | undefined): JsonObject {
  const b = bookkeepingOf(extra)
  const out: JsonObject = { ...unknownFieldsOf(extra) }
  const absent = new Set(b.absent ?? [])
  for (const [key, value] of Object.entries(known)) {
    if (value === null || value === undefined || absent.has(key)) continue
    const raw = b.raw?.[key]
    if (value instanceof Date) {
      out[key] = raw !== undefined && Date.parse(raw) === value.getTime() ? raw : value.toISOString()
    } else out[key] = value
  }
  return out
}

// --- reading one object's fields ---------------------------------------------------------------

const byteLength = (text: string) => new TextEncoder().encode(text).length

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

export function limitError(field: string, message: string, limit?: number | string): ValidationError {
  return new ValidationError([{ field, message, ...(limit !== undefined ? { limit } : {}) }])
}

/**
 * Reads the known fields of one object of a file, remembering which it used: the rest are its
 * unknown fields. Required fields that are missing or wrong fail the file (a ValidationError naming
 * the field and the limit); optional ones that do not fit are kept verbatim and marked absent.
 */
export class FieldReader {
  private readonly used = new Set<string>()
  private readonly kept: JsonObject = {}
  readonly absent: string[] = []
  readonly raw: Record<string, string> = {}

  constructor(
    private readonly object: JsonObject,
    /** The object's place in its file, for error fields ("steps[3]"). */
    readonly at: string,
  ) {
    if (BOOKKEEPING_KEY in object)
      throw limitError(this.field(BOOKKEEPING_KEY), `the field name ${BOOKKEEPING_KEY} is reserved by Engram`)
  }

  field(key: string): string {
    return this.at ? `${this.at}.${key}` : key
  }

  has(key: string): boolean {
    return this.object[key] !== undefined
  }

  peek(key: string): unknown {
    return this.object[key]
  }

  /** A required text; blank or missing fails, longer than max fails with the limit. */
  text(key: string, max: number): string {
    this.used.add(key)
    const v = this.object[key]
    if (typeof v !== 'string' || v.trim().length === 0)
      throw limitError(this.field(key), 'must be a non-empty text', 1)
    if (v.length > max) throw limitError(this.field(key), `must be at most ${max} characters`, max)
    return v
  }

  /** An optional text: missing → null; not a text (or empty when nonEmpty) → kept verbatim, null. */
  optionalText(key: string, max: number, nonEmpty = false): string | null {
    this.used.add(key)
    const v = this.object[key]
    if (v === undefined) return null
    if (typeof v !== 'string' || (nonEmpty && v.length === 0)) return this.keep(key, v, null)
    if (v.length > max) throw limitError(this.field(key), `must be at most ${max} characters`, max)
    return v
  }

  /** Text with a stand-in when missing or not text (the export writes back what the file had). */
  textOr(key: string, max: number, standIn: string): string {
    const v = this.optionalText(key, max)
    if (v === null) {
      if (!this.absent.includes(key)) this.absent.push(key)
      return standIn
    }
    return v
  }

  number(key: string, options: { min: number; max: number; integer?: boolean }): number {
    this.used.add(key)
    const v = this.object[key]
    if (typeof v !== 'number' || !Number.isFinite(v) || (options.integer && !Number.isInteger(v)))
      throw limitError(this.field(key), options.integer ? 'must be an integer' : 'must be a number')
    if (v < options.min) throw limitError(this.field(key), `must be at least ${options.min}`, options.min)
    if (v > options.max) throw limitError(this.field(key), `must be at most ${options.max}`, options.max)
    return v
  }

  /** A number with a stand-in when missing or out of Engram's range (kept verbatim then). */
  numberOr(key: string, options: { min: number; max: number; integer?: boolean }, standIn: number): number {
    const v = this.optionalNumber(key, options)
    if (v === null) {
      if (!this.absent.includes(key)) this.absent.push(key)
      return standIn
    }
    return v
  }

  optionalNumber(key: string, options: { min: number; max: number; integer?: boolean }): number | null {
    this.used.add(key)
    const v = this.object[key]
    if (v === undefined) return null
    const fits =
      typeof v === 'number' &&
      Number.isFinite(v) &&
      (!options.integer || Number.isInteger(v)) &&
      v >= options.min &&
      v <= options.max
    return fits ? v : this.keep(key, v, null)
  }

  boolean(key: string): boolean {
    this.used.add(key)
    const v = this.object[key]
    if (typeof v !== 'boolean') throw limitError(this.field(key), 'must be true or false')
    return v
  }

  optionalBoolean(key: string): boolean | null {
    this.used.add(key)
    const v = this.object[key]
    if (v === undefined) return null
    return typeof v === 'boolean' ? v : this.keep(key, v, null)
  }

  /** A required ISO date; another form of the same instant is remembered for the export. */
  date(key: string): Date {
    this.used.add(key)
    const v = this.object[key]
    const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN
    if (Number.isNaN(ms)) throw limitError(this.field(key), 'must be an ISO date')
    const date = new Date(ms)
    if (date.toISOString() !== v) this.raw[key] = v as string
    return date
  }

  optionalDate(key: string): Date | null {
    if (this.object[key] === undefined) {
      this.used.add(key)
      return null
    }
    const v = this.object[key]
    if (typeof v !== 'string' || Number.isNaN(Date.parse(v))) {
      this.used.add(key)
      return this.keep(key, v, null)
    }
    return this.date(key)
  }

  /** Marks a field as read elsewhere (a nested list). */
  use(key: string): unknown {
    this.used.add(key)
    return this.object[key]
  }

  /** Remembers a known field's text as written when Engram holds another form of it. */
  rawText(key: string, written: string): void {
    this.raw[key] = written
  }

  /** Marks a known field whose Engram value is a stand-in (the export leaves it out). */
  standIn(key: string): void {
    if (!this.absent.includes(key)) this.absent.push(key)
  }

  /** The fields not read, and the known ones kept verbatim, in the file's order. */
  unknown(): JsonObject {
    const out: JsonObject = {}
    for (const [k, v] of Object.entries(this.object)) if (!this.used.has(k) || k in this.kept) out[k] = v
    return out
  }

  /** The record's extra, checked against the per-record limit. */
  extra(bookkeeping: Bookkeeping, maxBytes: number): AgentMemoryExtra {
    const extra = extraOf(this.unknown(), {
      ...bookkeeping,
      absent: [...(bookkeeping.absent ?? []), ...this.absent],
      raw: { ...(bookkeeping.raw ?? {}), ...this.raw },
    })
    if (extra && byteLength(JSON.stringify(extra)) > maxBytes)
      throw limitError(
        this.field('extra'),
        `the fields Engram keeps verbatim must be at most ${maxBytes} bytes of JSON`,
        maxBytes,
      )
    return extra
  }

  private keep<T>(key: string, value: unknown, standIn: T): T {
    this.kept[key] = value
    if (!this.absent.includes(key)) this.absent.push(key)
    return standIn
  }
}
