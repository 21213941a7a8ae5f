import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  EXTRACTION_ANSWER_JSON_SCHEMA,
  EXTRACTION_LIMITS,
  type LlmProvider,
  parseExtractionAnswer,
} from './llm-provider.ts'

const item = {
  type: 'preference',
  category: 'preference',
  content: 'Dana prefers dark mode',
  confidence: 0.9,
  tags: ['ui'],
  sourceMessageIds: ['m1'],
}

describe('extraction answer', () => {
  it('parses a valid answer, filling the optional fields', () => {
    const answer = parseExtractionAnswer(JSON.stringify({ items: [item] }))
    expect(answer.items[0]).toEqual({ ...item, validFrom: null, validUntil: null, supersedesMemoryId: null })
  })

  it('accepts an answer wrapped in a markdown fence', () => {
    expect(parseExtractionAnswer(`\`\`\`json\n${JSON.stringify({ items: [] })}\n\`\`\``).items).toEqual([])
  })

  it('rejects text that is not JSON', () => {
    expect(() => parseExtractionAnswer('Sure! Here are the memories: ...')).toThrow(/not valid JSON/)
  })

  it('rejects an unknown type, a confidence out of range and a missing source, naming each field', () => {
    try {
      parseExtractionAnswer(
        JSON.stringify({ items: [{ ...item, type: 'opinion', confidence: 1.5, sourceMessageIds: [] }] }),
      )
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError)
      const fields = (error as ValidationError).issues.map((issue) => issue.field)
      expect(fields).toEqual(
        expect.arrayContaining([
          'answer.items.0.type',
          'answer.items.0.confidence',
          'answer.items.0.sourceMessageIds',
        ]),
      )
    }
  })

  it('holds an answer to its limits', () => {
    const many = Array.from({ length: EXTRACTION_LIMITS.maxItems + 1 }, () => item)
    expect(() => parseExtractionAnswer(JSON.stringify({ items: many }))).toThrow(ValidationError)
    const long = { ...item, content: 'x'.repeat(EXTRACTION_LIMITS.maxContentChars + 1) }
    expect(() => parseExtractionAnswer(JSON.stringify({ items: [long] }))).toThrow(ValidationError)
  })

  it('rejects items citing messages that were not in the prompt', () => {
    const foreign = { ...item, sourceMessageIds: ['m1', 'other-agent-message'] }
    expect(() => parseExtractionAnswer(JSON.stringify({ items: [foreign] }), new Set(['m1']))).toThrow(
      /unknown message id other-agent-message/,
    )
    expect(parseExtractionAnswer(JSON.stringify({ items: [item] }), new Set(['m1'])).items).toHaveLength(1)
  })

  it('sends a JSON schema derived from the zod schema', () => {
    const schema = EXTRACTION_ANSWER_JSON_SCHEMA.schema as {
      properties: { items: { items: { required: string[] } } }
    }
    expect(schema.properties.items.items.required).toEqual(
      expect.arrayContaining(['type', 'category', 'content', 'confidence', 'sourceMessageIds']),
    )
  })

  it('is a port any adapter can implement, with an abort signal', async () => {
    const seen: (AbortSignal | undefined)[] = []
    const scripted: LlmProvider = {
      model: 'scripted',
      async chat(request) {
        seen.push(request.signal)
        return { content: JSON.stringify({ items: [item] }), model: 'scripted' }
      },
    }
    const controller = new AbortController()
    const answer = await scripted.chat({
      messages: [{ role: 'user', content: 'I prefer dark mode' }],
      jsonSchema: EXTRACTION_ANSWER_JSON_SCHEMA,
      signal: controller.signal,
    })
    expect(parseExtractionAnswer(answer.content).items[0]?.content).toBe('Dana prefers dark mode')
    expect(seen[0]).toBe(controller.signal)
  })
})
