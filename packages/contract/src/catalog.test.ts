import fs from 'node:fs'
import {
  buildSchema,
  type GraphQLField,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
} from 'graphql'
import { describe, expect, it } from 'vitest'
import type { z } from 'zod'
import { catalog, OPERATION_NAMES, type OperationSpec } from './catalog.ts'

// The API's printed schema is committed and kept current by the API's own test: comparing the
// catalog with it keeps every door built on the catalog in step with GraphQL.
const schema = buildSchema(
  fs.readFileSync(new URL('../../../apps/api/schema.graphql', import.meta.url), 'utf8'),
)

interface Unwrapped {
  base: z.ZodType
  optional: boolean
  nullable: boolean
  list: boolean
}

type Def = { type: string; innerType?: z.ZodType; element?: z.ZodType; entries?: Record<string, string> }
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def

/** Peels optional/nullable/default and one array off a zod schema. */
function unwrap(zodSchema: z.ZodType): Unwrapped {
  let current = zodSchema
  const result = { optional: false, nullable: false, list: false }
  for (;;) {
    const def = defOf(current)
    if (def.type === 'optional' || def.type === 'default') result.optional = true
    else if (def.type === 'nullable') result.nullable = true
    else if (def.type === 'array' && !result.list) {
      result.list = true
      current = def.element as z.ZodType
      continue
    } else return { base: current, ...result }
    current = def.innerType as z.ZodType
  }
}

function shapeOf(zodSchema: z.ZodType): Record<string, z.ZodType> | null {
  return defOf(zodSchema).type === 'object' ? (zodSchema as z.ZodObject).shape : null
}

function enumValues(zodSchema: z.ZodType): string[] | null {
  const def = defOf(zodSchema)
  return def.type === 'enum' ? Object.values(def.entries ?? {}).sort() : null
}

/** Compares an input zod object with GraphQL arguments or input fields, recursing into objects. */
function compareInputs(
  where: string,
  shape: Record<string, z.ZodType>,
  graphqlFields: Map<string, { type: GraphQLInputType; hasDefault: boolean }>,
  fixed: Record<string, unknown>,
  problems: string[],
) {
  const fixedKeys = Object.keys(fixed)
  for (const name of graphqlFields.keys()) {
    if (!(name in shape) && !fixedKeys.includes(name)) {
      // Only a binding with fixed arguments may leave GraphQL arguments out (the profile).
      if (fixedKeys.length === 0) problems.push(`${where}.${name}: in GraphQL, missing from the catalog`)
    }
  }
  for (const [name, zodField] of Object.entries(shape)) {
    const graphqlField = graphqlFields.get(name)
    if (!graphqlField) {
      problems.push(`${where}.${name}: in the catalog, not in GraphQL`)
      continue
    }
    const zod = unwrap(zodField)
    const requiredInGraphql = isNonNullType(graphqlField.type) && !graphqlField.hasDefault
    if (requiredInGraphql === zod.optional)
      problems.push(
        `${where}.${name}: GraphQL ${requiredInGraphql ? 'requires' : 'does not require'} it, the catalog ${zod.optional ? 'does not' : 'does'}`,
      )
    const nullableType = isNonNullType(graphqlField.type) ? graphqlField.type.ofType : graphqlField.type
    if (isListType(nullableType) !== zod.list) problems.push(`${where}.${name}: list in one, not the other`)
    const named = getNamedType(graphqlField.type)
    compareNamed(`${where}.${name}`, zod.base, named, problems, 'input')
  }
}

function compareNamed(
  where: string,
  zodBase: z.ZodType,
  named: GraphQLNamedType,
  problems: string[],
  direction: 'input' | 'output',
) {
  if (isEnumType(named)) {
    const values = enumValues(zodBase)
    const expected = named
      .getValues()
      .map((v) => v.name)
      .sort()
    if (!values) problems.push(`${where}: GraphQL enum ${named.name}, the catalog has no enum`)
    else if (values.join() !== expected.join())
      problems.push(`${where}: enum ${named.name} is ${expected.join(',')}, the catalog ${values.join(',')}`)
    return
  }
  const shape = shapeOf(zodBase)
  if (direction === 'input' && isInputObjectType(named)) {
    // A JSON object argument (metadata, an import document) is a record, not a shaped object.
    if (!shape) return problems.push(`${where}: GraphQL input ${named.name}, the catalog has no object`)
    compareInputs(where, shape, inputFieldsOf(named), {}, problems)
    return
  }
  if (direction === 'output' && isObjectType(named) && shape) compareOutputs(where, shape, named, problems)
}

function inputFieldsOf(type: GraphQLInputObjectType) {
  return new Map(
    Object.values(type.getFields()).map((f) => [
      f.name,
      { type: f.type, hasDefault: f.defaultValue !== undefined },
    ]),
  )
}

