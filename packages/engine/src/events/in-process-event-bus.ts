import type { EngramEvents, EventBus } from '../ports/event-bus.ts'

/**
 * Publish/subscribe inside one process (embedded use, tests). Each subscriber has its own queue, so
 * a slow reader never makes another miss an event; events published before a subscription are not
 * replayed. Once several processes share a store, a networked bus replaces it.
 */
export class InProcessEventBus<Events extends Record<string, unknown[]> = EngramEvents>
  implements EventBus<Events>
{
  private readonly subscribers = new Map<string, Set<(event: unknown) => void>>()

  publish<Topic extends keyof Events & string>(topic: Topic, ...args: Events[Topic]): void {
    for (const deliver of this.subscribers.get(topic) ?? []) deliver(args[0])
  }

  subscribe<Topic extends keyof Events & string>(topic: Topic): AsyncIterableIterator<Events[Topic][0]> {
    type Event = Events[Topic][0]
    const queued: Event[] = []
    let waiting: ((result: IteratorResult<Event>) => void) | null = null
    let done = false
    const deliver = (event: unknown) => {
      if (waiting) {
        const resolve = waiting
        waiting = null
        resolve({ value: event as Event, done: false })
      } else queued.push(event as Event)
    }
    const set = this.subscribers.get(topic) ?? new Set()
    set.add(deliver)
    this.subscribers.set(topic, set)
    const stop = (): IteratorResult<Event> => {
      done = true
      set.delete(deliver)
      waiting?.({ value: undefined, done: true })
      waiting = null
      return { value: undefined, done: true }
    }
    return {
      next: () => {
        if (queued.length > 0) return Promise.resolve({ value: queued.shift() as Event, done: false })
        if (done) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve) => {
          waiting = resolve
        })
      },
      return: () => Promise.resolve(stop()),
      [Symbol.asyncIterator]() {
        return this
      },
    }
  }

  /** Subscribers of a topic now (for tests: nothing leaks after an iterator is closed). */
  subscriberCount(topic: keyof Events & string): number {
    return this.subscribers.get(topic)?.size ?? 0
  }
}
