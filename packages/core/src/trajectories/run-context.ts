import { MAX_CONTEXT_BUDGET_TOKENS } from '../context/assembler.ts'
import { ValidationError } from '../errors.ts'
import {
  type AppFactType,
  RUN_CONTEXT_SECTIONS,
  type RunContextSection,
  type TrajectoryRules,
} from './rules.ts'
import { compareSelectors, type SelectorState, selectorIsKnownGood } from './selectors.ts'

/**
 * The run context (spec 004's context injection): what an acting agent's next decision needs
 * from memory, one section per layer, each written as the documented system writes it for its
 * model (SESSION HISTORY, REFERENCE TRAJECTORY, APP KNOWLEDGE, KNOWN SELECTORS, and HINTS), then
 * trimmed to a token budget lowest priority first. Pure: the engine reads the records, this
 * formats and counts them with the configured tokenizer.
 */

/** A run session entry as SESSION HISTORY shows it (newest first in the input). */
export interface RunSessionLine {
  goal: string
  outcome: string
  success: boolean
  finalUrl: string | null
  turnsUsed: number
  durationMs: number
  endedAt: Date
}

/** A trajectory step as the REFERENCE TRAJECTORY lists it. */
export interface ReferenceStepLine {
  action: string
  selector: string | null
  value: string | null
  url: string | null
  verified: boolean | null
}

export interface ReferenceTrajectoryLines {
  goal: string
  steps: ReferenceStepLine[]
}

export interface AppFactLine {
  type: AppFactType
  key: string
  value: string
  confidence: number
  sources: number
}

export interface KnownSelectorLine {
  element: string
  selector: string
  successCount: number
}

export interface RunContextMaterial {
  /** Newest first. */
  sessions: readonly RunSessionLine[]
  reference: ReferenceTrajectoryLines | null
  /** Best first (confidence descending): the last ones go first when the budget runs short. */
  facts: readonly AppFactLine[]
  /** Best first. */
  selectors: readonly KnownSelectorLine[]
  hints: readonly string[]
}

export interface RunContextSectionReport {
  section: RunContextSection
  priority: number
  /** Tokens of `text` (0 when dropped). */
  tokens: number
  /** Tokens of the section with every available item. */
  fullTokens: number
  items: number
  availableItems: number
  included: boolean
  truncated: boolean
  text: string
}

export interface AssembledRunContext {
  /** The included sections, highest priority first, separated by a blank line. */
  text: string
  /** Exactly countTokens(text). */
  totalTokens: number
  budgetTokens: number
  /** One report per asked section, highest priority first. */
  sections: RunContextSectionReport[]
}

/** Between sections: a blank line, as the documented system's context budget joins its parts. */
export const RUN_CONTEXT_SEPARATOR = '\n\n'

// --- the sections' formats ---------------------------------------------------------------------

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()
/** What an older session keeps of its outcome on its one line. */
const ONE_LINE_OUTCOME_CHARS = 80

/** "2026-05-31 14:02" (UTC): minutes are enough to tell runs apart and cost few tokens. */
const minuteStamp = (at: Date) => at.toISOString().slice(0, 16).replace('T', ' ')

/**
 * SESSION HISTORY: the `full` most recent sessions in full (their outcome whole, and their final
 * URL on a line of its own), older ones on one line with the outcome cut at 80 characters.
 */
export function formatSessionHistory(
  sessions: readonly RunSessionLine[],
  rules: Pick<TrajectoryRules, 'sessionHistoryFull'>,
): string {
  if (sessions.length === 0) return ''
  const count = sessions.length
  const lines = [`SESSION HISTORY (${count} previous run${count === 1 ? '' : 's'} on this site):`]
  sessions.forEach((s, i) => {
    const mark = s.success ? '✓' : '✗'
    const stats = `(${s.turnsUsed} turns, ${Math.round(s.durationMs / 1_000)}s)`
    const head = `[${minuteStamp(s.endedAt)}] ${mark} "${oneLine(s.goal)}" →`
    if (i < rules.sessionHistoryFull) {
      lines.push(`${head} ${s.outcome} ${stats}`)
      if (s.finalUrl) lines.push(`  Final URL: ${s.finalUrl}`)
    } else {
      const outcome = oneLine(s.outcome)
      const cut =
        outcome.length > ONE_LINE_OUTCOME_CHARS ? `${outcome.slice(0, ONE_LINE_OUTCOME_CHARS)}…` : outcome
      lines.push(`${head} ${cut} ${stats}`)
    }
  })
  return lines.join('\n')
}

/**
 * One step in words, as the documented system describes its actions (`click <selector>`,
 * `type "<text>" into <selector>`, `navigate to <url>`...); a verb it does not know (a coding or
 * tool-using agent's) reads as the verb, its target and its value.
 */
