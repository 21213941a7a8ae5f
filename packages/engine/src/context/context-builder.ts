import {
  type BuildContextPlan,
  type BuiltMessage,
  buildContextPlan,
  builtMemoryContent,
  type ContextBuilderBudget,
  type ContextBuilderRules,
  type ContextBuilderWeights,
  contextBuilderBudget,
  fitMemories,
  overflowSummaryTokens,
  PREVIOUS_CONTEXT_SUMMARY_PREFIX,
  type SummaryTurn,
  type TokenCounter,
  ValidationError,
} from '@engram/core'
import { MAX_QUERY_CHARS } from '../search/search-request.ts'

/** What the builder asks search for: spec 002's strategy 4 over memories and stored turns. */
export interface BuilderSearchOptions {
  scopes: ('MEMORIES' | 'MESSAGES')[]
  strategy: 'WEIGHTED'
  limit: number
  weights: ContextBuilderWeights
  memoryFilter?: { userId?: string | null }
  track: false
}

/** A hit as the builder reads it: a MESSAGES hit carries its turn's role and speaker. */
export interface BuilderSearchHit {
  scope: string
  id: string
  text: string
  message?: { role: string; speaker: string | null }
}

export interface BuilderSearch {
  search(agentId: string, query: string, options: BuilderSearchOptions): Promise<BuilderSearchHit[]>
}

/** Writes the overflow summary: the agent's model when one is configured, the offline summary otherwise. */
export interface BuilderSummaries {
  write(agentId: string, turns: readonly SummaryTurn[], maxTokens: number): Promise<{ text: string }>
}

export interface ContextBuilderDeps {
  search: BuilderSearch
  summaries: BuilderSummaries
  tokenCounter: TokenCounter
  rules: ContextBuilderRules
  /** The search's own ceiling on hits (limits.maxSearchLimit): candidateLimit may not pass it. */
  maxCandidates: number
  /** Instructions and input are held to a message's size (limits.maxContentChars). */
  maxContentChars: number
}

export interface BuildContextRequest {
  /** The request's buildContext option, checked here (fields named buildContext.*). */
  options: unknown
  /** memoryContext's query: the input when the option names none. */
  query?: string | null
  userId?: string | null
}

export interface BuiltContext {
  messages: BuiltMessage[]
  budget: ContextBuilderBudget
  /** Every message's tokens: instructions, memories, the summary and the input. */
  tokenCount: number
  memories: {
    /** Ids (memory:12, message:40) shown, in rank order. */
    included: string[]
    /** Ids that did not fit, in rank order. */
    overflowed: string[]
    /** The overflowed ids the "[Previous context summary]" message covers (none when it did not fit). */
    summarized: string[]
  }
}

interface Ranked {
  id: string
  kind: 'memory' | 'turn'
  role: BuiltMessage['role']
  /** The message's content (a memory with its "[Memory] " mark). */
  content: string
  tokens: number
  /** What the summariser is given for it: who said it and what, unmarked. */
  turn: SummaryTurn
}

/**
 * Spec 002's ContextBuilder: [instructions] + the agent's memories and stored turns ranked by
 * strategy 4 (recency, similarity, importance) while they fit 70% of what the window's reserves
 * leave, then "[Previous context summary]: …" for those that did not when it fits, then the input.
 * Spec 000's budget manager (contextWindow) and spec 003's sections are unchanged beside it.
 */
export class ContextBuilder {
  constructor(private readonly deps: ContextBuilderDeps) {}

  /** The request's options checked against the rules and limits (fields named buildContext.*). */
  check(request: BuildContextRequest): BuildContextPlan & { input: string } {
    const plan = buildContextPlan(this.deps.rules, request.options)
    const input = plan.currentInput ?? (request.query?.trim() ? request.query : null)
    if (input === null) {
      throw new ValidationError([
        { field: 'buildContext.currentInput', message: 'is required when query is not given' },
      ])
    }
    for (const [field, text] of [
      ['instructions', plan.instructions],
      ['currentInput', plan.currentInput],
    ] as const) {
      if (text !== null && text.length > this.deps.maxContentChars)
        throw new ValidationError([
          {
            field: `buildContext.${field}`,
            message: `must be at most ${this.deps.maxContentChars} characters`,
            limit: this.deps.maxContentChars,
          },
        ])
    }
    if (plan.candidateLimit > this.deps.maxCandidates) {
      throw new ValidationError([
        {
          field: 'buildContext.candidateLimit',
          message: `must be at most ${this.deps.maxCandidates} (the search's limit)`,
          limit: this.deps.maxCandidates,
        },
      ])
    }
    return { ...plan, input }
  }

