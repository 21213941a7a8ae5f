import { type Clock, createTokenCounter, seededRandom } from '@engram/core'
import { createEngine, type EngineDeps } from '../engine.ts'
import type { RunEvent } from '../ports/event-bus.ts'
import { createInMemoryStorage } from '../testing/index.ts'

// The trajectory tests' engine: in-memory storage, a clock the test moves, seeded ids, and the
// 'run:event' topic recorded as it is published. (A test helper: not exported by the package.)

export const START = Date.parse('2026-03-10T09:00:00.000Z')
export const SHOP = 'shop.example.com'

export async function trajectoryEngine(
  options: Pick<EngineDeps, 'trajectoryRules' | 'trajectoryLimits'> = {},
) {
  let now = START
  const clock: Clock = { now: () => new Date(now) }
  const engine = createEngine({
    storage: createInMemoryStorage(clock),
    clock,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {} },
    optimizer: { intervalMs: 0 },
    random: seededRandom(42),
    ...options,
  })
  await engine.agents.createAgent('agent-a')
  await engine.agents.createAgent('agent-b')
  const events: RunEvent[] = []
  const subscription = engine.events.subscribe('run:event')[Symbol.asyncIterator]()
  void (async () => {
    for (;;) {
      const step = await subscription.next()
      if (step.done) return
      events.push(step.value)
    }
  })()
  return {
    engine,
    runs: engine.runs,
    memory: engine.runMemory,
    events,
    /** Moves the clock on by `ms`. */
    advance(ms: number) {
      now += ms
    },
    /** Lets the event recorder catch up with what was published. */
    settle: () => new Promise<void>((resolve) => setImmediate(resolve)),
    close: () => subscription.return?.(),
  }
}
