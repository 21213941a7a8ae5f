import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  EngramError,
  ERROR_CODES,
  ForbiddenError,
  NotFoundError,
  parseWith,
  ValidationError,
  validationErrorFromZod,
} from './errors.ts'

describe('errors', () => {
  it('gives each error its code and class name', () => {
    const notFound = new NotFoundError('Session', 's-1')
    expect(notFound).toBeInstanceOf(EngramError)
    expect(notFound).toMatchObject({ code: ERROR_CODES.NOT_FOUND, resource: 'Session', id: 's-1' })
    expect(notFound.name).toBe('NotFoundError')
    expect(notFound.message).toBe('Session s-1 was not found')
    expect(new ForbiddenError().code).toBe('FORBIDDEN')
  })

  it('builds a validation message from the issues unless one is given', () => {
    const issues = [
      { field: 'a', message: 'too big', limit: 3 },
      { field: 'b.c', message: 'required' },
    ]
    expect(new ValidationError(issues).message).toBe('a: too big; b.c: required')
    expect(new ValidationError(issues, 'bad input').message).toBe('bad input')
    expect(new ValidationError(issues).code).toBe('VALIDATION')
  })

  it('turns zod issues into fields with the broken limit', () => {
    const schema = z.object({ size: z.number().max(10), nested: z.object({ count: z.number().min(2) }) })
    const parsed = schema.safeParse({ size: 11, nested: { count: 1 } })
    if (parsed.success) throw new Error('expected a failure')
    const error = validationErrorFromZod(parsed.error, 'input')
    expect(error.issues.map(({ field, limit }) => ({ field, limit }))).toEqual([
      { field: 'input.size', limit: 10 },
      { field: 'input.nested.count', limit: 2 },
    ])
    const unprefixed = validationErrorFromZod(parsed.error)
    expect(unprefixed.issues[0]?.field).toBe('size')
  })

  it('names the prefix for a failure at the root, and leaves out a limit when there is none', () => {
    const parsed = z.string().safeParse(5)
    if (parsed.success) throw new Error('expected a failure')
    expect(validationErrorFromZod(parsed.error, 'name').issues[0]).not.toHaveProperty('limit')
    expect(validationErrorFromZod(parsed.error, 'name').issues[0]?.field).toBe('name')
    expect(validationErrorFromZod(parsed.error).issues[0]?.field).toBe('input')
  })

  it('parses with defaults when given nothing, and throws a ValidationError otherwise', () => {
    const schema = z.object({ n: z.number().int().min(1).max(5).default(3) })
    expect(parseWith(schema, undefined)).toEqual({ n: 3 })
    expect(() => parseWith(schema, { n: 6 }, 'cfg')).toThrow(ValidationError)
  })
})
