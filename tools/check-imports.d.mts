// Types for tools/check-imports.mjs, so the conformance package's test of the rules type-checks.
export interface ImportRule {
  package: string
  why: string
  forbid: string[]
}
export interface ImportProblem {
  file: string
  import: string
  why: string
}
export const RULES: ImportRule[]
export function importsOf(text: string): string[]
export function checkImports(root?: string, rules?: ImportRule[]): ImportProblem[]