export function describeStep(step: ReferenceStepLine): string {
  const target = step.selector ?? ''
  const value = step.value ?? ''
  switch (step.action.toLowerCase()) {
    case 'click':
      return `click ${target}`.trimEnd()
    case 'type':
    case 'fill':
      return `type "${value}" into ${target}`.trimEnd()
    case 'press':
      return target ? `press ${value} on ${target}` : `press ${value}`
    case 'scroll':
      return `scroll ${value}`.trimEnd()
    case 'navigate':
      return `navigate to ${value || step.url || ''}`.trimEnd()
    case 'wait':
      return /^\d+$/.test(value) ? `wait ${value}ms` : `wait ${value}`.trimEnd()
    default:
      return [step.action, target, value ? `"${value}"` : ''].filter(Boolean).join(' ')
  }
}

/**
 * REFERENCE TRAJECTORY: the matched run's goal and steps, each with the page it ran on and
 * whether its effect was verified. `shown` steps are listed (all by default); a trimmed list says
 * how many it left out, so the agent knows the guide goes on.
 */
export function formatReferenceTrajectory(
  reference: ReferenceTrajectoryLines | null,
  shown = reference?.steps.length ?? 0,
): string {
  if (!reference || shown <= 0) return ''
  const total = reference.steps.length
  const lines = [
    'REFERENCE TRAJECTORY — A similar task was completed before:',
    `Goal: ${oneLine(reference.goal)}`,
    `Steps (${total} total):`,
  ]
  reference.steps.slice(0, shown).forEach((step, i) => {
    const where = step.url ? ` (on ${step.url})` : ''
    lines.push(`  ${i + 1}. ${describeStep(step)}${where}${step.verified ? ' [verified]' : ''}`)
  })
  if (shown < total) lines.push(`  … ${total - shown} more step${total - shown === 1 ? '' : 's'} not shown`)
  lines.push('Use this as a guide, but adapt to the current page state.')
  return lines.join('\n')
}

/** APP KNOWLEDGE: facts grouped by type (in the order of each type's best fact), best first within. */
export function formatAppKnowledge(facts: readonly AppFactLine[]): string {
  if (facts.length === 0) return ''
  const groups = new Map<AppFactType, AppFactLine[]>()
  for (const f of facts) groups.set(f.type, [...(groups.get(f.type) ?? []), f])
  const lines = ['APP KNOWLEDGE (learned from previous runs):']
  for (const [type, group] of groups) {
    lines.push(`  ${type.toUpperCase()}:`)
    for (const f of group)
      lines.push(
        `    - ${f.key}: ${f.value} (${(f.confidence * 100).toFixed(0)}% confidence, ${f.sources} observations)`,
      )
  }
  return lines.join('\n')
}

export function formatKnownSelectors(selectors: readonly KnownSelectorLine[]): string {
  if (selectors.length === 0) return ''
  return [
    'KNOWN SELECTORS (from previous runs):',
    ...selectors.map((s) => `  - ${s.element} → ${s.selector} (used ${s.successCount}x)`),
  ].join('\n')
}

/** HINTS: one bullet per hint; a hint's own line breaks stay, indented under its bullet. */
export function formatHints(hints: readonly string[]): string {
  if (hints.length === 0) return ''
  return [
    'HINTS (from previous runs):',
    ...hints.map((h) => `  - ${h.trim().replace(/\n/g, '\n    ')}`),
  ].join('\n')
}

/**
 * The selectors KNOWN SELECTORS offers: known-good ones (worked, and not failing
 * selectorFailureLimit times in a row since), the best per element (a stable selector before a
 * volatile "@e12" reference with the same record), elements ranked by their best, at most
 * `limit` (selectorContextLimit), like the documented cache's one entry per element.
 */
export function contextSelectors<T extends SelectorState>(
  selectors: readonly T[],
  rules: Pick<TrajectoryRules, 'selectorFailureLimit'>,
  limit: number,
): T[] {
  const best = new Map<string, T>()
  for (const s of [...selectors].sort(compareSelectors)) {
    if (!selectorIsKnownGood(s, rules) || best.has(s.element)) continue
    best.set(s.element, s)
    if (best.size >= limit) break
  }
  return [...best.values()]
}

// --- assembly under the budget ------------------------------------------------------------------

interface SectionDraft {
  section: RunContextSection
  priority: number
  available: number
  /** The section with its first `shown` items; '' for none. */
  render(shown: number): string
}

