import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ValidationError } from '../errors.ts'
import { chatForObject, ModelAnswerError, parseJsonAnswer } from './chat-for-object.ts'
import type { ChatRequest, ChatResponse, LlmProvider } from './llm-provider.ts'

/** A model that gives the scripted answers in turn and records what it was asked. */
function scripted(...answers: (string | Error)[]) {
  const requests: ChatRequest[] = []
  const provider: LlmProvider = {
    model: 'scripted',
    async chat(request): Promise<ChatResponse> {
      requests.push(request)
      const answer = answers.shift()
      if (answer === undefined) throw new Error('no answer scripted')
      if (answer instanceof Error) throw answer
      return { content: answer, model: 'scripted', usage: { promptTokens: 10, completionTokens: 3 } }
    },
  }
  return { provider, requests }
}

const Person = z.object({ name: z.string().min(1), age: z.number().int().min(0) })
const request: ChatRequest = {
  messages: [
    { role: 'system', content: 'Extract the person.' },
    { role: 'user', content: 'Dana is 34.' },
  ],
  jsonSchema: { name: 'person', schema: z.toJSONSchema(Person) as Record<string, unknown> },
  temperature: 0,
}

describe('parseJsonAnswer', () => {
  it('reads plain JSON, a whole fenced answer and a fence after a sentence', () => {
    expect(parseJsonAnswer('{"a":1}')).toEqual({ a: 1 })
    expect(parseJsonAnswer('```json\n{"a":1}\n```')).toEqual({ a: 1 })
    expect(parseJsonAnswer('```\n[1,2]\n```')).toEqual([1, 2])
    expect(parseJsonAnswer('Here it is:\n```json\n{"a":2}\n```\nAnything else?')).toEqual({ a: 2 })
  })

  it('names the answer when it is not JSON', () => {
    expect(() => parseJsonAnswer('Sure! Dana is 34.')).toThrow(ValidationError)
    expect(() => parseJsonAnswer('```json\n{"a":\n```')).toThrow('answer: is not valid JSON')
  })
})

describe('chatForObject', () => {
  it('returns the validated object from a good first answer, asking once', async () => {
    const { provider, requests } = scripted('```json\n{"name":"Dana","age":34}\n```')
    const result = await chatForObject(provider, request, Person)
    expect(result.value).toEqual({ name: 'Dana', age: 34 })
    expect(result.responses).toHaveLength(1)
    expect(result.responses[0]?.usage).toEqual({ promptTokens: 10, completionTokens: 3 })
    expect(requests).toEqual([request])
  })

  it('corrects a malformed answer once, showing the model its answer and what was wrong', async () => {
    const { provider, requests } = scripted('{"name":"Dana","age":"thirty-four"}', '{"name":"Dana","age":34}')
    const result = await chatForObject(provider, request, Person)
    expect(result.value).toEqual({ name: 'Dana', age: 34 })
    expect(result.responses).toHaveLength(2)
    const correction = requests[1]
    expect(correction?.messages.slice(0, 2)).toEqual(request.messages)
    expect(correction?.messages[2]).toEqual({
      role: 'assistant',
      content: '{"name":"Dana","age":"thirty-four"}',
    })
    expect(correction?.messages[3]?.role).toBe('user')
    expect(correction?.messages[3]?.content).toContain('answer.age')
    // The schema and settings travel with the correction.
    expect(correction?.jsonSchema).toBe(request.jsonSchema)
    expect(correction?.temperature).toBe(0)
  })

  it('throws ModelAnswerError naming the fields after the correction fails too', async () => {
    const { provider, requests } = scripted(
      'not json at all',
      '{"name":"","age":-1}',
      '{"name":"Dana","age":34}',
    )
    const error = await chatForObject(provider, request, Person).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ModelAnswerError)
    const failure = error as ModelAnswerError
    expect(failure.schemaName).toBe('person')
    expect(failure.attempts).toBe(2)
    expect(failure.issues.map((issue) => issue.field).sort()).toEqual(['answer.age', 'answer.name'])
    expect(failure.lastAnswer).toBe('{"name":"","age":-1}')
    expect(failure.message).toContain('did not validate after 2 attempts')
    // Exactly one correction: the third scripted answer was never asked for.
    expect(requests).toHaveLength(2)
    // The first correction named the first problem.
    expect(requests[1]?.messages.at(-1)?.content).toContain('answer is not valid JSON')
  })

  it('treats a failed check like a schema failure', async () => {
    const { provider } = scripted('{"name":"Mallory","age":30}', '{"name":"Mallory","age":31}')
    const check = (person: z.infer<typeof Person>) => {
      if (person.name !== 'Dana')
        throw new ValidationError([{ field: 'answer.name', message: 'is not in the turn' }])
    }
    const error = await chatForObject(provider, request, Person, { check }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ModelAnswerError)
    expect((error as ModelAnswerError).issues).toEqual([
      { field: 'answer.name', message: 'is not in the turn' },
    ])
  })

  it('lets provider failures through without a correction', async () => {
    const down = new Error('circuit open')
    const { provider, requests } = scripted(down)
    await expect(chatForObject(provider, request, Person)).rejects.toBe(down)
    expect(requests).toHaveLength(1)
  })

  it('lets a bug in a check through instead of calling it a bad answer', async () => {
    const { provider } = scripted('{"name":"Dana","age":34}')
    const bug = new TypeError('x is not a function')
    await expect(
      chatForObject(provider, request, Person, {
        check: () => {
          throw bug
        },
      }),
    ).rejects.toBe(bug)
  })
})
