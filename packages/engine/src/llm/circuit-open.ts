/**
 * The providers package's CircuitOpenError, recognised by name: the engine imports no adapter
 * package, and any provider may report an open circuit the same way. Formation, summaries and the
 * profile fall back to their offline path on it.
 */
export function isCircuitOpen(error: unknown): boolean {
  return error instanceof Error && error.name === 'CircuitOpenError'
}
