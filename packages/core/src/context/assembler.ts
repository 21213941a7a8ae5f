import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'

/** Spec 003's context sections, highest priority first: lower ones are trimmed first. */
export const CONTEXT_SECTIONS = [
  'user_overrides',
  'profile',
  'working_memory',
  'summaries',
  'relationships',
  'relevant_memories',
  'knowledge',
  // Issue 17: the agent's shared memory pools' hits for the query (empty for an agent in no pool).
  'pools',
  'conversation',
] as const
export type ContextSectionName = (typeof CONTEXT_SECTIONS)[number]

export const CONTEXT_SECTION_TITLES: Readonly<Record<ContextSectionName, string>> = Object.freeze({
  user_overrides: 'User overrides',
  profile: 'User profile',
  working_memory: 'Working memory',
  summaries: 'Conversation summaries',
  relationships: 'Key relationships',
  relevant_memories: 'Relevant memories',
  knowledge: 'Knowledge',
  pools: 'Shared knowledge',
  conversation: 'Current conversation',
})

/**
 * Per-section token budgets (spec 003's defaults and ranges where it gives them). User overrides
 * have none: spec 003 always includes them.
 */
export const ContextBudgetsSchema = z.object({
  profile: z.number().int().min(100).max(50_000).default(2_000),
  working_memory: z.number().int().min(50).max(10_000).default(500),
  summaries: z.number().int().min(50).max(10_000).default(1_000),
  relationships: z.number().int().min(50).max(5_000).default(300),
  relevant_memories: z.number().int().min(50).max(20_000).default(1_000),
  knowledge: z.number().int().min(50).max(10_000).default(500),
  // As much as the agent's own knowledge: what its pools share is knowledge it did not learn itself.
  pools: z.number().int().min(50).max(10_000).default(500),
  conversation: z.number().int().min(0).max(200_000).default(2_000),
})
export type ContextBudgets = z.infer<typeof ContextBudgetsSchema>
export const DEFAULT_CONTEXT_BUDGETS: ContextBudgets = ContextBudgetsSchema.parse({})

export const DEFAULT_CONTEXT_BUDGET_TOKENS = 8_000
export const MAX_CONTEXT_BUDGET_TOKENS = 200_000
const ContextBudgetTokensSchema = z.number().int().min(1).max(MAX_CONTEXT_BUDGET_TOKENS)

// Spec 001's injection block.
const CONTEXT_OPEN = '<memory_context>\nHere are relevant memories from past conversations:\n'
const CONTEXT_CLOSE = '</memory_context>'

export interface ContextItem {
  id: string
  text: string
}

export interface ContextSectionInput {
  name: ContextSectionName
  /** In the order to include them: when the budget runs out, the last ones are left out. */
  items: ContextItem[]
  /** This section's budget; absent or null: `budgets[name]`, else the default. */
  budgetTokens?: number | null
}

export interface ContextSectionReport {
  name: ContextSectionName
  title: string
  /** null for user overrides, which have no budget. */
  budgetTokens: number | null
  /** The section's own tokens, heading included. */
  usedTokens: number
  included: string[]
  omitted: string[]
}

export interface AssembledContext {
  text: string
  /** Exactly countTokens(text). */
  totalTokens: number
  budgetTokens: number
  sections: ContextSectionReport[]
}

interface Entry {
  id: string
  line: string
  included: boolean
}

interface Section {
  name: ContextSectionName
  budget: number | null
  entries: Entry[]
}

// One memory is one list line: a line break inside it would end the item early.
const asLine = (text: string) => `- ${text.replace(/\s*[\r\n]+\s*/g, ' ').trim()}`
// A blank item would cost tokens and say nothing: it is left out.
const BLANK_LINE = asLine('')
const heading = (name: ContextSectionName) => `## ${CONTEXT_SECTION_TITLES[name]}`

function sectionText(section: Section): string {
  const lines = section.entries.filter((e) => e.included).map((e) => `${e.line}\n`)
  return lines.length === 0 ? '' : `${heading(section.name)}\n${lines.join('')}`
}

function render(sections: readonly Section[]): string {
  const body = sections.map(sectionText).join('')
  return body === '' ? '' : `${CONTEXT_OPEN}${body}${CONTEXT_CLOSE}`
}

