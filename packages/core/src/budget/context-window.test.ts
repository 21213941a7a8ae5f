import { describe, expect, it } from 'vitest'
import { seededRandom } from '../random.ts'
import { ROLES } from '../types.ts'
import { type ContextWindowPlan, planContextWindow, type WindowMessage } from './context-window.ts'
import { availableBudget, parseTokenBudgetConfig, type TokenBudgetConfig } from './token-budget.ts'
import { createTokenCounter, heuristicTokenCount } from './tokenizer.ts'

const o200k = createTokenCounter('o200k_base').count

// Counted here, on the texts the plan returns, never taken from the plan's own figures.
const returnedTokens = (plan: ContextWindowPlan<WindowMessage>, count: (text: string) => number) =>
  plan.full.reduce((s, m) => s + count(m.content), 0) +
  plan.compressed.reduce((s, c) => s + count(c.content), 0)

const WORDS = (
  'the export sync job upload drive proxy timeout retries ticket storage team network office ' +
  'error message step batch shared hangs again thanks sorry please share exact time result'
).split(' ')

function randomMessage(random: () => number, i: number): WindowMessage {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T
  const shape = random()
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ')
  let content: string
  if (shape < 0.4) content = words(1 + Math.floor(random() * 30))
  else if (shape < 0.8)
    content = `${words(20 + Math.floor(random() * 120))} Error: ECONNRESET at https://example.com/${i} from 10.0.${i % 255}.1\n${words(5 + Math.floor(random() * 40))}`
  else if (shape < 0.9)
    content = Array.from({ length: 40 }, (_, k) => `${k * 1013} ${i}`).join(' ') // numbers only
  else content = `${'x'.repeat(100 + Math.floor(random() * 2_000))}` // no white space at all
  return { id: `m${i}`, role: pick(ROLES), content }
}

function randomBudget(random: () => number): Partial<TokenBudgetConfig> {
  const systemPromptTokens = Math.floor(random() * 3_000)
  const responseReserveTokens = Math.floor(random() * 3_000)
  const maxContextTokens = Math.max(
    1_000,
    systemPromptTokens + responseReserveTokens + 1 + Math.floor(random() * 6_000),
  )
  return {
    maxContextTokens,
    systemPromptTokens,
    responseReserveTokens,
    fullMessageWindow: Math.floor(random() * 50),
    compressionTriggerRatio: 0.05 + random() * 0.95,
  }
}

