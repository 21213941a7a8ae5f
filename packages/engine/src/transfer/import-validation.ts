import {
  ContextBudgetsSchema,
  compilePrivacyPatterns,
  DEFAULT_OPTIMIZER_PARAMETERS,
  type Limits,
  OptimizerParametersSchema,
  parseMemorySettings,
  speakerOf,
  type TokenCounter,
  ValidationError,
  validationErrorFromZod,
} from '@engram/core'
import { PARAMETER_KEYS } from '../parameters/parameter-store.ts'
import type { StoredMemorySettings } from '../ports/agent-archive.ts'
import type { TransferPrivacy, TransferPrivacyPolicy } from './collaborators.ts'
import { type ParsedDocument, VECTOR_KINDS, type VectorKind } from './document.ts'
import { assertTrajectoryMemory, trajectoryMemoryTexts } from './trajectory-document.ts'

// The checks an import makes before it writes anything: every refusal is a ValidationError naming
// the document's field, and none of them touches the store, so a refused document leaves nothing.

/** Refs unique and resolvable, contents within the limits, vectors of a real owner and their size. */
export function assertReferences(doc: ParsedDocument, limits: Limits): void {
  assertGraphReferences(doc)
  assertTrajectoryMemory(doc.trajectoryMemory)
  const refs = new Set<string>()
  for (const [i, m] of doc.memories.entries()) {
    if (refs.has(m.ref))
      throw new ValidationError([{ field: `document.memories.${i}.ref`, message: `duplicate ref ${m.ref}` }])
    refs.add(m.ref)
  }
  for (const [i, m] of doc.memories.entries()) {
    if (m.supersededBy && !refs.has(m.supersededBy))
      throw new ValidationError([
        {
          field: `document.memories.${i}.supersededBy`,
          message: `names no memory of this document (${m.supersededBy})`,
        },
      ])
  }
  const facts = new Set<string>()
  for (const [i, k] of doc.knowledge.entries()) {
    // One row per category and key: a second would overwrite the first and be counted twice.
    if (facts.has(`${k.category}/${k.key}`))
      throw new ValidationError([
        { field: `document.knowledge.${i}.key`, message: `duplicate ${k.category}/${k.key}` },
      ])
    facts.add(`${k.category}/${k.key}`)
  }
  const conversations = new Set<string>()
  for (const [i, s] of doc.sessions.entries()) {
    if (conversations.has(s.conversationId))
      throw new ValidationError([
        { field: `document.sessions.${i}.conversationId`, message: `duplicate ${s.conversationId}` },
      ])
    conversations.add(s.conversationId)
    for (const [j, m] of s.messages.entries()) {
      if (m.content.length > limits.maxContentChars)
        throw new ValidationError([
          {
            field: `document.sessions.${i}.messages.${j}.content`,
            message: `must be at most ${limits.maxContentChars} characters`,
            limit: limits.maxContentChars,
          },
        ])
    }
  }
  const messages = new Set<string>()
  for (const s of doc.sessions)
    for (const j of s.messages.keys()) messages.add(`${s.conversationId}#${j + 1}`)
  const owners = { memory: refs, message: messages, knowledge: facts }
  const seen = new Set<string>()
  for (const [i, v] of doc.vectors.entries()) {
    const field = `document.vectors.${i}`
    const colon = v.owner.indexOf(':')
    const kind = v.owner.slice(0, colon) as VectorKind
    const ref = v.owner.slice(colon + 1)
    // Every stored vector must be one a delete of its owner removes: a known kind, a real owner.
    if (colon < 0 || !VECTOR_KINDS.includes(kind))
      throw new ValidationError([
        {
          field: `${field}.owner`,
          message: `"${v.owner}" must be kind:ref with kind one of ${VECTOR_KINDS.join(', ')}`,
        },
      ])
    if (!owners[kind].has(ref))
      throw new ValidationError([
        { field: `${field}.owner`, message: `"${v.owner}" names no ${kind} of this document` },
      ])
    if (seen.has(v.owner))
      throw new ValidationError([{ field: `${field}.owner`, message: `duplicate vector for ${v.owner}` }])
    seen.add(v.owner)
    const bytes = Buffer.from(v.vector, 'base64').byteLength
    if (bytes !== v.dimensions * 4)
      throw new ValidationError([
        {
          field: `${field}.vector`,
          message: `holds ${bytes} bytes, not ${v.dimensions} dimensions × 4`,
          limit: v.dimensions * 4,
        },
      ])
  }
}

/**
 * The document's privacy policy, checked like setPrivacyPolicy. Only an admin may change an
 * agent's policy, so an agent key importing a different one is refused rather than obeyed.
 */
