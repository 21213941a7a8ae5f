import fs from 'node:fs'
import { catalog, type OperationName, type OperationSpec } from '@engram/contract'
import {
  buildSchema,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isObjectType,
  isUnionType,
} from 'graphql'
import type { z } from 'zod'

export const SCHEMA_FILE = new URL('../../../apps/api/schema.graphql', import.meta.url)
export const DOCUMENTS_FILE = new URL('../src/operations.graphql', import.meta.url)

type Def = { type: string; innerType?: z.ZodType; element?: z.ZodType }
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def

function base(schema: z.ZodType): z.ZodType {
  let current = schema
  for (;;) {
    const def = defOf(current)
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default')
      current = def.innerType as z.ZodType
    else if (def.type === 'array') current = def.element as z.ZodType
    else return current
  }
}

/** The selection set of a catalog output: exactly its fields, nested objects included. */
function selection(schema: z.ZodType, indent: string): string {
  const root = base(schema)
  if (defOf(root).type !== 'object') return ''
  const lines = Object.entries((root as z.ZodObject).shape).map(([name, field]) => {
    const inner = base(field as z.ZodType)
    const isObject = defOf(inner).type === 'object'
    return isObject
      ? `${indent}${name} {\n${selection(inner, `${indent}  `)}${indent}}\n`
      : `${indent}${name}\n`
  })
  return lines.join('')
}

const ERROR_SELECTION = (indent: string) =>
  [
    `... on Error { code message }`,
    `... on ValidationError { issues { field message limit } }`,
    `... on NotFoundError { resource notFoundId: id }`,
  ]
    .map((line) => `${indent}${line}\n`)
    .join('')

function pascal(name: string) {
  return name.charAt(0).toUpperCase() + name.slice(1)
}

function operationDocument(schema: GraphQLSchema, name: OperationName): string {
  const spec = catalog[name] as OperationSpec
  const root =
    spec.kind === 'query'
      ? schema.getQueryType()
      : spec.kind === 'mutation'
        ? schema.getMutationType()
        : schema.getSubscriptionType()
  const field = root?.getFields()[spec.graphql.field] as GraphQLField<unknown, unknown>
  // Only the arguments the catalog sends: a fixed one (the profile's sections) travels inside input.
  const args = spec.graphql.inputArg
    ? field.args.filter((a) => a.name === 'input')
    : field.args.filter((a) => a.name in spec.input.shape)
  const variables = args.length ? `(${args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ')})` : ''
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : ''

  const named = getNamedType(field.type) as GraphQLNamedType
  let body: string
  const inner = '      '
  const output = spec.output
  if (isUnionType(named)) {
    const success = named.getTypes().find((t) => !t.getInterfaces().some((i) => i.name === 'Error'))
    if (!success) throw new Error(`${named.name} has no success member`)
    let successBody: string
    if (spec.graphql.connection) {
      const { [spec.graphql.connection]: list, ...rest } = (base(output) as z.ZodObject).shape
      const restSelection = Object.entries(rest)
        .map(([key, value]) => {
          const nested = selection(value as z.ZodType, `${inner}    `)
          return nested ? `${inner}  ${key} {\n${nested}${inner}  }\n` : `${inner}  ${key}\n`
        })
        .join('')
      successBody = `${restSelection}${inner}  edges {\n${inner}    node {\n${selection(list as z.ZodType, `${inner}      `)}${inner}    }\n${inner}  }\n`
    } else if (
      isObjectType(success) &&
      success.getFields().data &&
      !('data' in (base(output) as z.ZodObject).shape)
    ) {
      successBody = `${inner}  data {\n${selection(output, `${inner}    `)}${inner}  }\n`
    } else {
      successBody = selection(output, `${inner}  `)
    }
    body = `${inner}__typename\n${ERROR_SELECTION(inner)}${inner}... on ${success.name} {\n${successBody}${inner}}\n`
  } else {
    body = selection(output, inner)
  }
  return `${spec.kind} ${pascal(name)}${variables} {\n    result: ${spec.graphql.field}${call} {\n${body}    }\n}\n`
}

/** One document per catalog operation, each answering under the alias `result`. */
export function renderDocuments(): string {
  const schema = buildSchema(fs.readFileSync(SCHEMA_FILE, 'utf8'))
  const header =
    "# Generated from @engram/contract's catalog and apps/api/schema.graphql by scripts/write-documents.ts\n# (pnpm --filter @engram/sdk generate). Do not edit: documents.test.ts fails when it is stale.\n\n"
  return (
    header + (Object.keys(catalog) as OperationName[]).map((n) => operationDocument(schema, n)).join('\n')
  )
}
