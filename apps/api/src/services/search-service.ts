// Search lives in @engram/engine (packages/engine/src/search). This re-export keeps the app's
// imports of it (the schema, the services not moved yet, the API tests) where they were until
// the resolvers call the engine facade (docs/architecture.md, "What is left").
export * from '@engram/engine/search'
