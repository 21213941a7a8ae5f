import { describe, expect, it } from 'vitest'
import { heuristicTokenCount } from '../budget/tokenizer.ts'
import { SUMMARY_STRATEGIES } from './summary.ts'
import {
  extractiveSummaryStep,
  HIERARCHY_CHUNK,
  shapeSummary,
  writeOfflineSummary,
} from './summary-shapes.ts'

const TURNS = Array.from({ length: 95 }, (_, i) => ({
  speaker: i % 2 ? 'dana' : 'assistant',
  content: `Turn ${i}: the ${['garden shed', 'Lisbon move', 'Acme launch', 'peanut allergy'][i % 4]} comes up again on day ${i}.`,
}))
const options = { maxTokens: 120, countTokens: heuristicTokenCount }

describe('offline summaries in the strategies’ shapes', () => {
  it('runs the steps one at a time with `between` before each but the first, and writes the same text', async () => {
    for (const strategy of SUMMARY_STRATEGIES) {
      // The steps the shape takes with the extractive step, counted.
      let steps = 0
      const extractive = extractiveSummaryStep(heuristicTokenCount)
      await shapeSummary(TURNS, { ...options, strategy }, (turns, maxTokens) => {
        steps++
        return extractive(turns, maxTokens)
      })
      let running = 0
      let overlapped = false
      let betweens = 0
      const text = await writeOfflineSummary(TURNS, {
        ...options,
        strategy,
        between: async () => {
          betweens++
          running++
          if (running > 1) overlapped = true
          await new Promise((resolve) => setImmediate(resolve))
          running--
        },
      })
      expect(text).toBe(await writeOfflineSummary(TURNS, { ...options, strategy }))
      expect(overlapped).toBe(false)
      expect(betweens).toBe(steps - 1)
    }
  })

  it('summarises a long history hierarchically: chunks of ten, then summaries of the summaries', async () => {
    const seen: number[] = []
    await shapeSummary(TURNS, { ...options, strategy: 'hierarchical' }, async (turns) => {
      seen.push(turns.length)
      return 'a summary long enough to need another level '.repeat(8)
    })
    // Ten chunks (95 turns), then one level up over their ten summaries.
    expect(seen.slice(0, 10)).toEqual([...Array(9).fill(HIERARCHY_CHUNK), 5])
    expect(seen.length).toBeGreaterThan(10)
  })
})
