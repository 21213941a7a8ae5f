import {
  type CompiledPattern,
  compilePrivacyPatterns,
  DEFAULT_PRIVACY_SCAN_TIME_LIMIT_MS,
  guardTexts,
  type Metadata,
  PRIVACY_MODES,
  type PrivacyMode,
  type PrivacyPattern,
  ValidationError,
} from '@engram/core'
import type { PrivacyPolicyRepository, StoredPrivacyPolicy } from '../ports/privacy-policies.ts'

export type { StoredPrivacyPolicy }

/** Applies each agent's sensitive-data policy (spec 001) to everything written for it. */
export class PrivacyService {
  // Compiled once per distinct stored pattern list, not on every write.
  private readonly compiled = new Map<string, CompiledPattern[]>()

  constructor(
    private readonly policies: PrivacyPolicyRepository,
    /** A CPU stopwatch for the scan's time limit (not the domain clock, which tests hold still). */
    private readonly scanTimer: { now: () => number; timeLimitMs: number } = {
      now: () => performance.now(),
      timeLimitMs: DEFAULT_PRIVACY_SCAN_TIME_LIMIT_MS,
    },
  ) {}

  async policy(scope: string): Promise<StoredPrivacyPolicy> {
    // An agent not stored (yet) gets the default policy, as a damaged row does.
    return (await this.policies.find(scope)) ?? readStoredPrivacyPolicy(undefined, undefined)
  }

  async setPolicy(
    scope: string,
    mode: PrivacyMode,
    patterns: PrivacyPattern[],
  ): Promise<StoredPrivacyPolicy> {
    if (!(PRIVACY_MODES as readonly string[]).includes(mode)) {
      throw new ValidationError([{ field: 'mode', message: `must be one of ${PRIVACY_MODES.join(', ')}` }])
    }
    compilePrivacyPatterns(patterns)
    await this.policies.save(scope, { mode, patterns })
    return { mode, patterns }
  }

  /**
   * Guards one write: the texts and every string inside the metadata objects, all at once, so a
   * rejection names every offending field and nothing is stored. Returns the texts and metadata
   * to store (redacted where the policy says so).
   */
  async guard(
    scope: string,
    texts: { field: string; text: string }[],
    metadata: { field: string; value: Metadata | null | undefined }[] = [],
  ): Promise<{ texts: string[]; metadata: (Metadata | null | undefined)[] }> {
    const stored = await this.policy(scope)
    if (stored.mode === 'allow')
      return { texts: texts.map((t) => t.text), metadata: metadata.map((m) => m.value) }
    const leaves: MetadataLeaf[] = []
    const copies = metadata.map((m) =>
      m.value ? (copyWithLeaves(m.value, m.field, leaves) as Metadata) : m.value,
    )
    const guarded = guardTexts(
      [...texts, ...leaves.map((l) => ({ field: fieldOf(l.path), text: l.text }))],
      { mode: stored.mode, patterns: this.compile(stored.patterns) },
      this.scanTimer,
    )
    leaves.forEach((leaf, i) => {
      leaf.container[leaf.key] = guarded[texts.length + i]
    })
    return { texts: guarded.slice(0, texts.length), metadata: copies }
  }

  private compile(patterns: PrivacyPattern[]): CompiledPattern[] {
    const key = JSON.stringify(patterns)
    let compiled = this.compiled.get(key)
    if (!compiled) {
      // A pattern stored before the RE2 engine that RE2 cannot run fails closed: the write is
      // refused, naming the policy's pattern, until an admin replaces it.
      compiled = compilePrivacyPatterns(patterns, 'privacyPolicy.patterns')
      if (this.compiled.size >= MAX_CACHED_POLICIES) this.compiled.clear()
      this.compiled.set(key, compiled)
    }
    return compiled
  }
}

/**
 * Past this the guard refuses metadata outright. Far deeper than the metadata nesting limit
 * checked after the guard; it bounds the guard's own work (field paths grow with depth), and lets
 * a request nested thousands deep end in a typed error rather than a stack overflow.
 */
export const MAX_GUARDED_METADATA_DEPTH = 1_000

/** Where a value sits: its container's path and its own key, joined into a field only when needed. */
interface MetadataPath {
  parent: MetadataPath | null
  segment: string
  field?: string
}

interface MetadataLeaf {
  path: MetadataPath
  text: string
  container: Record<string | number, unknown>
  key: string | number
}

/** The dotted field of a path ("metadata.notes.0"), memoised on each container along the way. */
function fieldOf(path: MetadataPath): string {
  const pending: MetadataPath[] = []
  let at: MetadataPath | null = path
  while (at && at.field === undefined) {
    pending.push(at)
    at = at.parent
  }
  let field = at?.field
  for (let i = pending.length - 1; i >= 0; i--) {
    const node = pending[i] as MetadataPath
    node.field = field === undefined ? node.segment : `${field}.${node.segment}`
    field = node.field
  }
  return field as string
}

/**
 * Copies a metadata value with an explicit stack rather than recursion (metadata nested thousands
 * deep must not overflow the call stack), noting where each string sits so its guarded text can be
 * put back into the copy. Strings are met in document order, the order issues are named in.
 */
function copyWithLeaves(value: unknown, field: string, leaves: MetadataLeaf[]): unknown {
  const root: Record<string, unknown> = {}
  const stack: {
    value: unknown
    path: MetadataPath
    depth: number
    container: Record<string | number, unknown>
    key: string | number
  }[] = [{ value, path: { parent: null, segment: field, field }, depth: 1, container: root, key: 'value' }]
  while (stack.length > 0) {
    const item = stack.pop() as (typeof stack)[number]
    const { value: node, path, depth, container, key } = item
    if (typeof node === 'string') {
      leaves.push({ path, text: node, container, key })
      container[key] = node
      continue
    }
    if (!node || typeof node !== 'object') {
      container[key] = node
      continue
    }
    if (depth > MAX_GUARDED_METADATA_DEPTH) {
      throw new ValidationError([
        {
          field,
          message: `must not nest deeper than ${MAX_GUARDED_METADATA_DEPTH} levels`,
          limit: MAX_GUARDED_METADATA_DEPTH,
        },
      ])
    }
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node)
    const copy = (Array.isArray(node) ? new Array(node.length) : {}) as Record<string | number, unknown>
    // Keys are created now, in their original order; values land as the stack reaches them.
    if (!Array.isArray(node)) for (const [k] of entries) copy[k] = undefined
    container[key] = copy
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i] as [string | number, unknown]
      stack.push({
        value: v,
        path: { parent: path, segment: String(k) },
        depth: depth + 1,
        container: copy,
        key: k,
      })
    }
  }
  return root.value
}

// Far more than the agents one process serves at once; past it the cache simply starts over.
const MAX_CACHED_POLICIES = 1_000

/**
 * A policy from its stored text (a mode name, the patterns as JSON), for adapters that keep it so.
 * An unknown mode reads as `redact` and unreadable patterns as none: a damaged row fails safe.
 */
export function readStoredPrivacyPolicy(
  mode: string | undefined,
  patterns: string | undefined,
): StoredPrivacyPolicy {
  const safeMode = (PRIVACY_MODES as readonly string[]).includes(mode ?? '')
    ? (mode as PrivacyMode)
    : 'redact'
  try {
    const parsed = JSON.parse(patterns ?? '[]') as PrivacyPattern[]
    return { mode: safeMode, patterns: Array.isArray(parsed) ? parsed : [] }
  } catch {
    return { mode: safeMode, patterns: [] }
  }
}
