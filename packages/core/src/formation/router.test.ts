import { describe, expect, it } from 'vitest'
import labelled from './fixtures/labelled-turns.json' with { type: 'json' }
import { classifyTurn } from './router.ts'

interface LabelledTurn {
  id: string
  speaker: string
  role: 'user' | 'assistant' | 'tool'
  text: string
  tier: string
  category: string
  memoryType: string
}

const now = new Date('2026-03-01T12:00:00Z')
const turns = labelled as LabelledTurn[]
const FIELDS = ['tier', 'category', 'memoryType'] as const
/** Floors under the accuracy measured when the router was written (docs/memory-formation.md). */
const FLOORS = { tier: 0.9, category: 0.9, memoryType: 0.9 } as const

describe('memory router on the hand-labelled turns', () => {
  const results = turns.map((turn) => ({
    turn,
    got: classifyTurn({ content: turn.text, role: turn.role, timestamp: now }, { now }),
  }))

  it('has at least 200 labelled turns of every tier, type and role', () => {
    expect(turns.length).toBeGreaterThanOrEqual(200)
    expect(new Set(turns.map((t) => t.tier))).toEqual(new Set(['working', 'episodic', 'semantic']))
    expect(new Set(turns.map((t) => t.memoryType)).size).toBe(7)
    expect(new Set(turns.map((t) => t.id)).size).toBe(turns.length)
  })

  for (const field of FIELDS) {
    it(`classifies ${field} at or above ${FLOORS[field] * 100}%`, () => {
      const wrong = results.filter(({ turn, got }) => got[field] !== turn[field])
      const accuracy = 1 - wrong.length / results.length
      console.info(
        `router ${field}: ${(accuracy * 100).toFixed(1)}% of ${results.length}` +
          `; e.g. wrong: ${wrong
            .slice(0, 4)
            .map(({ turn, got }) => `${turn.id} ${turn[field]}→${got[field]}`)
            .join(', ')}`,
      )
      expect(accuracy).toBeGreaterThanOrEqual(FLOORS[field])
    })
  }

  it('gives every classification a reason and an importance in [0, 1]', () => {
    for (const { got } of results) {
      expect(got.reasons.length).toBeGreaterThan(0)
      expect(got.importance).toBeGreaterThanOrEqual(0)
      expect(got.importance).toBeLessThanOrEqual(1)
    }
  })

  it('routes an explicit request as important, whatever else the turn says', () => {
    const got = classifyTurn(
      {
        content: 'Haha ok. Remember that I am allergic to peanuts.',
        timestamp: new Date('2026-01-01T00:00:00Z'),
      },
      { now },
    )
    expect(got).toMatchObject({ tier: 'semantic', memoryType: 'fact', importance: 0.8 })
    expect(got.reasons[0]).toBe('explicit request to remember')
  })

  it('keeps questions and reactions in working memory', () => {
    for (const content of ['Do you like jazz?', "I'm so happy for you!", 'Thanks, that helps.']) {
      expect(classifyTurn({ content, timestamp: now }, { now }).tier).toBe('working')
    }
  })
})
