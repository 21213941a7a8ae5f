/**
 * State an in-memory repository keeps, with transactions run one at a time (like SQLite's single
 * writer) that restore a copy of the state taken when they began if they throw.
 */
export class SerialState<S> {
  private queue: Promise<unknown> = Promise.resolve()

  constructor(public state: S) {}

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    const run = async () => {
      const before = structuredClone(this.state)
      try {
        return await fn()
      } catch (error) {
        this.state = before
        throw error
      }
    }
    const result = this.queue.then(run, run)
    this.queue = result.catch(() => undefined)
    return result
  }
}
