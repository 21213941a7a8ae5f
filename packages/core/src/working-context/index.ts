export * from './rules.ts'
export * from './working-context.ts'
