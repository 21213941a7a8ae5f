import type { CodegenConfig } from '@graphql-codegen/cli'

/**
 * Types and typed documents from the API's printed schema and the SDK's documents (themselves
 * written from the catalog). Documents travel as strings, so the published client needs no
 * graphql-js at run time.
 */
const config: CodegenConfig = {
  schema: '../../apps/api/schema.graphql',
  documents: 'src/operations.graphql',
  generates: {
    'src/generated/graphql.ts': {
      plugins: ['typescript-operations', 'typed-document-node'],
      config: {
        documentMode: 'string',
        enumsAsTypes: true,
        avoidOptionals: { field: true, inputValue: false, object: true },
        strictScalars: true,
        scalars: { DateTime: 'string', JSON: 'Record<string, unknown>' },
        useTypeImports: true,
        skipTypename: false,
        nonOptionalTypename: true,
      },
    },
  },
}

export default config
