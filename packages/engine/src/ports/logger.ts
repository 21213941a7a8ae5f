/** Where the engine reports what an operator should see (failed jobs, optimizer runs); console fits. */
export interface Logger {
  info(...args: unknown[]): void
  warn(...args: unknown[]): void
  error(...args: unknown[]): void
}

/** For tests and embedded use that want silence. */
export const SILENT_LOGGER: Logger = { info() {}, warn() {}, error() {} }
