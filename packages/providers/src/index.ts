// Adapters to model services (issue 13 §1): what reaches a network endpoint or a model's files.
// The engine sees them only through core's ports (Embedder, LlmProvider); the doors and the
// embedded SDK choose and configure them.

export * from './openai-http.ts'
export * from './openai-llm.ts'
export * from './resilience.ts'
export * from './wordnet-lexicon.ts'