function drafts(
  material: RunContextMaterial,
  rules: Pick<TrajectoryRules, 'priorities' | 'sessionHistoryFull'>,
): Record<RunContextSection, SectionDraft> {
  const p = rules.priorities
  return {
    SESSION_HISTORY: {
      section: 'SESSION_HISTORY',
      priority: p.SESSION_HISTORY,
      available: material.sessions.length,
      render: (n) => formatSessionHistory(material.sessions.slice(0, n), rules),
    },
    REFERENCE_TRAJECTORY: {
      section: 'REFERENCE_TRAJECTORY',
      priority: p.REFERENCE_TRAJECTORY,
      available: material.reference?.steps.length ?? 0,
      render: (n) => formatReferenceTrajectory(material.reference, n),
    },
    APP_KNOWLEDGE: {
      section: 'APP_KNOWLEDGE',
      priority: p.APP_KNOWLEDGE,
      available: material.facts.length,
      render: (n) => formatAppKnowledge(material.facts.slice(0, n)),
    },
    KNOWN_SELECTORS: {
      section: 'KNOWN_SELECTORS',
      priority: p.KNOWN_SELECTORS,
      available: material.selectors.length,
      render: (n) => formatKnownSelectors(material.selectors.slice(0, n)),
    },
    HINTS: {
      section: 'HINTS',
      priority: p.HINTS,
      available: material.hints.length,
      render: (n) => formatHints(material.hints.slice(0, n)),
    },
  }
}

/**
 * Assembles the run context within `budgetTokens`. Sections go highest priority first (spec 004:
 * session history 50, reference 40, knowledge 30, selectors 25, hints 20; ties in that order).
 * While the text is over the budget, items are dropped from the end of the lowest-priority
 * section still in it (its oldest session, last step, weakest fact...), and a section left with
 * no item is dropped whole; a higher section loses nothing while a lower one still has something.
 *
 * What is counted is the joined text (a tokenizer merges across the separator, so the sections'
 * own counts do not add up exactly), with a binary search over how many items the section being
 * trimmed keeps: `totalTokens` is exactly `countTokens(text)` and never above the budget.
 */
export function assembleRunContext(
  input: {
    material: RunContextMaterial
    budgetTokens: number
    /** The sections asked for (default: all). */
    sections?: readonly RunContextSection[] | null
  },
  rules: Pick<TrajectoryRules, 'priorities' | 'sessionHistoryFull'>,
  countTokens: (text: string) => number,
): AssembledRunContext {
  const { budgetTokens } = input
  if (!Number.isInteger(budgetTokens) || budgetTokens < 1 || budgetTokens > MAX_CONTEXT_BUDGET_TOKENS) {
    throw new ValidationError([
      {
        field: 'budgetTokens',
        message: `must be an integer from 1 to ${MAX_CONTEXT_BUDGET_TOKENS}`,
        limit: MAX_CONTEXT_BUDGET_TOKENS,
      },
    ])
  }
  const wanted = new Set(input.sections?.length ? input.sections : RUN_CONTEXT_SECTIONS)
  const all = drafts(input.material, rules)
  const ordered = RUN_CONTEXT_SECTIONS.filter((s) => wanted.has(s))
    .map((s) => all[s])
    .sort(
      (a, b) =>
        b.priority - a.priority ||
        RUN_CONTEXT_SECTIONS.indexOf(a.section) - RUN_CONTEXT_SECTIONS.indexOf(b.section),
    )

  // Texts are counted once each: the search asks for the same joins again.
  const counted = new Map<string, number>()
  const count = (text: string) => {
    if (text === '') return 0
    let n = counted.get(text)
    if (n === undefined) {
      n = countTokens(text)
      counted.set(text, n)
    }
    return n
  }
  const shown = ordered.map((d) => d.available)
  const fullTexts = ordered.map((d) => d.render(d.available))
  /** The text of the sections down to `upTo`, the ones above at their current sizes and `upTo` at `n`. */
  const joined = (upTo: number, n: number) =>
    ordered
      .slice(0, upTo + 1)
      .map((d, i) => d.render(i === upTo ? n : (shown[i] as number)))
      .filter((t) => t !== '')
      .join(RUN_CONTEXT_SEPARATOR)
  const last = ordered.length - 1

  // Lowest priority first: keep the most items of the lowest section that fit with everything
  // above it whole; when none of it fits, it is dropped and the next one up is trimmed.
  for (let i = last; i >= 0; i--) {
    if (count(joined(last, shown[last] as number)) <= budgetTokens) break
    let low = 0
    let high = shown[i] as number
    while (low < high) {
      const mid = Math.ceil((low + high) / 2)
      if (count(joined(i, mid)) <= budgetTokens) low = mid
      else high = mid - 1
    }
    shown[i] = low
  }

  let text = last < 0 ? '' : joined(last, shown[last] as number)
  let totalTokens = count(text)
  // The search assumes a count grows with the items kept; this guards a text for which it does not.
  while (totalTokens > budgetTokens) {
    const lowest = shown.findLastIndex((n) => n > 0)
    if (lowest < 0) break
    shown[lowest] = (shown[lowest] as number) - 1
    text = joined(last, shown[last] as number)
    totalTokens = count(text)
  }

  return {
    text,
    totalTokens,
    budgetTokens,
    sections: ordered.map((d, i) => {
      const n = shown[i] as number
      const sectionText = d.render(n)
      return {
        section: d.section,
        priority: d.priority,
        tokens: count(sectionText),
        fullTokens: count(fullTexts[i] as string),
        items: n,
        availableItems: d.available,
        included: n > 0,
        truncated: n < d.available,
        text: sectionText,
      }
    }),
  }
}
