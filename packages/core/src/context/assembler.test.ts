import { describe, expect, it } from 'vitest'
import { createTokenCounter } from '../budget/tokenizer.ts'
import { ValidationError } from '../errors.ts'
import {
  type AssembledContext,
  assembleContext,
  CONTEXT_SECTIONS,
  type ContextSectionInput,
  DEFAULT_CONTEXT_BUDGETS,
  MAX_CONTEXT_BUDGET_TOKENS,
} from './assembler.ts'

/** One token per white-space separated word: additive, so every figure below is by hand. */
const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length
// "<memory_context>" + "Here are relevant memories from past conversations:" + "</memory_context>"
const WRAPPER = 9
// "## Relevant memories", "## User profile", ...: three words each ("## Knowledge" has two).
const HEADING = 3

/** n distinct words: an item of n words costs n + 1 ("- " is a word). */
const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ')

const report = (context: AssembledContext, name: string) => context.sections.find((s) => s.name === name)

function issues(fn: () => unknown) {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError)
    return (e as ValidationError).issues
  }
  throw new Error('expected a ValidationError')
}

describe('assembleContext', () => {
  it('lists the sections by priority and spec 003 budgets', () => {
    expect(CONTEXT_SECTIONS[0]).toBe('user_overrides')
    expect(CONTEXT_SECTIONS.at(-1)).toBe('conversation')
    expect(DEFAULT_CONTEXT_BUDGETS).toMatchObject({
      profile: 2000,
      working_memory: 500,
      summaries: 1000,
      relationships: 300,
    })
  })

  it("renders spec 001's block with a heading per section, in priority order", () => {
    const context = assembleContext(
      {
        budgetTokens: 8000,
        sections: [
          { name: 'conversation', items: [{ id: 'c1', text: 'user: hello' }] },
          { name: 'relevant_memories', items: [{ id: 'm1', text: 'Caroline went to a support group' }] },
          { name: 'user_overrides', items: [{ id: 'o1', text: 'Prefers tabs\nover spaces' }] },
          { name: 'knowledge', items: [] },
        ],
      },
      countWords,
    )
    expect(context.text).toBe(
      [
        '<memory_context>',
        'Here are relevant memories from past conversations:',
        '## User overrides',
        '- Prefers tabs over spaces',
        '## Relevant memories',
        '- Caroline went to a support group',
        '## Current conversation',
        '- user: hello',
        '</memory_context>',
      ].join('\n'),
    )
    expect(context.totalTokens).toBe(countWords(context.text))
    expect(context.sections.map((s) => s.name)).toEqual([
      'user_overrides',
      'relevant_memories',
      'knowledge',
      'conversation',
    ])
    expect(report(context, 'knowledge')).toMatchObject({ usedTokens: 0, included: [], omitted: [] })
    expect(report(context, 'user_overrides')).toMatchObject({ budgetTokens: null, usedTokens: HEADING + 5 })
    expect(report(context, 'relevant_memories')).toMatchObject({
      title: 'Relevant memories',
      budgetTokens: 1000,
      usedTokens: HEADING + 7,
      included: ['m1'],
    })
  })

  it('gives an empty text when there is nothing to include', () => {
    expect(assembleContext({ budgetTokens: 100, sections: [] }, countWords)).toEqual({
      text: '',
      totalTokens: 0,
      budgetTokens: 100,
      sections: [],
    })
    const blank = assembleContext(
      { budgetTokens: 100, sections: [{ name: 'profile', items: [{ id: 'p', text: '  \n ' }] }] },
      countWords,
    )
    expect(blank).toMatchObject({ text: '', totalTokens: 0 })
    expect(report(blank, 'profile')?.omitted).toEqual(['p'])
  })

  describe('total budget', () => {
    const sections: ContextSectionInput[] = [
      {
        name: 'relevant_memories',
        items: [
          { id: 'm1', text: 'one two' },
          { id: 'm2', text: 'three four' },
        ],
      },
    ]
    const full = WRAPPER + HEADING + 3 + 3

    it('includes everything at exactly the budget', () => {
      const context = assembleContext({ budgetTokens: full, sections }, countWords)
      expect(report(context, 'relevant_memories')?.included).toEqual(['m1', 'm2'])
      expect(context.totalTokens).toBe(full)
    })

    it('leaves out the item that goes one token over', () => {
      const context = assembleContext({ budgetTokens: full - 1, sections }, countWords)
      expect(report(context, 'relevant_memories')).toMatchObject({ included: ['m1'], omitted: ['m2'] })
      expect(context.totalTokens).toBe(full - 3)
    })

    it('includes nothing, not even the wrapper, when the first item does not fit', () => {
      const context = assembleContext({ budgetTokens: WRAPPER + HEADING + 2, sections }, countWords)
      expect(context).toMatchObject({ text: '', totalTokens: 0 })
      expect(report(context, 'relevant_memories')?.omitted).toEqual(['m1', 'm2'])
    })

    it('skips an item that does not fit and still tries the next', () => {
      const context = assembleContext(
        {
          budgetTokens: WRAPPER + HEADING + 3,
          sections: [
            {
              name: 'relevant_memories',
              items: [
                { id: 'long', text: 'one two three four' },
                { id: 'short', text: 'five six' },
              ],
            },
          ],
        },
        countWords,
      )
      expect(report(context, 'relevant_memories')).toMatchObject({ included: ['short'], omitted: ['long'] })
    })

    it('trims the lowest-priority sections first, whatever the input order', () => {
      const context = assembleContext(
        {
          budgetTokens: WRAPPER + 2 * (HEADING + 3),
          sections: [
            { name: 'conversation', items: [{ id: 'c1', text: 'seven eight' }] },
            { name: 'knowledge', items: [{ id: 'k1', text: 'five six' }] },
            { name: 'profile', items: [{ id: 'p1', text: 'one two' }] },
            { name: 'summaries', items: [{ id: 's1', text: 'three four' }] },
          ],
        },
        countWords,
      )
      const included = context.sections.flatMap((s) => s.included)
      expect(included).toEqual(['p1', 's1'])
      expect(report(context, 'knowledge')?.omitted).toEqual(['k1'])
      expect(report(context, 'conversation')?.omitted).toEqual(['c1'])
      expect(context.totalTokens).toBe(WRAPPER + 2 * (HEADING + 3))
    })

    it('always includes user overrides, even past the total', () => {
      const context = assembleContext(
        {
          budgetTokens: 10,
          sections: [
            { name: 'profile', items: [{ id: 'p1', text: 'short' }] },
            {
              name: 'user_overrides',
              items: [
                { id: 'o1', text: words(20, 'a') },
                { id: 'o2', text: words(20, 'b') },
              ],
            },
          ],
        },
        countWords,
      )
      expect(report(context, 'user_overrides')?.included).toEqual(['o1', 'o2'])
      expect(report(context, 'profile')?.omitted).toEqual(['p1'])
      expect(context.totalTokens).toBe(WRAPPER + HEADING + 2 * 21)
      expect(context.totalTokens).toBe(countWords(context.text))
    })

    it('counts overrides against what is left for the others', () => {
      const context = assembleContext(
        {
          budgetTokens: WRAPPER + 2 * (HEADING + 3),
          sections: [
            { name: 'user_overrides', items: [{ id: 'o1', text: 'one two' }] },
            { name: 'profile', items: [{ id: 'p1', text: 'three four' }] },
            { name: 'working_memory', items: [{ id: 'w1', text: 'five six' }] },
          ],
        },
        countWords,
      )
      expect(context.sections.flatMap((s) => s.included)).toEqual(['o1', 'p1'])
      expect(report(context, 'working_memory')?.omitted).toEqual(['w1'])
    })
  })

  describe('section budgets', () => {
    // Heading 3 + an item of 46 words (47 tokens) = 50, the smallest working-memory budget.
    const section = (items: { id: string; text: string }[]): ContextSectionInput => ({
      name: 'working_memory',
      items,
      budgetTokens: 50,
    })

    it('includes an item that fills the section exactly', () => {
      const context = assembleContext(
        { budgetTokens: 1000, sections: [section([{ id: 'w1', text: words(46, 'w') }])] },
        countWords,
      )
      expect(report(context, 'working_memory')).toMatchObject({
        budgetTokens: 50,
        usedTokens: 50,
        included: ['w1'],
      })
    })

    it('leaves out, whole, an item one token over the section budget', () => {
      const context = assembleContext(
        {
          budgetTokens: 1000,
          sections: [
            section([
              { id: 'big', text: words(47, 'w') },
              { id: 'small', text: 'fits' },
            ]),
          ],
        },
        countWords,
      )
      expect(report(context, 'working_memory')).toMatchObject({ included: ['small'], omitted: ['big'] })
      expect(context.text).not.toContain('w0')
    })

    it('takes budgets from the input, then the section, then the defaults', () => {
      const sections: ContextSectionInput[] = [
        { name: 'profile', items: [{ id: 'p', text: 'x' }] },
        { name: 'summaries', items: [{ id: 's', text: 'x' }], budgetTokens: 60 },
        { name: 'knowledge', items: [{ id: 'k', text: 'x' }], budgetTokens: null },
      ]
      const context = assembleContext(
        { budgetTokens: 1000, sections, budgets: { summaries: 70, knowledge: 80 } },
        countWords,
      )
      expect(context.sections.map((s) => s.budgetTokens)).toEqual([2000, 60, 80])
    })

    it('rejects budgets out of range, naming the field and the limit', () => {
      const run = (budgetTokens: number) => () => assembleContext({ budgetTokens, sections: [] }, countWords)
      expect(issues(run(0))[0]).toMatchObject({ field: 'budgetTokens', limit: 1 })
      expect(issues(run(MAX_CONTEXT_BUDGET_TOKENS + 1))[0]).toMatchObject({
        field: 'budgetTokens',
        limit: MAX_CONTEXT_BUDGET_TOKENS,
      })
      expect(issues(run(1.5))[0]).toMatchObject({ field: 'budgetTokens' })
      expect(
        issues(() =>
          assembleContext(
            { budgetTokens: 100, sections: [{ name: 'relationships', items: [], budgetTokens: 5001 }] },
            countWords,
          ),
        )[0],
      ).toMatchObject({ field: 'sections.0.budgetTokens', limit: 5000 })
      expect(
        issues(() =>
          assembleContext({ budgetTokens: 100, sections: [], budgets: { profile: 99 } }, countWords),
        )[0],
      ).toMatchObject({ field: 'budgets.profile', limit: 100 })
    })

    it('rejects a section given twice', () => {
      const twice: ContextSectionInput[] = [
        { name: 'profile', items: [] },
        { name: 'profile', items: [] },
      ]
      expect(
        issues(() => assembleContext({ budgetTokens: 100, sections: twice }, countWords))[0],
      ).toMatchObject({
        field: 'sections.1.name',
      })
    })
  })

  describe('exact accounting', () => {
    // A tokenizer whose joined text costs more than its pieces: every line break followed by
    // more text costs a token. Piecewise costing under-counts; the final count must catch it.
    const countWithJoins = (text: string) => countWords(text) + (text.match(/\n(?=.)/gs)?.length ?? 0)
    const sections: ContextSectionInput[] = [
      { name: 'profile', items: [{ id: 'p1', text: 'one two' }] },
      {
        name: 'relevant_memories',
        items: [
          { id: 'm1', text: 'three four' },
          { id: 'm2', text: 'five six' },
        ],
      },
    ]

    it('trims the lowest-priority section until the counted text fits', () => {
      const everything = assembleContext({ budgetTokens: 1000, sections }, countWithJoins)
      expect(everything.sections.flatMap((s) => s.included)).toEqual(['p1', 'm1', 'm2'])
      const context = assembleContext({ budgetTokens: everything.totalTokens - 1, sections }, countWithJoins)
      expect(context.totalTokens).toBe(countWithJoins(context.text))
      expect(context.totalTokens).toBeLessThanOrEqual(everything.totalTokens - 1)
      expect(report(context, 'profile')?.included).toEqual(['p1'])
      expect(report(context, 'relevant_memories')?.omitted).toContain('m2')
    })

    it('keeps every section within its own budget by the final count', () => {
      const items = Array.from({ length: 10 }, (_, i) => ({ id: `w${i}`, text: words(3, `w${i}x`) }))
      const context = assembleContext(
        { budgetTokens: 1000, sections: [{ name: 'working_memory', items, budgetTokens: 50 }] },
        countWithJoins,
      )
      const section = report(context, 'working_memory')
      expect(section?.usedTokens).toBeLessThanOrEqual(50)
      expect(section?.usedTokens).toBe(
        countWithJoins(`${context.text.split('\n').slice(2, -1).join('\n')}\n`),
      )
      expect(context.totalTokens).toBe(countWithJoins(context.text))
    })

    describe('with the o200k_base tokenizer', () => {
      const counter = createTokenCounter('o200k_base')
      const realistic: ContextSectionInput[] = [
        { name: 'user_overrides', items: [{ id: 'o1', text: 'Always answer in British English.' }] },
        {
          name: 'profile',
          items: [
            { id: 'p1', text: 'Caroline is a counsellor in training who moved from Sweden four years ago.' },
          ],
        },
        {
          name: 'relevant_memories',
          items: [
            { id: 'm1', text: 'Caroline went to the LGBTQ support group on 7 May 2023.' },
            { id: 'm2', text: 'Melanie painted a sunrise over a lake in 2022.' },
            { id: 'm3', text: 'Caroline is researching adoption agencies — "a family of my own".' },
          ],
        },
        {
          name: 'conversation',
          items: [
            { id: 'c1', text: 'user: What did Caroline do last weekend?' },
            { id: 'c2', text: 'assistant: She went camping with friends, I think.' },
          ],
        },
      ]
      const everything = assembleContext({ budgetTokens: 8000, sections: realistic }, counter.count)

      it('counts the text exactly and includes everything when it fits exactly', () => {
        expect(everything.totalTokens).toBe(counter.count(everything.text))
        expect(everything.sections.flatMap((s) => s.omitted)).toEqual([])
        const exact = assembleContext(
          { budgetTokens: everything.totalTokens, sections: realistic },
          counter.count,
        )
        expect(exact.text).toBe(everything.text)
      })

      it('leaves out the last conversation turn one token short', () => {
        const short = assembleContext(
          { budgetTokens: everything.totalTokens - 1, sections: realistic },
          counter.count,
        )
        expect(short.sections.flatMap((s) => s.omitted)).toEqual(['c2'])
        expect(short.totalTokens).toBe(counter.count(short.text))
      })

      it('stays within every budget, trimming from the bottom up', () => {
        const overrideTokens = assembleContext(
          { budgetTokens: 1, sections: realistic.slice(0, 1) },
          counter.count,
        ).totalTokens
        let previous = Number.POSITIVE_INFINITY
        for (let budget = everything.totalTokens; budget >= 1; budget--) {
          const context = assembleContext({ budgetTokens: budget, sections: realistic }, counter.count)
          expect(context.totalTokens).toBe(counter.count(context.text))
          expect(context.totalTokens).toBeLessThanOrEqual(Math.max(budget, overrideTokens))
          expect(report(context, 'user_overrides')?.included).toEqual(['o1'])
          expect(context.totalTokens).toBeLessThanOrEqual(previous)
          previous = context.totalTokens
        }
      })
    })
  })
})
