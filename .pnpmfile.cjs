// vitest lists @opentelemetry/api as an optional peer. prom-client (apps/api) brings that package
// into apps/api's tree, so pnpm gave apps/api its own copy of vitest, and the `declare module
// 'vitest'` augmentation of packages/test-servers (typed `inject('postgresUrl')`) no longer
// reached the copy apps/api's tests import. Engram does not use vitest's OpenTelemetry tracing:
// dropping the optional peer keeps one vitest for the whole workspace.
module.exports = {
  hooks: {
    readPackage(pkg) {
      if (pkg.name === 'vitest' && pkg.peerDependencies?.['@opentelemetry/api']) {
        delete pkg.peerDependencies['@opentelemetry/api']
        if (pkg.peerDependenciesMeta) delete pkg.peerDependenciesMeta['@opentelemetry/api']
      }
      return pkg
    },
  },
}