export async function documentPolicy(
  privacy: TransferPrivacy,
  scope: string,
  doc: ParsedDocument,
  admin: boolean,
): Promise<TransferPrivacyPolicy | undefined> {
  if (!doc.privacyPolicy) return undefined
  const policy = { mode: doc.privacyPolicy.mode, patterns: doc.privacyPolicy.patterns }
  compilePrivacyPatterns(policy.patterns, 'document.privacyPolicy.patterns')
  if (admin) return policy
  const current = await privacy.policy(scope)
  if (JSON.stringify(current) !== JSON.stringify(policy))
    throw new ValidationError([
      {
        field: 'document.privacyPolicy',
        message: "differs from the agent's policy; only an admin key may import a privacy policy",
      },
    ])
  return undefined
}

/** The document's settings, validated as updateMemorySettings validates them. */
export function documentSettings(doc: ParsedDocument): StoredMemorySettings {
  const settings = doc.settings?.settings ?? {}
  const contextBudgets = doc.settings?.contextBudgets ?? {}
  try {
    parseMemorySettings(settings)
  } catch (error) {
    if (error instanceof ValidationError)
      throw new ValidationError(
        error.issues.map((issue) => ({ ...issue, field: `document.settings.${issue.field}` })),
      )
    throw error
  }
  const budgets = ContextBudgetsSchema.safeParse(contextBudgets)
  if (!budgets.success) throw validationErrorFromZod(budgets.error, 'document.settings.contextBudgets')
  return { settings, contextBudgets }
}

/** Learned parameters within the optimizer's ranges; lifetime totals whole and not negative. */
export function assertParameters(doc: ParsedDocument): void {
  const given = doc.parameters ?? []
  const keys = new Set<string>()
  for (const [i, p] of given.entries()) {
    if (keys.has(p.key))
      throw new ValidationError([{ field: `document.parameters.${i}.key`, message: `duplicate ${p.key}` }])
    keys.add(p.key)
    if (!(PARAMETER_KEYS as readonly string[]).includes(p.key) && !(p.value >= 0))
      throw new ValidationError([
        { field: `document.parameters.${i}.value`, message: 'must not be negative', limit: 0 },
      ])
  }
  const candidate: Record<string, number> = { ...DEFAULT_OPTIMIZER_PARAMETERS }
  for (const p of given) if ((PARAMETER_KEYS as readonly string[]).includes(p.key)) candidate[p.key] = p.value
  const parsed = OptimizerParametersSchema.safeParse(candidate)
  if (!parsed.success) throw validationErrorFromZod(parsed.error, 'document.parameters')
}

/**
 * Puts every text and metadata object of the document through the agent's privacy policy, as
 * the single writes do: a rejection names the field; redactions are made in the document (token
 * counts follow). Returns the vector owners (kind:ref) whose text changed, and the graph entities
 * (`entity:ref`) whose names did (their name embeddings are not kept).
 */
export async function guardDocument(
  privacy: TransferPrivacy,
  tokenCounter: TokenCounter,
  scope: string,
  doc: ParsedDocument,
): Promise<Set<string>> {
  const texts: { field: string; text: string; owner?: string; set: (text: string) => void }[] = []
  const metadata: {
    field: string
    value: Record<string, unknown>
    set: (value: Record<string, unknown>) => void
  }[] = []
  for (const [i, m] of doc.memories.entries()) {
    const at = `document.memories.${i}`
    texts.push({
      field: `${at}.content`,
      text: m.content,
      owner: `memory:${m.ref}`,
      set: (t) => (m.content = t),
    })
    for (const [j, tag] of m.tags.entries())
      texts.push({ field: `${at}.tags.${j}`, text: tag, set: (t) => (m.tags[j] = t) })
    metadata.push({ field: `${at}.metadata`, value: m.metadata, set: (v) => (m.metadata = v) })
  }
  for (const [i, k] of doc.knowledge.entries()) {
    const owner = `knowledge:${k.category}/${k.key}`
    texts.push({ field: `document.knowledge.${i}.key`, text: k.key, owner, set: (t) => (k.key = t) })
    texts.push({ field: `document.knowledge.${i}.value`, text: k.value, owner, set: (t) => (k.value = t) })
  }
  for (const [i, s] of doc.sessions.entries()) {
    for (const [j, m] of s.messages.entries()) {
      const at = `document.sessions.${i}.messages.${j}`
      texts.push({
        field: `${at}.content`,
        text: m.content,
        owner: `message:${s.conversationId}#${j + 1}`,
        set: (t) => {
          m.content = t
          m.tokenCount = tokenCounter.count(t)
        },
      })
      metadata.push({ field: `${at}.metadata`, value: m.metadata, set: (v) => (m.metadata = v) })
      const speaker = m.speaker
      if (speaker != null) texts.push({ field: `${at}.speaker`, text: speaker, set: (t) => (m.speaker = t) })
      const entry = m.entry
      if (!entry) continue
      texts.push({
        field: `${at}.entry.content`,
        text: entry.content,
        set: (t) => {
          entry.content = t
          entry.tokenCount = tokenCounter.count(t)
        },
      })
      metadata.push({
        field: `${at}.entry.metadata`,
        value: entry.metadata,
        set: (v) => (entry.metadata = v),
      })
    }
  }
  // The graph's words came from the same conversations: names, aliases, summaries, reasons.
  for (const [i, e] of (doc.graph?.entities ?? []).entries()) {
    const at = `document.graph.entities.${i}`
    const owner = `entity:${e.ref}`
    texts.push({ field: `${at}.name`, text: e.name, owner, set: (t) => (e.name = t) })
    for (const [j, alias] of e.aliases.entries())
      texts.push({ field: `${at}.aliases.${j}`, text: alias, owner, set: (t) => (e.aliases[j] = t) })
    const summary = e.summary
    if (summary != null) texts.push({ field: `${at}.summary`, text: summary, set: (t) => (e.summary = t) })
  }
  for (const [i, r] of (doc.graph?.relationships ?? []).entries()) {
    const reason = r.retiredReason
    if (reason != null)
      texts.push({
        field: `document.graph.relationships.${i}.retiredReason`,
        text: reason,
        set: (t) => (r.retiredReason = t),
      })
  }
  // Trajectory memory's goals, outcomes, typed values, facts and hints are the agent's words too.
  texts.push(...trajectoryMemoryTexts(doc.trajectoryMemory))
  const guarded = await privacy.guard(scope, texts, metadata)
  const redacted = new Set<string>()
  for (const [i, t] of texts.entries()) {
    const safe = guarded.texts[i] as string
    if (safe === t.text) continue
    t.set(safe)
    if (t.owner) redacted.add(t.owner)
  }
  for (const [i, m] of metadata.entries()) m.set((guarded.metadata[i] ?? {}) as Record<string, unknown>)
  return redacted
}