/** Every field the catalog returns exists on the GraphQL type, with the same nullability. */
function compareOutputs(
  where: string,
  shape: Record<string, z.ZodType>,
  type: GraphQLNamedType,
  problems: string[],
) {
  if (!isObjectType(type)) return problems.push(`${where}: GraphQL ${type.name} is not an object type`)
  const fields = type.getFields()
  for (const [name, zodField] of Object.entries(shape)) {
    const field = fields[name]
    if (!field) {
      problems.push(`${where}.${name}: not a field of GraphQL ${type.name}`)
      continue
    }
    const zod = unwrap(zodField)
    if (zod.nullable === isNonNullType(field.type))
      problems.push(`${where}.${name}: nullable in ${zod.nullable ? 'the catalog' : 'GraphQL'} only`)
    compareNamed(`${where}.${name}`, zod.base, getNamedType(field.type), problems, 'output')
  }
}

/** The type an operation answers with when it succeeds: the union's member that is no Error. */
function successType(type: GraphQLOutputType): GraphQLNamedType {
  const named = getNamedType(type)
  if (!isUnionType(named)) return named
  const members = named.getTypes().filter((t) => !t.getInterfaces().some((i) => i.name === 'Error'))
  expect(members, `${named.name} has one success member`).toHaveLength(1)
  return members[0] as GraphQLNamedType
}

function rootField(spec: OperationSpec): GraphQLField<unknown, unknown> | undefined {
  const root =
    spec.kind === 'query'
      ? schema.getQueryType()
      : spec.kind === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType()
  return root?.getFields()[spec.graphql.field]
}

describe('the catalog matches apps/api/schema.graphql', () => {
  it.each(OPERATION_NAMES)('%s: operation, inputs, limits’ fields and outputs', (name) => {
    const spec = catalog[name] as OperationSpec
    const field = rootField(spec)
    expect(field, `${spec.kind} ${spec.graphql.field} exists in GraphQL`).toBeDefined()
    if (!field) return
    const problems: string[] = []

    let graphqlInputs: Map<string, { type: GraphQLInputType; hasDefault: boolean }>
    if (spec.graphql.inputArg) {
      const arg = field.args.find((a) => a.name === 'input')
      expect(arg, `${spec.graphql.field} takes input`).toBeDefined()
      graphqlInputs = inputFieldsOf(getNamedType(arg!.type) as GraphQLInputObjectType)
    } else {
      graphqlInputs = new Map(
        field.args.map((a) => [a.name, { type: a.type, hasDefault: a.defaultValue !== undefined }]),
      )
    }
    compareInputs(name, spec.input.shape, graphqlInputs, spec.graphql.fixed ?? {}, problems)
    for (const key of Object.keys(spec.graphql.fixed ?? {}))
      if (!graphqlInputs.has(key)) problems.push(`${name}: fixed argument ${key} is not in GraphQL`)

    // Outputs: the success type (a connection's node, flattened under graphql.connection).
    const output = unwrap(spec.output)
    let target = successType(field.type)
    let outputShape = shapeOf(output.base)
    if (spec.graphql.connection && outputShape && isObjectType(target)) {
      const { [spec.graphql.connection]: list, ...rest } = outputShape
      compareOutputs(`${name}`, rest, target, problems)
      target = getNamedType(target.getFields().edges!.type) as GraphQLNamedType
      target = getNamedType((target as GraphQLObjectType).getFields().node!.type)
      outputShape = shapeOf(unwrap(list!).base)
    }
    // A list answered as a success object ({ data: [...] }) compares its items.
    if (output.list && isObjectType(target) && target.getFields().data)
      target = getNamedType(target.getFields().data!.type)
    if (outputShape) compareOutputs(name, outputShape, target, problems)
    else problems.push(`${name}: output is not an object`)

    expect(problems).toEqual([])
  })

  it('a wrong field name is caught (the comparison can fail)', () => {
    const problems: string[] = []
    const fields = inputFieldsOf(schema.getType('AddMessageInput') as GraphQLInputObjectType)
    compareInputs(
      'addMessage',
      { ...catalog.addMessage.input.shape, contents: catalog.addMessage.input.shape.content },
      fields,
      {},
      problems,
    )
    expect(problems).toEqual(['addMessage.contents: in the catalog, not in GraphQL'])
  })

  it('marks every operation that removes data destructive, and no query as a write', () => {
    for (const name of OPERATION_NAMES) {
      const spec = catalog[name] as OperationSpec
      if (spec.kind !== 'mutation') expect(spec.readOnly, name).toBe(true)
      if (/^(delete|revoke|restore)/.test(name)) expect(spec.destructive, name).toBe(true)
      if (spec.destructive) expect(spec.readOnly, name).toBe(false)
    }
  })
})