  async build(agentId: string, request: BuildContextRequest): Promise<BuiltContext> {
    const { rules, tokenCounter } = this.deps
    const plan = this.check(request)
    const input = plan.input
    const count = (text: string) => tokenCounter.count(text)
    const instructionTokens = plan.instructions === null ? 0 : count(plan.instructions)
    const budget = contextBuilderBudget(rules, {
      contextWindow: plan.contextWindow,
      toolCount: plan.toolCount,
      instructionTokens,
      inputTokens: count(input),
    })

    const ranked = budget.memory > 0 ? await this.rank(agentId, input, plan, request.userId) : []
    const fit = fitMemories(ranked, budget.memory)
    const byId = new Map(ranked.map((r) => [r.id, r]))
    const messages: BuiltMessage[] = []
    if (plan.instructions !== null)
      messages.push({
        role: 'system',
        content: plan.instructions,
        kind: 'instructions',
        sourceId: null,
        tokenCount: instructionTokens,
      })
    for (const id of fit.included) {
      const r = byId.get(id) as Ranked
      messages.push({ role: r.role, content: r.content, kind: r.kind, sourceId: r.id, tokenCount: r.tokens })
    }
    let summarized: string[] = []
    const summary = await this.summarize(agentId, fit, byId, budget.memory)
    if (summary) {
      messages.push(summary)
      summarized = fit.overflowed
    }
    messages.push({ role: 'user', content: input, kind: 'input', sourceId: null, tokenCount: budget.input })
    return {
      messages,
      budget,
      tokenCount: messages.reduce((sum, m) => sum + m.tokenCount, 0),
      memories: { included: fit.included, overflowed: fit.overflowed, summarized },
    }
  }

  /** Strategy 4 through the engine's search: candidates 3× the limit from each list, merged and weighted. */
  private async rank(
    agentId: string,
    input: string,
    plan: { candidateLimit: number; weights: ContextBuilderWeights },
    userId: string | null | undefined,
  ): Promise<Ranked[]> {
    // The search takes a query of MAX_QUERY_CHARS: a longer input is searched by its end, where
    // the question of a long paste usually is.
    const query = input.length > MAX_QUERY_CHARS ? input.slice(-MAX_QUERY_CHARS) : input
    const hits = await this.deps.search.search(agentId, query, {
      scopes: ['MEMORIES', 'MESSAGES'],
      strategy: 'WEIGHTED',
      limit: plan.candidateLimit,
      weights: plan.weights,
      memoryFilter: { userId },
      // Access is counted once, by memoryContext, for what it shows.
      track: false,
    })
    return hits.map((hit) => {
      const memory = hit.scope === 'MEMORIES'
      const shown = builtMemoryContent(
        memory ? { kind: 'memory' } : { kind: 'turn', role: hit.message?.role ?? 'user' },
        hit.text,
      )
      return {
        id: `${memory ? 'memory' : 'message'}:${hit.id}`,
        kind: memory ? 'memory' : 'turn',
        role: shown.role,
        content: shown.content,
        tokens: this.deps.tokenCounter.count(shown.content),
        turn: {
          speaker: memory ? 'memory' : (hit.message?.speaker ?? hit.message?.role.toLowerCase() ?? 'user'),
          content: hit.text,
        },
      }
    })
  }

  /** The overflow as one "[Previous context summary]: …" message, when one fits what memory has left. */
  private async summarize(
    agentId: string,
    fit: ReturnType<typeof fitMemories>,
    byId: Map<string, Ranked>,
    memoryBudget: number,
  ): Promise<BuiltMessage | null> {
    const count = (text: string) => this.deps.tokenCounter.count(text)
    const maxTokens = overflowSummaryTokens(
      this.deps.rules,
      fit,
      memoryBudget,
      count(PREVIOUS_CONTEXT_SUMMARY_PREFIX),
    )
    if (maxTokens === 0) return null
    const turns = fit.overflowed.map((id) => (byId.get(id) as Ranked).turn)
    const { text } = await this.deps.summaries.write(agentId, turns, maxTokens)
    if (!text.trim()) return null
    const content = `${PREVIOUS_CONTEXT_SUMMARY_PREFIX}${text}`
    const tokens = count(content)
    // Counted whole, the prefix and the text may merge differently than apart: checked, never assumed.
    if (fit.usedTokens + tokens > memoryBudget) return null
    return { role: 'system', content, kind: 'summary', sourceId: null, tokenCount: tokens }
  }
}