/**
 * Each message's speaker as a write would store it, once the document is guarded. A speaker the
 * document gives is checked like addMessage's (a ValidationError naming it). A document from
 * before speakers has none: they are taken from the metadata, and a value a write would refuse
 * is left out rather than refusing a backup that was valid when it was made.
 */
export function settleSpeakers(doc: ParsedDocument): void {
  for (const [i, s] of doc.sessions.entries())
    for (const [j, m] of s.messages.entries()) {
      if (m.speaker === undefined) {
        const derived = speakerOf({ metadata: m.metadata })
        m.speaker = derived.issue ? null : derived.speaker
      } else if (m.speaker !== null) {
        const given = speakerOf({ speaker: m.speaker }, `document.sessions.${i}.messages.${j}`)
        if (given.issue) throw new ValidationError([given.issue])
        m.speaker = given.speaker
      }
    }
}

/**
 * The graph's refs: unique, each relationship between two entities of the document, each piece of
 * evidence of exactly one entity or relationship and from a memory or a message. A source the
 * document does not hold (a document cut down by hand) is dropped when written, not refused.
 */
function assertGraphReferences(doc: ParsedDocument): void {
  const graph = doc.graph
  if (!graph) return
  const refused = (field: string, message: string) =>
    new ValidationError([{ field: `document.graph.${field}`, message }])
  const entities = new Set<string>()
  for (const [i, e] of graph.entities.entries()) {
    if (entities.has(e.ref)) throw refused(`entities.${i}.ref`, `duplicate ref ${e.ref}`)
    entities.add(e.ref)
  }
  const relationships = new Set<string>()
  for (const [i, r] of graph.relationships.entries()) {
    if (relationships.has(r.ref)) throw refused(`relationships.${i}.ref`, `duplicate ref ${r.ref}`)
    relationships.add(r.ref)
    for (const end of ['source', 'target'] as const)
      if (!entities.has(r[end]))
        throw refused(`relationships.${i}.${end}`, `names no entity of this document (${r[end]})`)
  }
  for (const [i, r] of graph.relationships.entries())
    if (r.supersededBy != null && !relationships.has(r.supersededBy))
      throw refused(
        `relationships.${i}.supersededBy`,
        `names no relationship of this document (${r.supersededBy})`,
      )
  for (const [i, ev] of graph.evidence.entries()) {
    if ((ev.entity == null) === (ev.relationship == null))
      throw refused(`evidence.${i}`, 'must name exactly one entity or relationship')
    if (ev.entity != null && !entities.has(ev.entity))
      throw refused(`evidence.${i}.entity`, `names no entity of this document (${ev.entity})`)
    if (ev.relationship != null && !relationships.has(ev.relationship))
      throw refused(
        `evidence.${i}.relationship`,
        `names no relationship of this document (${ev.relationship})`,
      )
    if (ev.memory == null && ev.message == null)
      throw refused(`evidence.${i}`, 'must name a memory or a message')
  }
}
