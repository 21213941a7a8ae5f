// The retrieval changes of issue 11 the quality suite validates, and the configurations it asks
// `search` with. Every knob is a query-time option of `search` (or the ingest mode), so one ingest
// per mode serves every configuration.

/** How a conversation's turns are stored. */
export type Ingest = 'said' | 'structured'

/**
 * The ingest mode `defaults` runs with. `said` is today's ingest; switch it to `structured` when
 * the "speakers as fields" change lands as a default.
 */
export const DEFAULT_INGEST: Ingest = 'said'

/** What a configuration adds to `SearchInput` (nested as in the input: `weights.time` is `{ weights: { time } }`). */
export type SearchOverrides = { weights?: Record<string, number> } & Record<string, unknown>

export interface Configuration {
  ingest: Ingest
  input: SearchOverrides
}

/** null: leave the field out, so the server's (or the agent's) default applies. */
export type KnobValue = number | boolean | Ingest | null

export interface RetrievalChange {
  /** What `--changes` names it by and the rows call it. */
  name: string
  /** In the issue's words. */
  title: string
  /** `ingest`, a field of SearchInput (`contextTurns`) or of SearchWeightsInput (`weights.time`). */
  knob: string
  /** Set to 1 − value with the knob (the vector share takes its share from BM25). */
  complement?: string
  values: KnobValue[]
  /** The value that means "without this change": today's ranking. */
  off: KnobValue
}

/** Every change of issue 11, the values the cross-validation tries and its "off" value. Edit here. */
export const RETRIEVAL_CHANGES: readonly RetrievalChange[] = [
  { name: 'time', title: 'dates in the query', knob: 'weights.time', values: [0.25, 0.5, 1], off: 0 },
  {
    name: 'mentioned-times',
    title: 'times mentioned inside turns',
    knob: 'mentionedTimes',
    values: [true],
    off: false,
  },
  { name: 'speaker', title: 'speaker boost', knob: 'weights.speaker', values: [0.1, 0.2, 0.5], off: 0 },
  {
    name: 'speaker-fields',
    title: 'speakers as fields',
    knob: 'ingest',
    values: ['structured'],
    off: 'said',
  },
  { name: 'neighbours', title: 'dialogue neighbours', knob: 'contextTurns', values: [2, 3], off: 1 },
  // Off is today's default weight (1), not 0: the change is the weight, not dialogue context itself.
  { name: 'context', title: 'dialogue context weight', knob: 'weights.context', values: [0.5, 0.75], off: 1 },
  { name: 'episode', title: 'episode share', knob: 'weights.episode', values: [0.1, 0.2, 0.3], off: 0 },
  {
    name: 'feedback',
    title: 'pseudo-relevance feedback',
    knob: 'weights.feedback',
    values: [0.1, 0.3, 0.5],
    off: 0,
  },
  {
    name: 'cooccurrence',
    title: 'co-occurrence expansion',
    knob: 'weights.cooccurrence',
    values: [0.1, 0.2, 0.4],
    off: 0,
  },
  {
    name: 'vector',
    title: 'vector share',
    knob: 'weights.vector',
    complement: 'weights.bm25',
    values: [0.2, 0.4],
    off: 0.3,
  },
  { name: 'mmr', title: 'MMR', knob: 'mmrLambda', values: [0.5, 0.7, 1], off: null },
  // Issue 15: has an effect only where a graph was formed (bench/quality-graph.ts forms one).
  { name: 'graph', title: 'graph expansion', knob: 'weights.graph', values: [0.1, 0.25, 0.5, 1], off: 0 },
]

/** The input fields this build's schema has: `search` of SearchInput, `weights` of SearchWeightsInput. */
export interface SearchSchema {
  search: ReadonlySet<string>
  weights: ReadonlySet<string>
}

/** Null when the build has the change's knob, else why not (the field it lacks). */
export function missingKnob(change: RetrievalChange, schema: SearchSchema): string | null {
  for (const knob of [change.knob, change.complement]) {
    if (knob === undefined || knob === 'ingest') continue
    const [head, field] = knob.split('.') as [string, string | undefined]
    if (field === undefined ? !schema.search.has(head) : !schema.weights.has(field))
      return field === undefined ? `SearchInput has no ${head}` : `SearchWeightsInput has no ${field}`
  }
  return null
}

const round = (n: number) => Math.round(n * 1e6) / 1e6

/** The configuration with the change's knob at `value`, everything else as it was. */
export function withKnob(
  configuration: Configuration,
  change: RetrievalChange,
  value: KnobValue,
): Configuration {
  if (change.knob === 'ingest') return { ...configuration, ingest: value as Ingest }
  let input = setField(configuration.input, change.knob, value)
  if (change.complement)
    input = setField(input, change.complement, typeof value === 'number' ? round(1 - value) : null)
  return { ...configuration, input }
}

function setField(input: SearchOverrides, knob: string, value: KnobValue): SearchOverrides {
  const [head, field] = knob.split('.') as [string, string | undefined]
  if (field === undefined) {
    const { [head]: _dropped, ...rest } = input
    return value === null ? rest : { ...rest, [head]: value }
  }
  const { [field]: _dropped, ...weights } = input.weights ?? {}
  const next = value === null ? weights : { ...weights, [field]: value as number }
  const { weights: _old, ...rest } = input
  return Object.keys(next).length > 0 ? { ...rest, weights: next } : rest
}

/** No overrides: whatever the engine defaults to. */
export const DEFAULTS: Configuration = { ingest: DEFAULT_INGEST, input: {} }

/**
 * Today's ranking: the `said` ingest and every change this build knows at its off value (the ones
 * it does not know cannot be on). Built from every change, whatever `--changes` selects.
 */
export function beforeIssue11(schema: SearchSchema): Configuration {
  let configuration: Configuration = { ingest: 'said', input: {} }
  for (const change of RETRIEVAL_CHANGES)
    if (missingKnob(change, schema) === null) configuration = withKnob(configuration, change, change.off)
  return configuration
}

/** The same text for the same configuration whatever order its fields were set in: the cache key. */
export function configurationKey(configuration: Configuration): string {
  const sorted = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value as Record<string, unknown>)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, sorted(v)]),
        )
      : value
  return JSON.stringify(sorted(configuration))
}

/** `0.5`, `true`, `structured`, `default` (left out). */
export const formatKnobValue = (value: KnobValue): string => (value === null ? 'default' : String(value))

/** The changes `--changes a,b` names (all when not given); an unknown name is an error. */
export function selectChanges(names: string[] | undefined): RetrievalChange[] {
  if (!names) return [...RETRIEVAL_CHANGES]
  const unknown = names.filter((name) => !RETRIEVAL_CHANGES.some((c) => c.name === name))
  if (unknown.length > 0)
    throw new Error(
      `unknown change(s) ${unknown.join(', ')}; known: ${RETRIEVAL_CHANGES.map((c) => c.name).join(', ')}`,
    )
  return RETRIEVAL_CHANGES.filter((c) => names.includes(c.name))
}
