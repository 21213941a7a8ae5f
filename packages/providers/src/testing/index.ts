// Test support for code that talks to model services: a local OpenAI-protocol server and a clock
// whose timers the test moves. Shipped as `@engram/providers/testing` so the API's embedder tests
// and this package's tests share one copy.
export * from './manual-clock.ts'
export * from './openai-server.ts'
