import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { type ConversationTurn, extractMemoriesOffline } from './extractor.ts'
import { ExtractedItemSchema } from './llm-provider.ts'

// A Wednesday, two days before "now".
const said = new Date('2026-03-04T10:00:00Z')
const now = new Date('2026-03-06T10:00:00Z')
const turn = (id: string, content: string, extra: Partial<ConversationTurn> = {}): ConversationTurn => ({
  id,
  speaker: 'dana',
  content,
  timestamp: said,
  ...extra,
})
const extract = (turns: ConversationTurn[], settings = {}) => extractMemoriesOffline(turns, { now, settings })

describe('offline extractor', () => {
  it('restates a first-person fact about its speaker and links it to its message', () => {
    const [memory] = extract([turn('m1', 'I work at Acme as a backend engineer.')])
    expect(memory).toMatchObject({
      content: 'Dana works at Acme as a backend engineer.',
      type: 'fact',
      category: 'fact',
      sourceMessageIds: ['m1'],
      speaker: 'dana',
    })
    expect(memory?.tags).toContain('acme')
  })

  it('finds several kinds in one turn and skips the chit-chat around them', () => {
    const memories = extract([
      turn(
        'm1',
        'Hi! Thanks so much. I prefer dark mode in every editor. My sister Lena is a doctor in Berlin. We decided to use PostgreSQL for the new project. Wow, that is great!',
      ),
    ])
    expect(memories.map((m) => [m.type, m.content])).toEqual([
      ['preference', 'Dana prefers dark mode in every editor.'],
      ['relationship', "Dana's sister Lena is a doctor in Berlin."],
      ['decision', 'Dana and others decided to use PostgreSQL for the new project.'],
    ])
    expect(memories[1]?.tags).toEqual(['relationship', 'lena', 'berlin'])
  })

  it('turns an explicit request into a memory of importance 0.8 without the request words', () => {
    const [memory] = extract([turn('m1', "Okay. Also, remember that I'm allergic to peanuts.")])
    expect(memory).toMatchObject({ content: 'Dana is allergic to peanuts.', importance: 0.8 })
    expect(memory?.confidence).toBeGreaterThanOrEqual(0.95)
  })

  it("gives other memories spec 002's importance, counted from the message time", () => {
    const [memory] = extract([turn('m1', 'I will send the quarterly report to finance.')])
    // base 0.5 + "i will" 0.2 + recency max(0, 0.2 - 48/24 * 0.1) = 0.7
    expect(memory?.importance).toBeCloseTo(0.7)
    expect(memory?.type).toBe('commitment')
  })

  it('records validity the text states, relative to the message', () => {
    const [memory] = extract([turn('m1', "I'm on call for the payments team until Friday.")])
    expect(memory?.validUntil?.toISOString()).toBe('2026-03-06T23:59:59.999Z')
    expect(memory?.validFrom).toBeNull()
  })

  it('keeps nothing from questions, greetings and reactions', () => {
    expect(
      extract([
        turn('m1', 'Hey Sam! How are you doing these days?'),
        turn('m2', "I'm so happy for you, that's amazing news!"),
        turn('m3', 'Here is a picture of the view from the hotel.'),
      ]),
    ).toEqual([])
  })

  it('skips assistant turns unless asked, and keeps tool results as they are', () => {
    const turns = [
      turn('a1', 'I will remind you about the dentist appointment on Monday.', {
        role: 'assistant',
        speaker: 'assistant',
      }),
      turn('t1', 'Build #4812 failed: 3 tests failed in packages/api.', { role: 'tool', speaker: 'ci' }),
    ]
    expect(extract(turns).map((m) => m.content)).toEqual([
      'Build #4812 failed: 3 tests failed in packages/api.',
    ])
    expect(extract(turns, { extractFromAssistant: true }).map((m) => m.sourceMessageIds[0])).toEqual([
      'a1',
      't1',
    ])
  })

  it('removes a vocative naming a participant and puts back a dropped subject', () => {
    const memories = extract([
      turn('m1', 'Caroline, I lost my job at the bank last week.', { speaker: 'jon' }),
      turn('m2', 'Lost my job as a banker yesterday, so gonna start my own dance studio.', {
        speaker: 'caroline',
      }),
    ])
    expect(memories.map((m) => m.content)).toEqual([
      "Jon lost Jon's job at the bank last week.",
      "Caroline lost Caroline's job as a banker yesterday, so gonna start Caroline's own dance studio.",
    ])
  })

  it("tags a memory with the nouns of its turn's sentences no memory restates, so a search naming them finds it", () => {
    const said =
      "I just got accepted for an internship at a design firm! It's gonna be a huge change for my whole family."
    // The second sentence holds no memory of its own; its nouns come along as the first's tags.
    expect(extract([turn('m1', said)]).map((m) => [m.content, m.tags])).toEqual([
      ['Dana just got accepted for an internship at a design firm!', ['fact', 'change', 'family']],
    ])
    expect(extract([turn('m1', said)], { turnNounTags: false })[0]?.tags).toEqual(['fact'])
    // Sentences that are memories themselves lend nothing, nor do reactions ("Thanks so much").
    const both = extract([
      turn('m2', 'Thanks so much. I love painting. My favourite subject is the sea at sunset.'),
    ])
    expect(both.map((m) => m.tags)).toEqual([['preference'], ['preference']])
  })

  it('takes cherish, treasure and value as preferences', () => {
    const [memory] = extract([turn('m5', 'I cherish quiet evenings at home with a good book.')])
    expect(memory).toMatchObject({
      family: 'preference',
      content: 'Dana cherishes quiet evenings at home with a good book.',
    })
  })

  it('holds no memory in what is about the exchange: news announced, updates promised, the listener praised', () => {
    const memories = extract([
      turn('m1', "There's something I want to tell you about my new job."),
      turn('m2', "I'll keep you posted on the adoption process."),
      turn('m3', 'I love how you use your paintings to tell your own story.'),
      turn('m4', 'I love how quiet the mountains are in early spring.'),
    ])
    expect(memories.map((m) => [m.sourceMessageIds[0], m.content])).toEqual([
      ['m4', 'Dana loves how quiet the mountains are in early spring.'],
    ])
  })

  it('holds no memory in catching up or in a collective exhortation, and keeps the news after a catch-up', () => {
    const memories = extract([
      turn('m1', 'Been a busy week since we talked.'),
      turn('m2', "A lot's happened since we last spoke!"),
      turn('m3', "I just wanted to say hi! I've had a lot of things happening."),
      turn('m4', 'Together we can make a real difference in the world!'),
      turn('m4b', "We can tackle life's challenges together!"),
      turn('m5', "We're all wonderfully imperfect in our own ways."),
      turn('m6', "A lot's happened - I just got accepted for a design internship!"),
      turn('m7', 'We can finally move into the new flat in Lisbon next month.'),
    ])
    expect(memories.map((m) => [m.sourceMessageIds[0], m.content])).toEqual([
      ['m6', 'Dana just got accepted for a design internship!'],
      ['m7', 'Dana and others can finally move into the new flat in Lisbon next month.'],
    ])
  })

  it('holds no memory in a resolve with nothing resolved on, and keeps a concrete commitment', () => {
    const memories = extract([
      turn('m1', "I'm gonna keep it up."),
      turn('m2', "I'll do my best to make you proud!"),
      turn('m3', 'I will never forget it!'),
      turn('m4', "I'll start thinking about what we can do."),
      turn('m5', 'I will visit my parents in Goa next month.'),
    ])
    expect(memories.map((m) => m.sourceMessageIds[0])).toEqual(['m5'])
  })

  it('keeps a name of several words as one tag a memory accepts, and no spoken contraction as a noun', () => {
    const [work] = extract([turn('m1', 'I started working at Blue Bottle Coffee in New York last week.')])
    expect(work?.tags).toEqual(['fact', 'blue-bottle-coffee', 'new-york'])
    const [news] = extract([
      turn('m2', "I just got accepted for an internship at a design firm! It's gonna be a huge change."),
    ])
    expect(news?.tags).toEqual(['fact', 'change'])
    for (const tag of [...(work?.tags ?? []), ...(news?.tags ?? [])]) expect(tag).toMatch(/^[^\s,]+$/)
  })

  it('honours its settings and rejects values out of range', () => {
    const text = 'I love hiking in the mountains. I work at Acme in Lisbon. I will visit my parents in Goa.'
    expect(extract([turn('m1', text)])).toHaveLength(3)
    expect(extract([turn('m1', text)], { maxItemsPerTurn: 1 })).toHaveLength(1)
    expect(extract([turn('m1', text)], { minConfidence: 0.72 }).map((m) => m.type)).toEqual(['fact'])
    expect(() => extract([turn('m1', text)], { minConfidence: 2 })).toThrow(ValidationError)
  })

  it('is deterministic and produces items the LLM answer schema accepts', () => {
    const turns = [
      turn('m1', 'My name is Dana and I live in Lisbon since 2019. I prefer tea over coffee.'),
      turn('m2', "Actually, I use Python 3.12, not 3.11. I'll migrate the service next quarter."),
    ]
    const first = extract(turns)
    expect(extract(turns)).toEqual(first)
    expect(first.map((m) => m.type)).toEqual(['fact', 'preference', 'correction', 'commitment'])
    for (const memory of first) {
      const parsed = ExtractedItemSchema.safeParse({
        ...memory,
        validFrom: memory.validFrom?.toISOString() ?? null,
        validUntil: memory.validUntil?.toISOString() ?? null,
      })
      expect(parsed.success).toBe(true)
    }
    expect(first[0]?.validFrom?.getUTCFullYear()).toBe(2019)
  })
})
