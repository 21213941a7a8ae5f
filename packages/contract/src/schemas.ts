// The contract's zod schemas, one file per role: enums (the GraphQL enums' values), fields (rules
// shared by several operations, with their limits), inputs (one flat argument object per client
// method) and outputs (what every door returns). The shared field rules stay internal.
export * from './schemas/context-builder.ts'
export * from './schemas/enums.ts'
export {
  AgentIdSchema,
  ConversationIdSchema,
  DateTimeSchema,
  ExtractionSettingsSchema,
  IdSchema,
  MetadataSchema,
  ProfileSettingsSchema,
  SummarySettingsSchema,
} from './schemas/fields.ts'
export * from './schemas/graph.ts'
export * from './schemas/inputs.ts'
export * from './schemas/maintenance.ts'
export * from './schemas/metrics.ts'
export * from './schemas/outputs.ts'
export * from './schemas/pools.ts'
export * from './schemas/runs.ts'
export * from './schemas/working-context.ts'