describe('planContextWindow', () => {
  it.each([
    ['o200k_base', o200k],
    ['heuristic', heuristicTokenCount],
  ] as const)('never returns more %s tokens than it has available (seeded property test)', (_name, count) => {
    const random = seededRandom(20_260_115)
    let compressedSeen = 0
    let overBudgetSeen = 0
    for (let run = 0; run < 300; run++) {
      const messages = Array.from({ length: Math.floor(random() * 80) }, (_, i) => randomMessage(random, i))
      const budget = randomBudget(random)
      const plan = planContextWindow(messages, budget, { countTokens: count })
      const available = availableBudget(parseTokenBudgetConfig(budget))
      const returned = returnedTokens(plan, count)
      expect(plan.availableBudget).toBe(available)
      expect(returned).toBeLessThanOrEqual(available)
      expect(plan.totalTokens).toBe(returned)
      expect(plan.fullTokens + plan.compressedTokens).toBe(plan.totalTokens)
      // Every message in exactly one set, each set oldest first.
      const ids = [...plan.full, ...plan.compressed.map((c) => c.message), ...plan.dropped].map((m) => m.id)
      expect(new Set(ids).size).toBe(messages.length)
      for (const list of [plan.full, plan.compressed.map((c) => c.message), plan.dropped]) {
        const order = list.map((m) => Number(m.id.slice(1)))
        expect(order).toEqual([...order].sort((a, b) => a - b))
      }
      for (const c of plan.compressed) {
        expect(c.content).not.toBe(c.message.content)
        expect(c.tokenCount).toBe(count(c.content))
        expect(c.tokenCount).toBeLessThan(count(c.message.content))
      }
      compressedSeen += plan.compressed.length
      if (plan.overBudget) overBudgetSeen++
    }
    // The generator reaches every branch: compression happens and full windows overflow.
    expect(compressedSeen).toBeGreaterThan(50)
    expect(overBudgetSeen).toBeGreaterThan(10)
  })

  const line = (i: number, words: number) => ({
    id: `m${i}`,
    role: 'user' as const,
    content: Array.from({ length: words }, () => 'word').join(' '),
  })
  // "word word …": o200k counts one token per word; 10,000 - 5,000 - 4,000 = 1,000 available.
  const small = { maxContextTokens: 10_000, systemPromptTokens: 5_000, responseReserveTokens: 4_000 }

  it('costs messages on their text, not on a stored or client-supplied count', () => {
    const messages = [line(0, 300), line(1, 300)].map((m) => ({ ...m, tokenCount: 1 }))
    const plan = planContextWindow(
      messages,
      { ...small, compressionTriggerRatio: 0.5 },
      { countTokens: o200k },
    )
    expect(plan.originalTokens).toBe(600)
    expect(plan.underPressure).toBe(true)
  })

  it("costs each message through countMessage when given (a caller's kept counts): the same plan", () => {
    const random = seededRandom(20_261_127)
    for (let run = 0; run < 50; run++) {
      const messages = Array.from({ length: 1 + Math.floor(random() * 60) }, (_, i) =>
        randomMessage(random, i),
      )
      const budget = randomBudget(random)
      const asked: string[] = []
      const kept = planContextWindow(messages, budget, {
        countTokens: o200k,
        countMessage: (message) => {
          asked.push(message.id)
          return o200k(message.content)
        },
      })
      expect(kept).toEqual(planContextWindow(messages, budget, { countTokens: o200k }))
      // Each message costed once, through countMessage.
      expect(asked).toEqual(messages.map((m) => m.id))
    }
  })

  it('sends everything whole under the compression trigger', () => {
    const plan = planContextWindow([line(0, 300), line(1, 300)], small, { countTokens: o200k })
    expect(plan).toMatchObject({ underPressure: false, overBudget: false, totalTokens: 600 })
    expect(plan.full).toHaveLength(2)
  })

  it('shrinks a full window that alone exceeds the budget, oldest first, and says so', () => {
    // Window of 4 x 400 = 1,600 > 1,000: the two oldest of it go, 800 stays.
    const messages = [line(0, 50), line(1, 400), line(2, 400), line(3, 400), line(4, 400)]
    const plan = planContextWindow(messages, { ...small, fullMessageWindow: 4 }, { countTokens: o200k })
    expect(plan.overBudget).toBe(true)
    expect(plan.trimmedFullMessages).toBe(2)
    expect(plan.full.map((m) => m.id)).toEqual(['m3', 'm4'])
    expect(plan.totalTokens).toBeLessThanOrEqual(1_000)
    // "word word …" compresses to its first 200 characters (~41 tokens): the trimmed two and m0
    // fit compressed in the 95% band.
    expect(plan.compressed.map((c) => c.message.id)).toEqual(['m0', 'm1', 'm2'])
    expect(plan.compressed[0]?.content).toMatch(/^\[user\] word word/)
  })

  it('keeps one newest message that alone exceeds the budget only compressed', () => {
    const plan = planContextWindow(
      [line(0, 1_200)],
      { ...small, fullMessageWindow: 1 },
      { countTokens: o200k },
    )
    expect(plan).toMatchObject({ overBudget: true, trimmedFullMessages: 1, full: [] })
    expect(plan.compressed).toHaveLength(1)
    expect(plan.totalTokens).toBeLessThanOrEqual(1_000)
  })

  it('never lists a short message as compressed with its own text: it stays whole where it fits', () => {
    // Window 840; the 30-word message (149 characters: nothing to compress) does not fit whole
    // in 85% (850) but does in 95%.
    const messages = [line(0, 30), line(1, 420), line(2, 420)]
    const plan = planContextWindow(messages, { ...small, fullMessageWindow: 2 }, { countTokens: o200k })
    expect(plan.compressed).toEqual([])
    expect(plan.full.map((m) => m.id)).toEqual(['m0', 'm1', 'm2'])
    expect(plan.totalTokens).toBe(870)
    // With 900 available (855 in 95%) it is dropped, not sent uncompressed as "compressed".
    const tight = planContextWindow(
      messages,
      { ...small, maxContextTokens: 9_900, fullMessageWindow: 2 },
      {
        countTokens: o200k,
      },
    )
    expect(tight.dropped.map((m) => m.id)).toEqual(['m0'])
  })
})