function resolveSections(
  input: readonly ContextSectionInput[],
  budgets: Partial<ContextBudgets> | undefined,
): Section[] {
  const configured = parseWith(ContextBudgetsSchema, budgets, 'budgets')
  const byName = new Map<ContextSectionName, Section>()
  input.forEach((section, index) => {
    if (!CONTEXT_SECTIONS.includes(section.name)) {
      throw new ValidationError([
        { field: `sections.${index}.name`, message: `must be one of ${CONTEXT_SECTIONS.join(', ')}` },
      ])
    }
    if (byName.has(section.name)) {
      throw new ValidationError([
        { field: `sections.${index}.name`, message: `${section.name} appears twice` },
      ])
    }
    let budget: number | null = null
    if (section.name !== 'user_overrides') {
      budget =
        section.budgetTokens == null
          ? configured[section.name]
          : parseWith(
              ContextBudgetsSchema.shape[section.name],
              section.budgetTokens,
              `sections.${index}.budgetTokens`,
            )
    }
    const entries = section.items.map((item) => ({ id: item.id, line: asLine(item.text), included: false }))
    byName.set(section.name, { name: section.name, budget, entries })
  })
  return CONTEXT_SECTIONS.flatMap((name) => byName.get(name) ?? [])
}

/** Leaves out the last included item of a section; false when it has none. */
function dropLast(section: Section): boolean {
  const last = section.entries.findLast((e) => e.included)
  if (last) last.included = false
  return last !== undefined
}

/**
 * Spec 003's context assembly in spec 001's `<memory_context>` block. Sections go in priority
 * order; each item is included when it fits both its section's budget (heading included) and what
 * is left of the total (the block's wrapper included), and is otherwise left out whole while later,
 * smaller items still get their chance. So when the total runs short, the lowest-priority sections
 * lose items first. User overrides are always included: they are the only thing that can take
 * the text past `budgetTokens`.
 *
 * Items are costed line by line, each counted once. A tokenizer may count a joined text
 * differently from its pieces, so the final text is counted again, and while a section or the
 * total is over, the last item of the lowest-priority section is left out: `totalTokens` is
 * always exactly `countTokens(text)`.
 */
export function assembleContext(
  input: { budgetTokens: number; sections: ContextSectionInput[]; budgets?: Partial<ContextBudgets> },
  countTokens: (text: string) => number,
): AssembledContext {
  const budgetTokens = parseWith(ContextBudgetTokensSchema, input.budgetTokens, 'budgetTokens')
  const sections = resolveSections(input.sections, input.budgets)

  const wrapperTokens = countTokens(CONTEXT_OPEN) + countTokens(CONTEXT_CLOSE)
  let totalUsed = 0
  let anyIncluded = false
  for (const section of sections) {
    const headingTokens = countTokens(`${heading(section.name)}\n`)
    let sectionUsed = 0
    let sectionStarted = false
    for (const entry of section.entries) {
      if (entry.line === BLANK_LINE) continue
      const cost = (sectionStarted ? 0 : headingTokens) + countTokens(`${entry.line}\n`)
      const total = totalUsed + (anyIncluded ? 0 : wrapperTokens) + cost
      const fits = section.budget === null || (sectionUsed + cost <= section.budget && total <= budgetTokens)
      if (!fits) continue
      entry.included = true
      sectionUsed += cost
      sectionStarted = true
      totalUsed = total
      anyIncluded = true
    }
  }

  const usedTokens = new Map<Section, number>()
  for (const section of sections) {
    let used = countTokens(sectionText(section))
    while (section.budget !== null && used > section.budget && dropLast(section)) {
      used = countTokens(sectionText(section))
    }
    usedTokens.set(section, used)
  }

  let text = render(sections)
  let totalTokens = countTokens(text)
  const trimOrder = sections.filter((s) => s.budget !== null).reverse()
  while (totalTokens > budgetTokens) {
    // find() stops at the first section that had an item to leave out, and has left it out.
    const section = trimOrder.find((s) => dropLast(s))
    if (!section) break
    usedTokens.set(section, countTokens(sectionText(section)))
    text = render(sections)
    totalTokens = countTokens(text)
  }

  return {
    text,
    totalTokens,
    budgetTokens,
    sections: sections.map((section) => ({
      name: section.name,
      title: CONTEXT_SECTION_TITLES[section.name],
      budgetTokens: section.budget,
      usedTokens: usedTokens.get(section) ?? 0,
      included: section.entries.filter((e) => e.included).map((e) => e.id),
      omitted: section.entries.filter((e) => !e.included).map((e) => e.id),
    })),
  }
}
