import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  confidenceOnStore,
  confidenceOnUse,
  DEFAULT_KNOWLEDGE_CONFIG,
  extractDomains,
  KNOWLEDGE_CATEGORIES,
  parseKnowledgeConfig,
  planKnowledgeDecay,
  rankKnowledge,
} from './knowledge.ts'

const NOW = new Date('2026-03-01T00:00:00.000Z')
const DAY = 86_400_000
const daysAgo = (d: number) => new Date(NOW.getTime() - d * DAY)

describe('knowledge confidence', () => {
  it('has the five categories and the spec numbers', () => {
    expect(KNOWLEDGE_CATEGORIES).toEqual([
      'domain',
      'execution_pattern',
      'user_preference',
      'website_knowledge',
      'error_pattern',
    ])
    expect(DEFAULT_KNOWLEDGE_CONFIG).toEqual({
      initialConfidence: 0.5,
      repeatStoreBoost: 0.1,
      useBoost: 0.05,
      decayAmount: 0.1,
      decayAfterDays: 30,
      pruneBelow: 0.1,
      maxConfidence: 1,
    })
  })

  it('starts at 0.5 or the given confidence', () => {
    expect(confidenceOnStore(null, undefined)).toBe(0.5)
    expect(confidenceOnStore(null, 0.8)).toBe(0.8)
  })

  it('adds 0.1 on a repeated store, capped at 1.0', () => {
    expect(confidenceOnStore(0.5, undefined)).toBe(0.6)
    expect(confidenceOnStore(0.85, undefined)).toBe(0.95)
    expect(confidenceOnStore(0.9, undefined)).toBe(1)
    expect(confidenceOnStore(0.95, undefined)).toBe(1)
    expect(confidenceOnStore(null, 1.4)).toBe(1)
    expect(confidenceOnStore(1, undefined)).toBe(1)
  })

  it('takes a higher stated confidence on a repeated store', () => {
    expect(confidenceOnStore(0.5, 0.9)).toBe(0.9)
    expect(confidenceOnStore(0.5, 0.2)).toBe(0.6)
  })

  it('adds 0.05 per use, capped at 1.0', () => {
    expect(confidenceOnUse(0.5)).toBe(0.55)
    expect(confidenceOnUse(0.9)).toBe(0.95)
    expect(confidenceOnUse(0.95)).toBe(1)
    expect(confidenceOnUse(0.98)).toBe(1)
  })
})

describe('knowledge config', () => {
  it('takes partial settings', () => {
    expect(confidenceOnStore(null, undefined, { initialConfidence: 0.3 })).toBe(0.3)
    expect(confidenceOnStore(0.5, undefined, { repeatStoreBoost: 0.2 })).toBe(0.7)
    expect(confidenceOnUse(0.5, { useBoost: 0.1, maxConfidence: 0.55 })).toBe(0.55)
  })

  it('rejects out-of-range settings, naming the field and the limit', () => {
    try {
      parseKnowledgeConfig({ decayAfterDays: 0 })
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError)
      expect((e as ValidationError).issues[0]).toMatchObject({ field: 'knowledge.decayAfterDays', limit: 1 })
    }
  })
})

describe('knowledge decay and pruning', () => {
  const item = (
    id: string,
    confidence: number,
    over: Partial<{ lastUsedAt: Date | null; lastDecayAt: Date | null; createdAt: Date }> = {},
  ) => ({
    id,
    confidence,
    lastUsedAt: null,
    lastDecayAt: null,
    createdAt: daysAgo(100),
    ...over,
  })

  it('decays by 0.1 after 30 days unused, not after 29', () => {
    const plan = planKnowledgeDecay(
      [item('a', 0.5, { lastUsedAt: daysAgo(30) }), item('b', 0.5, { lastUsedAt: daysAgo(29) })],
      NOW,
    )
    expect(plan).toEqual({ decayed: [{ id: 'a', confidence: 0.4 }], pruned: [] })
  })

  it('counts from creation when never used', () => {
    expect(planKnowledgeDecay([item('a', 0.5, { createdAt: daysAgo(29) })], NOW).decayed).toEqual([])
    expect(planKnowledgeDecay([item('a', 0.5, { createdAt: daysAgo(31) })], NOW).decayed).toEqual([
      { id: 'a', confidence: 0.4 },
    ])
  })

  it('decays once per period, not on every run', () => {
    const decayedToday = item('a', 0.4, { lastUsedAt: daysAgo(40), lastDecayAt: daysAgo(0) })
    expect(planKnowledgeDecay([decayedToday], NOW).decayed).toEqual([])
    const decayedLastMonth = item('a', 0.4, { lastUsedAt: daysAgo(70), lastDecayAt: daysAgo(30) })
    expect(planKnowledgeDecay([decayedLastMonth], NOW).decayed).toEqual([{ id: 'a', confidence: 0.3 }])
  })

  it('follows a configured period, amount and prune bar', () => {
    const config = { decayAfterDays: 7, decayAmount: 0.25, pruneBelow: 0.3 }
    const plan = planKnowledgeDecay(
      [
        item('week', 0.8, { lastUsedAt: daysAgo(7) }),
        item('six', 0.8, { lastUsedAt: daysAgo(6) }),
        item('low', 0.5, { lastUsedAt: daysAgo(8) }),
      ],
      NOW,
      config,
    )
    expect(plan).toEqual({ decayed: [{ id: 'week', confidence: 0.55 }], pruned: ['low'] })
  })

  it('prunes below 0.1, keeps exactly 0.1', () => {
    const plan = planKnowledgeDecay(
      [
        item('gone', 0.15, { lastUsedAt: daysAgo(31) }),
        item('kept', 0.2, { lastUsedAt: daysAgo(31) }),
        item('low', 0.09, { lastUsedAt: daysAgo(1) }),
      ],
      NOW,
    )
    expect(plan).toEqual({ decayed: [{ id: 'kept', confidence: 0.1 }], pruned: ['gone', 'low'] })
  })
})

describe('relevant knowledge (data flow step 10)', () => {
  const facts = [
    {
      id: '1',
      category: 'website_knowledge' as const,
      key: 'example.com title',
      value: 'example.com uses #page-title for its title',
      confidence: 0.5,
    },
    {
      id: '2',
      category: 'execution_pattern' as const,
      key: 'cookie banner',
      value: 'Click the cookie banner before navigation',
      confidence: 0.9,
    },
    {
      id: '3',
      category: 'website_knowledge' as const,
      key: 'shop.example.com cart',
      value: 'The cart is at /cart',
      confidence: 0.7,
    },
    { id: '4', category: 'domain' as const, key: 'other.org', value: 'requires login', confidence: 1 },
  ]

  it('extracts domains', () => {
    expect(extractDomains('Open https://www.Example.com/x and shop.example.com')).toEqual([
      'example.com',
      'shop.example.com',
    ])
  })

  it('finds the facts of a domain and its subdomains first', () => {
    const ranked = rankKnowledge(facts, 'Open example.com and read the headline')
    expect(ranked.map((m) => m.item.id)).toEqual(['3', '1'])
    expect(ranked[0]?.matchedTerms).toEqual(['example.com'])
  })

  it('ranks by overlap times confidence and excludes facts with no match', () => {
    // query weight 3 (domain) + 2 (cookie, banner): 3/5 x 0.7 > 2/5 x 0.9 > 3/5 x 0.5
    const ranked = rankKnowledge(facts, 'the cookie banner on example.com')
    expect(ranked.map((m) => [m.item.id, m.score])).toEqual([
      ['3', 0.42],
      ['2', 0.36],
      ['1', 0.3],
    ])
    expect(rankKnowledge(facts, 'book a table at a restaurant')).toEqual([])
  })

  it('weighs a domain match by the configured weight', () => {
    // weight 1: domain and the two words count the same, 1/3 x 0.7 < 2/3 x 0.9
    const ranked = rankKnowledge(facts, 'the cookie banner on example.com', { domainWeight: 1 })
    expect(ranked.map((m) => m.item.id)).toEqual(['2', '3', '1'])
  })

  it('honours limit and minimum confidence', () => {
    expect(rankKnowledge(facts, 'example.com', { limit: 1 }).map((m) => m.item.id)).toEqual(['3'])
    expect(rankKnowledge(facts, 'example.com', { minConfidence: 0.6 }).map((m) => m.item.id)).toEqual(['3'])
  })
})
